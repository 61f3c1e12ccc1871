package registry

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// denyAll records each question and denies it.
type denyAll struct {
	asked []string
}

func (d *denyAll) Authorize(principal, host string, operation authz.Operation, resourceType authz.ResourceType, name string) bool {
	d.asked = append(d.asked, strings.Join([]string{principal, host, resourceType.String(), name, operation.String()}, " "))
	return false
}

// TestRouteACLs checks the table in authorize.go route by route: each
// route asks the authorizer once, for the resource and operation the table
// names, with the request's principal and client address, and a denial
// answers HTTP 403 with error_code 40301 before anything is read or
// written.
func TestRouteACLs(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         string
	}{
		{"POST", "/subjects/orders-value/versions", "SUBJECT orders-value WRITE"},
		{"POST", "/subjects/orders-value", "SUBJECT orders-value READ"},
		{"GET", "/subjects/orders-value/versions", "SUBJECT orders-value DESCRIBE"},
		{"GET", "/subjects/orders-value/versions/latest", "SUBJECT orders-value READ"},
		{"GET", "/subjects/orders-value/versions/1/schema", "SUBJECT orders-value READ"},
		{"GET", "/subjects/orders-value/versions/1/referencedby", "SUBJECT orders-value READ"},
		{"DELETE", "/subjects/orders-value", "SUBJECT orders-value DELETE"},
		{"DELETE", "/subjects/orders-value/versions/1", "SUBJECT orders-value DELETE"},
		{"POST", "/compatibility/subjects/orders-value/versions/latest", "SUBJECT orders-value READ"},
		{"POST", "/compatibility/subjects/orders-value/versions", "SUBJECT orders-value READ"},
		{"GET", "/config", "REGISTRY schema-registry DESCRIBE_CONFIGS"},
		{"PUT", "/config", "REGISTRY schema-registry ALTER_CONFIGS"},
		{"DELETE", "/config", "REGISTRY schema-registry ALTER_CONFIGS"},
		{"GET", "/config/orders-value", "SUBJECT orders-value DESCRIBE_CONFIGS"},
		{"PUT", "/config/orders-value", "SUBJECT orders-value ALTER_CONFIGS"},
		{"DELETE", "/config/orders-value", "SUBJECT orders-value ALTER_CONFIGS"},
		{"GET", "/mode", "REGISTRY schema-registry DESCRIBE_CONFIGS"},
		{"PUT", "/mode", "REGISTRY schema-registry ALTER_CONFIGS"},
		{"DELETE", "/mode", "REGISTRY schema-registry ALTER_CONFIGS"},
		{"GET", "/mode/orders-value", "SUBJECT orders-value DESCRIBE_CONFIGS"},
		{"PUT", "/mode/orders-value", "SUBJECT orders-value ALTER_CONFIGS"},
		{"DELETE", "/mode/orders-value", "SUBJECT orders-value ALTER_CONFIGS"},
	} {
		authorizer := &denyAll{}
		r := &Registry{config: Config{Authorizer: authorizer, TimeoutMs: 1000}}
		request := httptest.NewRequest(c.method, c.path, strings.NewReader(`{"schema":"\"string\""}`))
		request.RemoteAddr = "10.1.2.3:40000"
		request.Header.Set("Content-Type", ContentType)
		recorder := httptest.NewRecorder()
		r.Handler().ServeHTTP(recorder, request)
		if len(authorizer.asked) != 1 || authorizer.asked[0] != "User:ANONYMOUS 10.1.2.3 "+c.want {
			t.Errorf("%s %s asked %q, want %q", c.method, c.path, authorizer.asked, c.want)
		}
		var body struct {
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal(recorder.Body.Bytes(), &body); err != nil || recorder.Code != http.StatusForbidden || body.ErrorCode != 40301 {
			t.Errorf("%s %s: %d %s", c.method, c.path, recorder.Code, recorder.Body)
		}
		if !strings.HasPrefix(body.Message, "User is denied operation ") {
			t.Errorf("%s %s: message %q", c.method, c.path, body.Message)
		}
	}
}

// TestNoAuthorizerAsksNothing: without an authorizer, check lets every
// request through.
func TestNoAuthorizerAsksNothing(t *testing.T) {
	r := &Registry{}
	request := httptest.NewRequest("GET", "/config", nil)
	if err := r.check(request, onConfig(authz.OpDescribeConfigs)); err != nil {
		t.Fatal(err)
	}
	if !r.allowed(request, authz.ResourceSubject, "x", authz.OpWrite) {
		t.Fatal("denied without an authorizer")
	}
	if got := r.visible(request, []string{"a", "b"}, authz.OpDescribe); len(got) != 2 {
		t.Fatalf("visible: %v", got)
	}
}
