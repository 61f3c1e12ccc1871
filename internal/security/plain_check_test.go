package security

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckPlainPassword: the HTTP entry to PLAIN's check accepts JAAS and
// SCRAM users with their passwords and refuses everything else with the
// one ErrAuthenticationFailed.
func TestCheckPlainPassword(t *testing.T) {
	bob, err := NewScramCredential(ScramSHA256, "bob-secret", ScramMinIterations)
	if err != nil {
		t.Fatal(err)
	}
	store := memoryStore{ScramSHA256.Name() + "/bob": bob}
	users := map[string]string{"alice": "alice-secret"}
	long := strings.Repeat("x", maxPlainFieldBytes+1)
	cases := []struct {
		user, password string
		ok             bool
	}{
		{"alice", "alice-secret", true},
		{"bob", "bob-secret", true},
		{"alice", "bob-secret", false},
		{"bob", "wrong", false},
		{"carol", "bob-secret", false},
		{"", "alice-secret", false},
		{"alice", "", false},
		{long, "alice-secret", false},
		{"alice", long, false},
	}
	for _, c := range cases {
		err := CheckPlainPassword(users, store, c.user, c.password)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrAuthenticationFailed)) {
			t.Errorf("%.10q: got %v, want ok=%v", c.user, err, c.ok)
		}
	}
	if CheckPlainPassword(nil, nil, "alice", "alice-secret") == nil {
		t.Error("no users and no store accepted a login")
	}
}
