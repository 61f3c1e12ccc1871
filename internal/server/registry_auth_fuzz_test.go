package server

import (
	"net/http"
	"testing"

	"github.com/samsa-streaming/samsa/internal/security"
)

type noCredentials struct{}

func (noCredentials) ScramCredential(string, security.ScramMechanism) (security.ScramCredential, bool) {
	return security.ScramCredential{}, false
}

// FuzzBasicAuthorization feeds arbitrary Authorization headers to the
// registry's authenticator: it never panics, and accepts only the one
// configured user and password, as User:<name>.
func FuzzBasicAuthorization(f *testing.F) {
	for _, seed := range []string{
		"Basic YWxpY2U6c2VjcmV0", // alice:secret
		"Basic YWxpY2U6d3Jvbmc=", // alice:wrong
		"basic YWxpY2U6c2VjcmV0",
		"Basic ",
		"Basic Og==", // ":"
		"Basic !!!!",
		"Bearer abc",
		"",
	} {
		f.Add(seed)
	}
	authenticator := &basicAuthenticator{plainUsers: []map[string]string{{"alice": "secret"}}, credentials: noCredentials{}}
	f.Fuzz(func(t *testing.T, header string) {
		request, err := http.NewRequest(http.MethodGet, "http://registry/subjects", nil)
		if err != nil {
			t.Fatal(err)
		}
		request.Header.Set("Authorization", header)
		principal, err := authenticator.Authenticate(request)
		user, password, _ := request.BasicAuth()
		accepted := user == "alice" && password == "secret"
		if (err == nil) != accepted || (accepted && principal != "User:alice") {
			t.Fatalf("%q: principal %q err %v", header, principal, err)
		}
	})
}
