package server

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/config"
)

// TestMetricsListenerAuthentication: with metrics.authentication.method=BASIC
// /metrics answers only SASL users (401 otherwise, the same for unknown
// users and wrong passwords), with the authorizer on only those with
// DESCRIBE on the cluster (403 otherwise); health stays open under its own
// key; nothing but GET and HEAD is served.
func TestMetricsListenerAuthentication(t *testing.T) {
	sn := startSASLNode(t, "metrics.listener=127.0.0.1:0", "metrics.authentication.method=BASIC",
		"authorizer.class.name=samsa", "super.users=User:admin")
	ctx := testContext(t)
	admin := kadm.NewClient(sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism()))
	altered, err := admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: saslBobPassword}})
	if err != nil || altered.Error() != nil {
		t.Fatalf("create bob: %v %v", err, altered.Error())
	}
	base := "http://" + sn.node.MetricsAddr().String()
	get := func(method, path, user, password string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body), resp.Header
	}
	for name, creds := range map[string][2]string{"none": {"", ""}, "wrong password": {"admin", "wrong"}, "unknown user": {"nobody", "x"}} {
		status, _, header := get(http.MethodGet, "/metrics", creds[0], creds[1])
		if status != http.StatusUnauthorized || header.Get("WWW-Authenticate") != `Basic realm="samsa"` {
			t.Fatalf("%s: status %d, WWW-Authenticate %q; want 401 with a Basic challenge", name, status, header.Get("WWW-Authenticate"))
		}
	}
	if status, body, _ := get(http.MethodGet, "/metrics", "admin", saslAdminPassword); status != http.StatusOK || !strings.Contains(body, "samsa_") {
		t.Fatalf("admin: status %d, body %.200q", status, body)
	}
	if status, _, _ := get(http.MethodGet, "/metrics", "bob", saslBobPassword); status != http.StatusForbidden {
		t.Fatalf("bob without DESCRIBE on the cluster: status %d, want 403", status)
	}
	results, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:bob").Operations(kadm.OpDescribe).Clusters().ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(results) != 1 || results[0].Err != nil {
		t.Fatalf("grant bob DESCRIBE: %v %+v", err, results)
	}
	waitFor(t, 10*time.Second, "bob to read /metrics", func() bool {
		status, _, _ := get(http.MethodGet, "/metrics", "bob", saslBobPassword)
		return status == http.StatusOK
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, _, _ := get(http.MethodGet, path, "", ""); status != http.StatusOK {
			t.Fatalf("%s without credentials: status %d, want 200 (metrics.health.authentication.method=NONE)", path, status)
		}
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if status, _, _ := get(method, "/metrics", "admin", saslAdminPassword); status != http.StatusMethodNotAllowed {
			t.Fatalf("%s /metrics: status %d, want 405", method, status)
		}
	}
}

// TestMetricsHealthAuthenticationAndNoSASL: health can require credentials
// too, and BASIC on a node without SASL users does not start.
func TestMetricsHealthAuthenticationAndNoSASL(t *testing.T) {
	sn := startSASLNode(t, "metrics.listener=127.0.0.1:0", "metrics.health.authentication.method=BASIC")
	resp, err := http.Get("http://" + sn.node.MetricsAddr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/healthz without credentials: %d, want 401", resp.StatusCode)
	}
	resp, err = http.Get("http://" + sn.node.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics with metrics.authentication.method=NONE: %d, want 200", resp.StatusCode)
	}

	cfg, _, err := config.Load("", []string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + t.TempDir(),
		"metrics.listener=127.0.0.1:0", "metrics.authentication.method=BASIC"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		n.Shutdown(testContext(t))
		t.Fatal("a node with BASIC metrics authentication and no SASL listener started")
	}
	if !strings.Contains(err.Error(), "SASL") {
		t.Fatalf("error %v does not say SASL is needed", err)
	}
}
