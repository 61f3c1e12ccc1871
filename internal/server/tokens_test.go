package server

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/security"
)

const tokenSecretKey = "token-Secret-0b7e"

// tokenAuth is the SCRAM mechanism of a delegation token.
func tokenAuth(token kadm.DelegationToken) scram.Auth {
	return scram.Auth{User: token.TokenID, Pass: security.TokenPassword(token.HMAC), IsToken: true}
}

// TestDelegationTokensWithFranzGo drives delegation tokens with kadm on a
// SASL node with the authorizer on, and authenticates with them through
// franz-go's SCRAM (IsToken): the owner/renewer rules, CREATE_TOKENS and
// DESCRIBE_TOKENS on USER resources (KIP-373), the connections that may not
// ask for tokens, and a token that expires ending the sessions it opened.
func TestDelegationTokensWithFranzGo(t *testing.T) {
	sn := startSASLNode(t, "delegation.token.secret.key="+tokenSecretKey,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users=User:admin",
		"delegation.token.expiry.check.interval.ms=100")
	ctx := testContext(t)
	adminClient := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism())
	admin := kadm.NewClient(adminClient)
	mustCreateTopic(t, admin, "tokens", 1, nil)
	for _, user := range []string{"bob", "carol"} {
		altered, err := admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: saslBobPassword}})
		if err != nil || altered.Error() != nil {
			t.Fatalf("create user %s: %v %v", user, err, altered.Error())
		}
	}
	bob := kadm.NewClient(sn.client(t, scram.Auth{User: "bob", Pass: saslBobPassword}.AsSha512Mechanism()))
	carol := kadm.NewClient(sn.client(t, scram.Auth{User: "carol", Pass: saslBobPassword}.AsSha512Mechanism()))

	// admin's own token, with bob as a renewer.
	token, err := admin.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Type: "User", Name: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	if token.Owner.Name != "admin" || len(token.HMAC) != 64 || !token.ExpiryTimestamp.After(time.Now()) ||
		token.MaxTimestamp.Sub(token.IssueTimestamp) != 7*24*time.Hour || token.ExpiryTimestamp.Sub(token.IssueTimestamp) != 24*time.Hour {
		t.Fatalf("token %+v", token)
	}

	// The token authenticates as its owner (a super user, so the produce
	// is authorized), and a token session may not ask for tokens.
	asToken := sn.client(t, tokenAuth(token).AsSha512Mechanism(), kgo.DefaultProduceTopic("tokens"))
	if err := asToken.ProduceSync(ctx, &kgo.Record{Value: []byte("by token")}).FirstErr(); err != nil {
		t.Fatalf("produce as token: %v", err)
	}
	if _, err := kadm.NewClient(asToken).CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("create from a token session: %v, want DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", err)
	}
	sha256 := sn.client(t, tokenAuth(token).AsSha256Mechanism())
	if err := sha256.Ping(ctx); err != nil {
		t.Fatalf("token over SCRAM-SHA-256: %v", err)
	}
	wrong := tokenAuth(token)
	wrong.Pass = security.TokenPassword([]byte("not the hmac"))
	if err := sn.client(t, wrong.AsSha512Mechanism()).Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong HMAC: %v, want SASL_AUTHENTICATION_FAILED", err)
	}

	// PLAINTEXT connections may not ask for tokens.
	plaintext, err := kgo.NewClient(kgo.SeedBrokers(sn.node.Addrs()[0].String()))
	if err != nil {
		t.Fatal(err)
	}
	defer plaintext.Close()
	if _, err := kadm.NewClient(plaintext).DescribeDelegationTokens(ctx); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("describe over PLAINTEXT: %v, want DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", err)
	}

	// Describe: admin (super) sees it; bob, a renewer, sees it; carol sees
	// nothing until she may DESCRIBE_TOKENS of User:admin.
	for name, who := range map[string]*kadm.Client{"admin": admin, "bob": bob} {
		tokens, err := who.DescribeDelegationTokens(ctx)
		if err != nil || len(tokens) != 1 || tokens[0].TokenID != token.TokenID || string(tokens[0].HMAC) != string(token.HMAC) {
			t.Fatalf("%s describes %+v, %v", name, tokens, err)
		}
	}
	if tokens, err := carol.DescribeDelegationTokens(ctx); err != nil || len(tokens) != 0 {
		t.Fatalf("carol describes %+v, %v; want nothing", tokens, err)
	}
	// kadm has no USER resources; the ACL goes as a raw request.
	grant := func(op kmsg.ACLOperation, user string) {
		t.Helper()
		req := kmsg.NewPtrCreateACLsRequest()
		creation := kmsg.NewCreateACLsRequestCreation()
		creation.ResourceType, creation.ResourceName, creation.ResourcePatternType = kmsg.ACLResourceTypeUser, user, kmsg.ACLResourcePatternTypeLiteral
		creation.Principal, creation.Host, creation.Operation, creation.PermissionType = "User:carol", "*", op, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, creation)
		resp, err := req.RequestWith(ctx, adminClient)
		if err != nil || len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
			t.Fatalf("grant %v on %s: %v %+v", op, user, err, resp)
		}
	}
	grant(kmsg.ACLOperationDescribeTokens, "User:admin")
	waitFor(t, 10*time.Second, "carol to describe admin's token", func() bool {
		tokens, err := carol.DescribeDelegationTokens(ctx)
		return err == nil && len(tokens) == 1
	})
	if tokens, _ := carol.DescribeDelegationTokens(ctx, kadm.Principal{Type: "User", Name: "nobody"}); len(tokens) != 0 {
		t.Fatalf("owner filter: %+v", tokens)
	}

	// Renew and expire: only the owner, requester and renewers.
	if _, err := carol.RenewDelegationToken(ctx, token.HMAC, time.Hour); !errors.Is(err, kerr.DelegationTokenOwnerMismatch) {
		t.Fatalf("carol renews: %v, want DELEGATION_TOKEN_OWNER_MISMATCH", err)
	}
	if _, err := bob.RenewDelegationToken(ctx, []byte("no such hmac"), time.Hour); !errors.Is(err, kerr.DelegationTokenNotFound) {
		t.Fatalf("renew unknown: %v, want DELEGATION_TOKEN_NOT_FOUND", err)
	}
	expiry, err := bob.RenewDelegationToken(ctx, token.HMAC, 2*time.Hour)
	if err != nil || expiry.Sub(time.Now()) < 110*time.Minute {
		t.Fatalf("bob renews: %v, %v", expiry, err)
	}

	// A token for another owner needs CREATE_TOKENS on that user.
	if _, err := carol.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Type: "User", Name: "bob"}}); !errors.Is(err, kerr.DelegationTokenAuthorizationFailed) {
		t.Fatalf("carol creates for bob: %v, want DELEGATION_TOKEN_AUTHORIZATION_FAILED", err)
	}
	grant(kmsg.ACLOperationCreateTokens, "User:bob")
	var bobs kadm.DelegationToken
	waitFor(t, 10*time.Second, "carol to create bob's token", func() bool {
		bobs, err = carol.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Type: "User", Name: "bob"}, MaxLifetime: time.Hour})
		return err == nil
	})
	if bobs.Owner.Name != "bob" || bobs.TokenRequesterPrincipal.Name != "carol" || bobs.MaxTimestamp.Sub(bobs.IssueTimestamp) != time.Hour {
		t.Fatalf("bob's token %+v", bobs)
	}
	if _, err := carol.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Type: "Group", Name: "ops"}}}); !errors.Is(err, kerr.InvalidPrincipalType) {
		t.Fatalf("a Group renewer: %v, want INVALID_PRINCIPAL_TYPE", err)
	}

	// Expiring bob's token now ends the session it opened and every later
	// login with it.
	asBob := sn.client(t, tokenAuth(bobs).AsSha512Mechanism(), kgo.RequestRetries(0))
	if err := asBob.Ping(ctx); err != nil {
		t.Fatalf("bob's token: %v", err)
	}
	if _, err := carol.ExpireDelegationToken(ctx, bobs.HMAC, -time.Millisecond); err != nil {
		t.Fatalf("carol, the requester, expires bob's token: %v", err)
	}
	if _, ok := sn.node.controller.Image().DelegationToken(bobs.TokenID); ok {
		t.Fatal("an expired token is still in the image")
	}
	if err := asBob.Ping(ctx); err == nil {
		t.Fatal("a session of an expired token is still served")
	}

	// A short-lived token is swept from the metadata log once it expires.
	short, err := admin.CreateDelegationToken(ctx, kadm.CreateDelegationToken{MaxLifetime: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the expired token to be swept", func() bool {
		_, ok := sn.node.controller.Image().DelegationToken(short.TokenID)
		return !ok
	})
}

// TestDelegationTokensDisabled: without delegation.token.secret.key every
// token request answers DELEGATION_TOKEN_AUTH_DISABLED.
func TestDelegationTokensDisabled(t *testing.T) {
	sn := startSASLNode(t)
	ctx := testContext(t)
	admin := kadm.NewClient(sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism()))
	if _, err := admin.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenAuthDisabled) {
		t.Fatalf("create: %v, want DELEGATION_TOKEN_AUTH_DISABLED", err)
	}
	if _, err := admin.DescribeDelegationTokens(ctx); !errors.Is(err, kerr.DelegationTokenAuthDisabled) {
		t.Fatalf("describe: %v, want DELEGATION_TOKEN_AUTH_DISABLED", err)
	}
	if _, err := admin.RenewDelegationToken(ctx, []byte("x"), time.Hour); !errors.Is(err, kerr.DelegationTokenAuthDisabled) {
		t.Fatalf("renew: %v, want DELEGATION_TOKEN_AUTH_DISABLED", err)
	}
}
