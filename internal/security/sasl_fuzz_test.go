package security

import (
	"encoding/base64"
	"os"
	"strconv"
	"testing"
	"time"
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func FuzzScramClientFirst(f *testing.F) {
	for _, seed := range []string{"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL", "n,a=bob,n=bob,r=abc,tokenauth=true", "y,,n=a=2Cb=3D,r=x", "p=tls-unique,,n=a,r=b", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, message string) {
		first, err := ParseScramClientFirst(message)
		if err == nil && (first.User == "" || first.Nonce == "") {
			t.Fatalf("accepted %q without user or nonce", message)
		}
		// The server exchange never panics on any first or final message.
		e := newScramExchange(ScramSHA256, memoryStore{})
		if _, _, err := e.next([]byte(message)); err == nil {
			e.next([]byte("c=biws,r=x,p=" + message))
		}
	})
}

func FuzzPlain(f *testing.F) {
	for _, seed := range []string{"\x00alice\x00secret", "alice\x00alice\x00secret", "\x00\x00", "x"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, message []byte) {
		e := &plainExchange{users: map[string]string{"alice": "secret"}}
		e.next(message)
	})
}

func FuzzOAuthClientFirst(f *testing.F) {
	for _, seed := range []string{"n,,\x01auth=Bearer abc.def.\x01\x01", "n,a=bob,\x01auth=Bearer x\x01k=v\x01\x01", "\x01\x01", ""} {
		f.Add([]byte(seed))
	}
	v, _ := NewUnsecuredValidator(nil)
	f.Fuzz(func(t *testing.T, message []byte) {
		first, err := ParseOAuthClientFirst(message)
		if err != nil {
			return
		}
		if first.Token == "" {
			t.Fatalf("accepted %q without a token", message)
		}
		v.Validate(first.Token, time.Unix(1700000000, 0))
	})
}

func FuzzJAAS(f *testing.F) {
	for _, seed := range []string{`org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";`, `M optional k=v k2="x\"y" ;`, `;`, ``} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseJAAS(text)
		if err == nil && (m.LoginModule == "" || m.Flag == "") {
			t.Fatalf("accepted %q without module or flag", text)
		}
	})
}

func FuzzJWKSToken(f *testing.F) {
	for _, seed := range []string{"eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.", "a.b.c", "", "..."} {
		f.Add(seed)
	}
	path := f.TempDir() + "/jwks.json"
	if err := os.WriteFile(path, []byte(`{"keys":[]}`), 0o600); err != nil {
		f.Fatal(err)
	}
	v, err := NewJWKSValidator(JWKSConfig{URL: "file://" + path})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		if _, _, err := v.Validate(token, time.Unix(1700000000, 0)); err == nil {
			t.Fatalf("accepted %q with an empty key set", token)
		}
	})
}
