package security

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// writeJWKS writes a key set holding key's public half as kid.
func writeJWKS(t *testing.T, path, kid string, key *rsa.PrivateKey) {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	set := map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": enc(key.N.Bytes()), "e": enc(big.NewInt(int64(key.E)).Bytes()),
	}}}
	raw, _ := json.Marshal(set)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func signedToken(t *testing.T, key any, method jwt.SigningMethod, kid string, claims jwt.MapClaims) string {
	t.Helper()
	token := jwt.NewWithClaims(method, claims)
	token.Header["kid"] = kid
	signed, err := token.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func TestJWKSValidator(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeJWKS(t, path, "k1", key)
	v, err := NewJWKSValidator(JWKSConfig{URL: "file://" + path, ExpectedAudience: []string{"kafka"}, ExpectedIssuer: "https://issuer", ClockSkewSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "dave", "aud": []string{"kafka"}, "iss": "https://issuer", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	principal, expiresAt, err := v.Validate(signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(nil)), now)
	if err != nil || principal != "dave" || expiresAt.Unix() != now.Add(time.Hour).Unix() {
		t.Fatalf("valid token: %s %v %v", principal, expiresAt, err)
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	for name, token := range map[string]string{
		"alg none":       none,
		"hmac":           signedToken(t, []byte("shared"), jwt.SigningMethodHS256, "k1", claims(nil)),
		"wrong key":      signedToken(t, other, jwt.SigningMethodRS256, "k1", claims(nil)),
		"unknown kid":    signedToken(t, key, jwt.SigningMethodRS256, "k2", claims(nil)),
		"expired":        signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })),
		"no exp":         signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"wrong issuer":   signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { c["iss"] = "https://evil" })),
		"wrong audience": signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { c["aud"] = "other" })),
		"no subject":     signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { delete(c, "sub") })),
		"issued later":   signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })),
		"not a jwt":      "abc.def",
		"oversize":       strings.Repeat("a", maxTokenBytes+1),
	} {
		if _, _, err := v.Validate(token, now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Within the clock skew an expired token still passes.
	if _, _, err := v.Validate(signedToken(t, key, jwt.SigningMethodRS256, "k1", claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), now); err != nil {
		t.Errorf("expired within the skew: %v", err)
	}
	// A rotated key set is picked up once the refresh interval has passed.
	writeJWKS(t, path, "k2", other)
	rotated := signedToken(t, other, jwt.SigningMethodRS256, "k2", claims(nil))
	later := now.Add(2 * time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := claims(func(c jwt.MapClaims) { c["exp"] = later.Add(time.Hour).Unix(); c["iat"] = later.Unix() })
		rotated = signedToken(t, other, jwt.SigningMethodRS256, "k2", c)
		if _, _, err := v.Validate(rotated, later); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("rotated key set never loaded")
		}
		time.Sleep(10 * time.Millisecond) // polling a background reload, bounded by the deadline
	}
	if _, err := NewJWKSValidator(JWKSConfig{URL: "http://insecure/jwks"}); err == nil {
		t.Error("http:// accepted")
	}
}
