package server

import (
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
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

// ListTransactions lists only the transactional ids the principal may
// describe, and DescribeTransactions denies the others.
func TestAuthorizationListTransactionsFilters(t *testing.T) {
	p := "User:ANONYMOUS"
	env := newMatrixEnv(t, p)
	denyDescribe := allow(p, authz.ResourceTransactionalID, "hidden-txn", authz.OpDescribe)
	denyDescribe.Permission = authz.PermissionDeny
	env.setACLs([]authz.Binding{
		allow(p, authz.ResourceTransactionalID, "seen-txn", authz.OpWrite),
		allow(p, authz.ResourceTransactionalID, "hidden-txn", authz.OpWrite),
		denyDescribe,
	})
	// FindCoordinator creates __transaction_state, as a client's first
	// request does; hidden-txn may not even find its coordinator.
	if code := findCoordinatorCode(env.send(findCoordinator(1, "hidden-txn"))); code != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("FindCoordinator for hidden-txn: %v", kerr.ErrorForCode(code))
	}
	eventually(t, 30*time.Second, "a transaction coordinator", func() bool {
		return findCoordinatorCode(env.send(findCoordinator(1, "seen-txn"))) == 0
	})
	for _, id := range []string{"seen-txn", "hidden-txn"} {
		eventually(t, 30*time.Second, "InitProducerId for "+id, func() bool {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID, req.TransactionTimeoutMillis = strp(id), 60000
			return env.send(req).(*kmsg.InitProducerIDResponse).ErrorCode == 0
		})
	}
	resp := env.send(kmsg.NewPtrListTransactionsRequest()).(*kmsg.ListTransactionsResponse)
	var listed []string
	for _, st := range resp.TransactionStates {
		listed = append(listed, st.TransactionalID)
	}
	if resp.ErrorCode != 0 || !slices.Equal(listed, []string{"seen-txn"}) {
		t.Fatalf("ListTransactions: %v %v", kerr.ErrorForCode(resp.ErrorCode), listed)
	}
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"seen-txn", "hidden-txn"}
	states := env.send(dreq).(*kmsg.DescribeTransactionsResponse).TransactionStates
	if states[0].ErrorCode != 0 || states[1].ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("DescribeTransactions: %v, %v", kerr.ErrorForCode(states[0].ErrorCode), kerr.ErrorForCode(states[1].ErrorCode))
	}
}
