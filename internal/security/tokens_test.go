package security

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// tokenStore serves one delegation token besides memoryStore's users.
type tokenStore struct {
	memoryStore
	tokens    *TokenCredentials
	tokenID   string
	owner     string
	expiresAt time.Time
	standing  bool
}

func (s *tokenStore) DelegationTokenCredential(tokenID string, m ScramMechanism) (ScramCredential, TokenInfo, bool) {
	if tokenID != s.tokenID || !s.standing {
		return ScramCredential{}, TokenInfo{}, false
	}
	c, err := s.tokens.Credential(tokenID, m)
	if err != nil {
		return ScramCredential{}, TokenInfo{}, false
	}
	return c, TokenInfo{Owner: s.owner, ExpiresAt: s.expiresAt, Valid: func() bool { return s.standing }}, true
}

// franz-go's SCRAM client with IsToken authenticates a delegation token:
// the principal is the token's owner, the connection is marked token
// authenticated, the session ends at the token's expiry, and ends at once
// when the token goes. A wrong HMAC, an unknown token, or the token id used
// as a plain SCRAM user fail alike.
func TestScramTokenAuthentication(t *testing.T) {
	secret := []byte("cluster-token-secret")
	expiresAt := time.Now().Add(time.Hour)
	store := &tokenStore{memoryStore: memoryStore{}, tokens: NewTokenCredentials(secret), tokenID: "tok-1",
		owner: "User:alice", expiresAt: expiresAt, standing: true}
	a, err := NewSASLAuthenticator(SASLConfig{Listener: "SASL", Mechanisms: []string{MechanismScramSHA256, MechanismScramSHA512}, Credentials: store})
	if err != nil {
		t.Fatal(err)
	}
	password := TokenPassword(TokenHMAC(secret, "tok-1"))
	for _, sha512 := range []bool{false, true} {
		auth := scram.Auth{User: "tok-1", Pass: password, IsToken: true}
		mechanism := auth.AsSha256Mechanism()
		if sha512 {
			mechanism = auth.AsSha512Mechanism()
		}
		session, info, err := run(t, a, mechanism)
		if err != nil {
			t.Fatalf("%s: %v", mechanism.Name(), err)
		}
		if info.Principal != "User:alice" || !info.TokenAuthenticated {
			t.Fatalf("%s: principal %q, token authenticated %v", mechanism.Name(), info.Principal, info.TokenAuthenticated)
		}
		if got := session.ExpiresAt(); !got.Equal(expiresAt) {
			t.Fatalf("%s: session expires at %v, want the token's %v", mechanism.Name(), got, expiresAt)
		}
	}
	session, _, err := run(t, a, scram.Auth{User: "tok-1", Pass: password, IsToken: true}.AsSha512Mechanism())
	if err != nil {
		t.Fatal(err)
	}
	store.standing = false
	if !session.ExpiresAt().Before(time.Now()) {
		t.Fatal("the session outlives its removed token")
	}
	store.standing = true

	for name, auth := range map[string]scram.Auth{
		"wrong hmac":    {User: "tok-1", Pass: TokenPassword(TokenHMAC([]byte("other"), "tok-1")), IsToken: true},
		"unknown token": {User: "tok-2", Pass: TokenPassword(TokenHMAC(secret, "tok-2")), IsToken: true},
		"not as token":  {User: "tok-1", Pass: password},
	} {
		if _, _, err := run(t, a, auth.AsSha512Mechanism()); !errors.Is(err, ErrAuthenticationFailed) {
			t.Fatalf("%s: %v, want an authentication failure", name, err)
		}
	}
}
