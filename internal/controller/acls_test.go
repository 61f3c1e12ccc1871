package controller

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func TestACLDecisions(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 1)
	ctx := context.Background()
	read := authz.Binding{ResourceType: authz.ResourceTopic, ResourceName: "orders", PatternType: authz.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: authz.OpRead, Permission: authz.PermissionAllow}
	write := read
	write.Operation = authz.OpWrite
	bad := read
	bad.Principal = "alice"
	got := c.CreateACLs(ctx, []authz.Binding{read, write, bad, read})
	if got[0].ErrorCode != 0 || got[1].ErrorCode != 0 || got[2].ErrorCode != kerr.InvalidRequest.Code || got[3].ErrorCode != 0 {
		t.Fatalf("create results: %+v", got)
	}
	if n := c.Image().ACLs().Len(); n != 2 {
		t.Fatalf("%d ACLs after create, want 2 (duplicate kept once)", n)
	}
	// Creating an existing ACL again writes nothing.
	entries := len(j.entries)
	if got := c.CreateACLs(ctx, []authz.Binding{read}); got[0].ErrorCode != 0 || len(j.entries) != entries {
		t.Fatalf("re-create: %+v, %d new entries", got, len(j.entries)-entries)
	}
	// A replica replaying the journal builds the same ACLs.
	replica := New(Config{NodeID: 2}, &memJournal{})
	j.replay(t, replica)
	if replica.Image().ACLs().Len() != 2 {
		t.Fatalf("replica has %d ACLs", replica.Image().ACLs().Len())
	}
	orders := "orders"
	delete := c.DeleteACLs(ctx, []authz.Filter{
		{ResourceType: authz.ResourceTopic, ResourceName: &orders, PatternType: authz.PatternMatch, Operation: authz.OpRead, Permission: authz.PermissionAny},
		authz.MatchAll,
		{ResourceType: authz.ResourceUnknown, PatternType: authz.PatternAny, Operation: authz.OpAny, Permission: authz.PermissionAny},
	})
	if len(delete[0].Deleted) != 1 || delete[0].Deleted[0] != read || len(delete[1].Deleted) != 1 || delete[1].Deleted[0] != write ||
		delete[2].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("delete results: %+v", delete)
	}
	if n := c.Image().ACLs().Len(); n != 0 {
		t.Fatalf("%d ACLs after delete", n)
	}
}
