package controller

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The controller's token decisions, step by step with explicit times:
// lifetimes and expiries are capped as Kafka caps them, only the owner,
// requester and renewers may renew or expire, a token past its expiry
// cannot be renewed, a negative expiry period removes it, and the sweep
// removes what has expired. A replica replaying the journal agrees.
func TestDelegationTokenDecisions(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 1)
	ctx := context.Background()
	limits := TokenLimits{MaxLifetimeMs: 10_000, RenewMs: 1_000}
	const now = 1_000_000

	token, code := c.CreateDelegationToken(ctx, now, limits, TokenCreation{Owner: "User:alice", Requester: "User:admin",
		Renewers: []string{"User:bob"}, MaxLifetimeMs: 50_000})
	if code != 0 || len(token.TokenID) != 22 {
		t.Fatalf("create: %+v, code %d", token, code)
	}
	if token.IssueTimestamp != now || token.MaxTimestamp != now+10_000 || token.ExpirationTimestamp != now+1_000 {
		t.Fatalf("timestamps: %+v (max lifetime and first expiry must be capped)", token)
	}
	if stored, ok := c.Image().DelegationToken(token.TokenID); !ok || stored.Owner != "User:alice" || stored.Requester != "User:admin" {
		t.Fatalf("image token: %+v %v", stored, ok)
	}

	if _, code := c.RenewDelegationToken(ctx, now+10, limits, token.TokenID, "User:mallory", -1); code != kerr.DelegationTokenOwnerMismatch.Code {
		t.Fatalf("renew by a stranger: code %d", code)
	}
	if _, code := c.RenewDelegationToken(ctx, now+10, limits, "no-such-token", "User:alice", -1); code != kerr.DelegationTokenNotFound.Code {
		t.Fatalf("renew of an unknown token: code %d", code)
	}
	expiry, code := c.RenewDelegationToken(ctx, now+500, limits, token.TokenID, "User:bob", -1)
	if code != 0 || expiry != now+1_500 {
		t.Fatalf("renew by a renewer: expiry %d code %d, want %d", expiry, code, now+1_500)
	}
	expiry, code = c.RenewDelegationToken(ctx, now+600, limits, token.TokenID, "User:admin", 1_000_000)
	if code != 0 || expiry != now+10_000 {
		t.Fatalf("renew past the maximum: expiry %d code %d, want the maximum %d", expiry, code, now+10_000)
	}
	if _, code := c.RenewDelegationToken(ctx, now+10_001, limits, token.TokenID, "User:alice", -1); code != kerr.DelegationTokenExpired.Code {
		t.Fatalf("renew after the maximum: code %d", code)
	}

	second, _ := c.CreateDelegationToken(ctx, now, limits, TokenCreation{Owner: "User:carol", Requester: "User:carol"})
	if second.MaxTimestamp != now+10_000 {
		t.Fatalf("default max lifetime: %+v", second)
	}
	expiry, code = c.ExpireDelegationToken(ctx, now+100, second.TokenID, "User:carol", 200)
	if code != 0 || expiry != now+300 {
		t.Fatalf("expire later: expiry %d code %d", expiry, code)
	}
	if _, code := c.ExpireDelegationToken(ctx, now+100, second.TokenID, "User:alice", -1); code != kerr.DelegationTokenOwnerMismatch.Code {
		t.Fatalf("expire by another owner: code %d", code)
	}
	if _, code := c.ExpireDelegationToken(ctx, now+100, second.TokenID, "User:carol", -1); code != 0 {
		t.Fatalf("expire now: code %d", code)
	}
	if _, ok := c.Image().DelegationToken(second.TokenID); ok {
		t.Fatal("a token expired now is still in the image")
	}

	removed, err := c.RemoveExpiredDelegationTokens(ctx, now+9_999)
	if err != nil || removed != 0 {
		t.Fatalf("sweep before expiry: removed %d, %v", removed, err)
	}
	removed, err = c.RemoveExpiredDelegationTokens(ctx, now+10_001)
	if err != nil || removed != 1 || len(c.Image().DelegationTokens()) != 0 {
		t.Fatalf("sweep after expiry: removed %d, %v, left %d", removed, err, len(c.Image().DelegationTokens()))
	}

	replica := New(Config{NodeID: 2}, &memJournal{})
	j.replay(t, replica)
	if len(replica.Image().DelegationTokens()) != 0 {
		t.Fatalf("replica has %d tokens", len(replica.Image().DelegationTokens()))
	}
}
