package server

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// sarama's ACL admin calls against an authorizing node: create, list with
// a filter, delete.
func TestACLsWithSarama(t *testing.T) {
	env := newMatrixEnv(t, "User:ANONYMOUS", "super.users=User:ANONYMOUS")
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	admin, err := sarama.NewClusterAdmin([]string{env.tn.addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	err = admin.CreateACLs([]*sarama.ResourceAcls{{
		Resource: sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: "orders", ResourcePatternType: sarama.AclPatternLiteral},
		Acls: []*sarama.Acl{
			{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionAllow},
			{Principal: "User:bob", Host: "10.0.0.2", Operation: sarama.AclOperationWrite, PermissionType: sarama.AclPermissionDeny},
		},
	}})
	if err != nil {
		t.Fatalf("CreateACLs: %v", err)
	}
	name := "orders"
	listed, err := admin.ListAcls(sarama.AclFilter{ResourceType: sarama.AclResourceTopic, ResourceName: &name,
		ResourcePatternTypeFilter: sarama.AclPatternMatch, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny})
	if err != nil {
		t.Fatalf("ListAcls: %v", err)
	}
	if len(listed) != 1 || len(listed[0].Acls) != 2 {
		t.Fatalf("ListAcls: %+v", listed)
	}
	bob := "User:bob"
	matched, err := admin.DeleteACL(sarama.AclFilter{ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny,
		Principal: &bob, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}, false)
	if err != nil {
		t.Fatalf("DeleteACL: %v", err)
	}
	if len(matched) != 1 || matched[0].Principal != "User:bob" {
		t.Fatalf("DeleteACL matched %+v", matched)
	}
	if n := env.tn.node.controller.Image().ACLs().Len(); n != 1 {
		t.Fatalf("%d ACLs left, want 1", n)
	}
}

// DescribeCluster's KIP-430 cluster operations: 0 without DESCRIBE on the
// cluster, the allowed operations' bits with it.
func TestAuthorizationDescribeClusterOperations(t *testing.T) {
	p := "User:ANONYMOUS"
	env := newMatrixEnv(t, p)
	ops := func() int32 {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeClusterAuthorizedOperations = true
		return env.send(req).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations
	}
	if got := ops(); got != 0 {
		t.Fatalf("without DESCRIBE: %b", got)
	}
	env.setACLs([]authz.Binding{allow(p, authz.ResourceCluster, authz.ClusterName, authz.OpAlter),
		allow(p, authz.ResourceCluster, authz.ClusterName, authz.OpIdempotentWrite)})
	want := int32(1<<authz.OpAlter | 1<<authz.OpDescribe | 1<<authz.OpIdempotentWrite)
	if got := ops(); got != want {
		t.Fatalf("with ALTER and IDEMPOTENT_WRITE: %b, want %b", got, want)
	}
}
