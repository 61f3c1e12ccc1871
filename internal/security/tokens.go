package security

// Delegation token authentication (KIP-48): a client authenticates with
// SCRAM, the token id as the user name, the token's HMAC (base64) as the
// password and the client-first extension tokenauth=true. The HMAC is
// HMAC-SHA512 over the token id keyed with delegation.token.secret.key; no
// node stores it. Its SCRAM credential (4096 iterations, as Kafka derives
// token credentials) is derived on first use and cached.

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"sync"
	"time"
)

// TokenHMAC is the HMAC of a delegation token: the secret a client holds.
func TokenHMAC(secretKey []byte, tokenID string) []byte {
	mac := hmac.New(sha512.New, secretKey)
	mac.Write([]byte(tokenID))
	return mac.Sum(nil)
}

// TokenPassword is the SCRAM password of a token with hmac.
func TokenPassword(hmac []byte) string { return base64.StdEncoding.EncodeToString(hmac) }

// TokenInfo is what authentication needs of a token.
type TokenInfo struct {
	// Owner is the principal the token authenticates as, "User:<name>".
	Owner     string
	ExpiresAt time.Time
	// Valid, when set, reports whether the token still stands; a session
	// it opened ends once it does not.
	Valid func() bool
}

// TokenCredentialStore is a CredentialStore that also finds delegation
// tokens; SCRAM with tokenauth=true fails against a store without it.
type TokenCredentialStore interface {
	DelegationTokenCredential(tokenID string, m ScramMechanism) (ScramCredential, TokenInfo, bool)
}

// maxCachedTokenCredentials bounds the derived credentials kept; past it
// the cache starts over.
const maxCachedTokenCredentials = 10000

// TokenCredentials derives and caches the SCRAM credentials of tokens.
type TokenCredentials struct {
	secretKey []byte
	mu        struct {
		sync.Mutex
		// credentials are by token id and mechanism.
		// Invariant: len(credentials) <= maxCachedTokenCredentials.
		credentials map[tokenCredentialKey]ScramCredential
	}
}

type tokenCredentialKey struct {
	tokenID   string
	mechanism ScramMechanism
}

// NewTokenCredentials returns the credential cache for secretKey.
func NewTokenCredentials(secretKey []byte) *TokenCredentials {
	t := &TokenCredentials{secretKey: secretKey}
	t.mu.credentials = map[tokenCredentialKey]ScramCredential{}
	return t
}

// Credential is the SCRAM credential of the token with tokenID.
func (t *TokenCredentials) Credential(tokenID string, m ScramMechanism) (ScramCredential, error) {
	key := tokenCredentialKey{tokenID, m}
	t.mu.Lock()
	c, ok := t.mu.credentials[key]
	t.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := NewScramCredential(m, TokenPassword(TokenHMAC(t.secretKey, tokenID)), ScramMinIterations)
	if err != nil {
		return ScramCredential{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.mu.credentials) >= maxCachedTokenCredentials {
		clear(t.mu.credentials)
	}
	t.mu.credentials[key] = c
	return c, nil
}
