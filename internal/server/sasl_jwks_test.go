package server

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// TestSASLOAuthJWKS validates signed OAUTHBEARER tokens against a JWKS file
// (KIP-768): franz-go with a valid token produces, and its session ends at
// the token's expiry; an expired token, another audience and an unsigned
// token are refused.
func TestSASLOAuthJWKS(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	enc := base64.RawURLEncoding.EncodeToString
	set, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig", "n": enc(key.N.Bytes()), "e": enc(big.NewInt(int64(key.E)).Bytes()),
	}}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, set, 0o600); err != nil {
		t.Fatal(err)
	}
	sn := startSASLNode(t,
		"listener.name.sasl_plaintext.sasl.oauthbearer.jwks.endpoint.url=file://"+path,
		"listener.name.sasl_plaintext.sasl.oauthbearer.expected.audience=kafka",
		"listener.name.sasl_plaintext.sasl.oauthbearer.expected.issuer=https://issuer.example",
		"connections.max.reauth.ms=3600000")
	ctx := testContext(t)
	sign := func(claims jwt.MapClaims) string {
		token := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		token.Header["kid"] = "k1"
		signed, err := token.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	now := time.Now()
	valid := sign(jwt.MapClaims{"sub": "erin", "aud": "kafka", "iss": "https://issuer.example", "exp": now.Add(10 * time.Minute).Unix()})
	cl := sn.client(t, oauth.Auth{Token: valid}.AsMechanism(), kgo.DefaultProduceTopic("jwks"), kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("signed")}).FirstErr(); err != nil {
		t.Fatalf("produce with a signed token: %v", err)
	}

	// The session lasts until the token expires, below connections.max.reauth.ms.
	conn := dialSASL(t, sn.saslAddr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "OAUTHBEARER"
	conn.roundTrip(t, hs)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("n,,\x01auth=Bearer "+valid+"\x01\x01")
	resp := conn.roundTrip(t, auth).(*kmsg.SASLAuthenticateResponse)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 10*60*1000 {
		t.Fatalf("authenticate: code %d lifetime %d", resp.ErrorCode, resp.SessionLifetimeMillis)
	}

	for name, token := range map[string]string{
		"expired":        sign(jwt.MapClaims{"sub": "erin", "aud": "kafka", "iss": "https://issuer.example", "exp": now.Add(-10 * time.Minute).Unix()}),
		"other audience": sign(jwt.MapClaims{"sub": "erin", "aud": "billing", "iss": "https://issuer.example", "exp": now.Add(10 * time.Minute).Unix()}),
		"unsigned":       unsecuredJWT(`{"sub":"erin","aud":"kafka","iss":"https://issuer.example","exp":9999999999}`),
	} {
		t.Run(name, func(t *testing.T) {
			refused := sn.client(t, oauth.Auth{Token: token}.AsMechanism())
			if err := refused.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("ping: %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}
}
