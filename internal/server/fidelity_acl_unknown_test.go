package server

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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

// TestACLAnswersToUndefinedCodes checks, with an authorizer, Kafka 4.4's
// answers to codes it does not define (42), measured against a Kafka node
// (the entry-filter message is AclControlManager's second check):
// DescribeAcls matches no ACL and answers NONE with an empty message;
// CreateAcls names the element UNKNOWN; DeleteAcls says which filter part
// is unknown; a created ACL's result carries an empty message.
func TestACLAnswersToUndefinedCodes(t *testing.T) {
	tn := startTestNode(t, "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users=User:ANONYMOUS")
	ctx := testContext(t)
	client := tn.client()

	create := kmsg.NewPtrCreateACLsRequest()
	for _, operation := range []kmsg.ACLOperation{kmsg.ACLOperationRead, 42} {
		creation := kmsg.NewCreateACLsRequestCreation()
		creation.ResourceType, creation.ResourceName, creation.Principal, creation.Host = kmsg.ACLResourceTypeTopic, "t", "User:a", "*"
		creation.Operation, creation.PermissionType = operation, kmsg.ACLPermissionTypeAllow
		create.Creations = append(create.Creations, creation)
	}
	created, err := create.RequestWith(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	if r := created.Results[0]; r.ErrorCode != 0 || r.ErrorMessage == nil || *r.ErrorMessage != "" {
		t.Errorf("created ACL: %v %v, want NONE with an empty message", r.ErrorCode, r.ErrorMessage)
	}
	if r := created.Results[1]; r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != "Invalid operation UNKNOWN" {
		t.Errorf("operation 42: %v %v, want INVALID_REQUEST \"Invalid operation UNKNOWN\"", r.ErrorCode, r.ErrorMessage)
	}

	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.ResourceType, describe.ResourcePatternType = 42, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	described, err := describe.RequestWith(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	if described.ErrorCode != 0 || described.ErrorMessage == nil || *described.ErrorMessage != "" || len(described.Resources) != 0 {
		t.Errorf("describe resource type 42: %+v, want NONE, no resources", described)
	}

	deleteRequest := kmsg.NewPtrDeleteACLsRequest()
	for _, f := range []struct {
		resourceType kmsg.ACLResourceType
		permission   kmsg.ACLPermissionType
	}{{42, kmsg.ACLPermissionTypeAny}, {kmsg.ACLResourceTypeAny, 42}} {
		filter := kmsg.NewDeleteACLsRequestFilter()
		filter.ResourceType, filter.ResourcePatternType = f.resourceType, kmsg.ACLResourcePatternTypeAny
		filter.Operation, filter.PermissionType = kmsg.ACLOperationAny, f.permission
		deleteRequest.Filters = append(deleteRequest.Filters, filter)
	}
	deleted, err := deleteRequest.RequestWith(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"Unknown patternFilter.", "Unknown entryFilter."} {
		if r := deleted.Results[i]; r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != want {
			t.Errorf("delete filter %d: %v %v, want INVALID_REQUEST %q", i, r.ErrorCode, r.ErrorMessage, want)
		}
	}
	stillServes(t, tn)
}
