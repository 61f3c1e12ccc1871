package security

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/network"
)

type memoryStore map[string]ScramCredential

func (m memoryStore) ScramCredential(user string, mechanism ScramMechanism) (ScramCredential, bool) {
	c, ok := m[mechanism.Name()+"/"+user]
	return c, ok
}

func newTestAuthenticator(t *testing.T, store memoryStore) *SASLAuthenticator {
	t.Helper()
	a, err := NewSASLAuthenticator(SASLConfig{
		Listener:    "SASL",
		Mechanisms:  []string{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512},
		PlainUsers:  map[string]string{"alice": "alice-secret"},
		Credentials: store,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// run drives a franz-go client mechanism against a new session.
func run(t *testing.T, a *SASLAuthenticator, m sasl.Mechanism) (*SASLSession, *network.ConnInfo, error) {
	t.Helper()
	info := &network.ConnInfo{Principal: "User:ANONYMOUS"}
	s := a.NewSession(info).(*SASLSession)
	if err := s.Handshake(m.Name(), false); err != nil {
		return s, info, err
	}
	session, write, err := m.Authenticate(context.Background(), "localhost:9092")
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		reply, _, err := s.Authenticate(write)
		if err != nil {
			return s, info, err
		}
		done, next, err := session.Challenge(reply)
		if err != nil {
			t.Fatalf("client refused the server's answer: %v", err)
		}
		if done {
			return s, info, nil
		}
		write = next
	}
	t.Fatal("exchange did not finish")
	return nil, nil, nil
}

func TestScramWithFranzGoClient(t *testing.T) {
	store := memoryStore{}
	for _, m := range []ScramMechanism{ScramSHA256, ScramSHA512} {
		c, err := NewScramCredential(m, "bob-secret", 4096)
		if err != nil {
			t.Fatal(err)
		}
		store[m.Name()+"/bob"] = c
	}
	a := newTestAuthenticator(t, store)
	for _, tc := range []struct {
		name     string
		mech     sasl.Mechanism
		wantFail bool
	}{
		{"sha256", scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism(), false},
		{"sha512", scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism(), false},
		{"wrong password", scram.Auth{User: "bob", Pass: "nope"}.AsSha512Mechanism(), true},
		{"unknown user", scram.Auth{User: "mallory", Pass: "nope"}.AsSha512Mechanism(), true},
		{"plain jaas user", plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(), false},
		{"plain scram user", plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism(), false},
		{"plain wrong", plain.Auth{User: "alice", Pass: "x"}.AsMechanism(), true},
		{"plain unknown", plain.Auth{User: "nobody", Pass: "x"}.AsMechanism(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, info, err := run(t, a, tc.mech)
			if tc.wantFail {
				if !errors.Is(err, ErrAuthenticationFailed) {
					t.Fatalf("err = %v, want an authentication failure", err)
				}
				if s.Gate() != network.GateFailed || info.Principal != "User:ANONYMOUS" {
					t.Fatalf("gate %v principal %s after failure", s.Gate(), info.Principal)
				}
				if strings.Contains(err.Error(), "mallory") || strings.Contains(err.Error(), "nobody") {
					t.Fatalf("failure names the user: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Gate() != network.GateOpen || !strings.HasPrefix(info.Principal, "User:") || info.Principal == "User:ANONYMOUS" {
				t.Fatalf("gate %v principal %s after success", s.Gate(), info.Principal)
			}
		})
	}
	// The unknown-user and wrong-password failures read the same.
	_, _, wrong := run(t, a, scram.Auth{User: "bob", Pass: "nope"}.AsSha256Mechanism())
	_, _, unknown := run(t, a, scram.Auth{User: "mallory", Pass: "nope"}.AsSha256Mechanism())
	if wrong.Error() != unknown.Error() {
		t.Fatalf("messages differ: %q vs %q", wrong, unknown)
	}
}

func TestReauthenticationRules(t *testing.T) {
	store := memoryStore{}
	a := newTestAuthenticator(t, store)
	s, info, err := run(t, a, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	if err != nil {
		t.Fatal(err)
	}
	// Another mechanism on re-authentication is refused.
	if err := s.Handshake(MechanismScramSHA256, false); !errors.Is(err, ErrIllegalSASLState) {
		t.Fatalf("re-handshake with another mechanism: %v", err)
	}
	// The same mechanism, another principal: refused.
	a.cfg.PlainUsers["eve"] = "eve-secret"
	s = a.NewSession(info).(*SASLSession)
	if _, _, err := s.Authenticate([]byte("\x00alice\x00alice-secret")); !errors.Is(err, ErrIllegalSASLState) {
		t.Fatalf("authenticate before handshake: %v", err)
	}
	s = a.NewSession(info).(*SASLSession)
	if err := s.Handshake(MechanismPlain, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Authenticate([]byte("\x00alice\x00alice-secret")); err != nil {
		t.Fatal(err)
	}
	if err := s.Handshake(MechanismPlain, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Authenticate([]byte("\x00eve\x00eve-secret")); err == nil || !strings.Contains(err.Error(), "Cannot change principals") {
		t.Fatalf("re-authentication as another principal: %v", err)
	}
	if info.Principal != "User:alice" {
		t.Fatalf("principal changed to %s", info.Principal)
	}
}

func TestUnsupportedMechanism(t *testing.T) {
	a := newTestAuthenticator(t, memoryStore{})
	s := a.NewSession(&network.ConnInfo{}).(*SASLSession)
	if err := s.Handshake("GSSAPI", false); !errors.Is(err, ErrUnsupportedMechanism) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseJAAS(t *testing.T) {
	m, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a\"b";`)
	if err != nil {
		t.Fatal(err)
	}
	users := m.PlainUsers()
	if m.Flag != "required" || users["admin"] != "admin-secret" || users["alice"] != `a"b` || m.Options["username"] != "admin" {
		t.Fatalf("parsed %+v", m)
	}
	for _, bad := range []string{"", "Module", "Module required", "Module bogus;", "Module required a=;", `Module required a="x;`, "M required; N required;"} {
		if _, err := ParseJAAS(bad); !errors.Is(err, ErrJAAS) {
			t.Errorf("ParseJAAS(%q) = %v, want ErrJAAS", bad, err)
		}
	}
}

func TestUnsecuredOAuth(t *testing.T) {
	v, _ := NewUnsecuredValidator(nil)
	a, err := NewSASLAuthenticator(SASLConfig{Mechanisms: []string{MechanismOAuthBearer}, OAuth: v})
	if err != nil {
		t.Fatal(err)
	}
	now := a.cfg.Now()
	token := func(claims string) string {
		return b64(`{"alg":"none"}`) + "." + b64(claims) + "."
	}
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{token(`{"sub":"carol","exp":` + itoa(now.Unix()+600) + `}`), true},
		{token(`{"sub":"carol","exp":` + itoa(now.Unix()-600) + `}`), false},
		{token(`{"sub":"carol"}`), false},
		{b64(`{"alg":"RS256"}`) + "." + b64(`{"sub":"carol","exp":`+itoa(now.Unix()+600)+`}`) + ".", false},
	} {
		info := &network.ConnInfo{}
		s := a.NewSession(info).(*SASLSession)
		if err := s.Handshake(MechanismOAuthBearer, false); err != nil {
			t.Fatal(err)
		}
		reply, lifetimeMs, err := s.Authenticate([]byte("n,,\x01auth=Bearer " + tc.token + "\x01\x01"))
		if err != nil {
			t.Fatalf("token %s: err %v", tc.token, err)
		}
		if !tc.ok {
			// RFC 7628: an error challenge, then the failure on the
			// client's %x01.
			if string(reply) != `{"status":"invalid_token"}` || s.Gate() == network.GateOpen {
				t.Fatalf("token %s: reply %q gate %v", tc.token, reply, s.Gate())
			}
			if _, _, err := s.Authenticate([]byte{1}); !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "invalid_token") {
				t.Fatalf("token %s: after the error challenge: %v", tc.token, err)
			}
			continue
		}
		if tc.ok && (info.Principal != "User:carol" || lifetimeMs <= 0 || lifetimeMs > 600000) {
			t.Fatalf("principal %s lifetime %d", info.Principal, lifetimeMs)
		}
	}
}
