package server

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestACLRequestsWithUnknownElementsCloseTheConnection sends CreateAcls,
// DescribeAcls and DeleteAcls carrying an UNKNOWN (0) element, the empty
// DescribeAcls request among them: Kafka 4.4 fails to parse each and
// closes the connection without an answer, even on a node with no
// authorizer, and keeps serving.
func TestACLRequestsWithUnknownElementsCloseTheConnection(t *testing.T) {
	tn := startTestNode(t)

	emptyDescribe := kmsg.NewPtrDescribeACLsRequest()
	unknownOperation := kmsg.NewPtrDescribeACLsRequest()
	unknownOperation.ResourceType, unknownOperation.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	unknownOperation.PermissionType = kmsg.ACLPermissionTypeAny
	create := kmsg.NewPtrCreateACLsRequest()
	creation := kmsg.NewCreateACLsRequestCreation()
	creation.ResourceType, creation.ResourceName, creation.Principal, creation.Host = kmsg.ACLResourceTypeTopic, "t", "User:a", "*"
	creation.Operation = kmsg.ACLOperationRead // permission left UNKNOWN
	create.Creations = append(create.Creations, creation)
	deleteRequest := kmsg.NewPtrDeleteACLsRequest()
	filter := kmsg.NewDeleteACLsRequestFilter()
	filter.ResourcePatternType = kmsg.ACLResourcePatternTypeAny // resource type left UNKNOWN
	filter.Operation, filter.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	deleteRequest.Filters = append(deleteRequest.Filters, filter)

	for _, tc := range []struct {
		name string
		req  kmsg.Request
	}{
		{"empty DescribeAcls", emptyDescribe},
		{"DescribeAcls with an UNKNOWN operation", unknownOperation},
		{"CreateAcls with an UNKNOWN permission", create},
		{"DeleteAcls with an UNKNOWN resource type", deleteRequest},
	} {
		for _, version := range []int16{1, 3} {
			conn, err := net.DialTimeout("tcp", tn.addr(), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			rc := &rawConn{t: t, conn: conn}
			rc.request(tc.req, version)
			if body, err := rc.readFrame(); err == nil {
				t.Errorf("%s v%d: answered %d bytes, want the connection closed", tc.name, version, len(body))
			} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("%s v%d: neither answered nor closed", tc.name, version)
			}
			conn.Close()
		}
	}
	stillServes(t, tn)
}
