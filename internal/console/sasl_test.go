package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

// Test-only passwords.
const (
	consoleAdminPassword = "console-admin-secret"
	consoleBobPassword   = "console-bob-secret"
)

// TestConsoleSASLLogin: with SASL and the authorizer on, the console asks
// for a login, checks it against the SCRAM users, and acts as that
// principal, so ACLs decide what each user sees.
func TestConsoleSASLLogin(t *testing.T) {
	cfg, _, err := config.Load("", []string{
		// The node's own clients use the PLAINTEXT listener (a super user
		// here); the console must log its users in on SASL_PLAINTEXT.
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + t.TempDir(),
		"metrics.listener=127.0.0.1:0",
		"console.listener=http://127.0.0.1:0",
		"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password=" + consoleAdminPassword + ",iterations=8192]",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin;User:ANONYMOUS",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var logsMu syncWriter
	logsMu.w = &logs
	n, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(&logsMu, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Shutdown(ctx)
		if text := logsMu.String(); strings.Contains(text, consoleAdminPassword) || strings.Contains(text, consoleBobPassword) {
			t.Error("the node's log contains a password")
		}
	})
	consoleURL := "http://" + n.ConsoleAddrs()[0].String()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adminClient := newClient(t, n.Addrs()[1].String(), kgo.SASL(scram.Auth{User: "admin", Pass: consoleAdminPassword}.AsSha512Mechanism()))
	admin := kadm.NewClient(adminClient)
	for _, topic := range []string{"visible", "hidden"} {
		if _, err := admin.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	altered, err := admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: consoleBobPassword}})
	if err != nil || altered.Error() != nil {
		t.Fatalf("create bob: %v %v", err, altered.Error())
	}
	if _, err := admin.CreateACLs(ctx, kadm.NewACLs().Topics("visible").Allow("User:bob").AllowHosts("*").Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)); err != nil {
		t.Fatal(err)
	}

	fetch := func(user, password, path string) (int, string, http.Header) {
		request, _ := http.NewRequest("GET", consoleURL+path, nil)
		if user != "" {
			request.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	status, _, header := fetch("", "", "/topics")
	if status != 401 || !strings.Contains(header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("no login: %d %v", status, header)
	}
	if status, _, _ := fetch("bob", "wrong", "/topics"); status != 401 {
		t.Fatalf("wrong password: %d", status)
	}
	status, body, _ := fetch("admin", consoleAdminPassword, "/topics")
	if status != 200 || !strings.Contains(body, ">visible<") || !strings.Contains(body, ">hidden<") {
		t.Fatalf("admin's topics: %d %.400s", status, body)
	}
	// Bob's credential and ACL reach every broker's image through the
	// metadata log; poll until the console, acting as bob, sees exactly
	// the topic his ACL lets him describe.
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body, _ = fetch("bob", consoleBobPassword, "/topics")
		if status == 200 && strings.Contains(body, ">visible<") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's topics: %d %.600s", status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(body, ">hidden<") {
		t.Fatal("the console showed bob a topic his ACLs hide")
	}
	// Bob may not create topics: the cluster refuses, the console says so.
	request, _ := http.NewRequest("POST", consoleURL+"/topics", strings.NewReader("name=bobs&partitions=1&replication_factor=1"))
	request.SetBasicAuth("bob", consoleBobPassword)
	request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(created), "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("bob's create: %d %.600s", resp.StatusCode, created)
	}

	// The admin grants bob Write on the topic through the console's ACL
	// form, then removes it; kadm sees both.
	// post answers the status after the client follows the 303 to the page.
	post := func(path, form string) int {
		request, _ := http.NewRequest("POST", consoleURL+path, strings.NewReader(form))
		request.SetBasicAuth("admin", consoleAdminPassword)
		request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	aclForm := "principal=User:bob&host=*&resource_type=TOPIC&resource_name=visible&pattern=LITERAL&operation=WRITE&permission=ALLOW"
	writeACLs := func() int {
		described, err := admin.DescribeACLs(ctx, kadm.NewACLs().Topics("visible").Allow("User:bob").AllowHosts("*").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
		if err != nil || len(described) != 1 || described[0].Err != nil {
			t.Fatalf("describe ACLs: %v %+v", err, described)
		}
		return len(described[0].Described)
	}
	if status := post("/security/acls", aclForm); status != 200 || writeACLs() != 1 {
		t.Fatalf("create ACL through the console: %d, %d ACLs", status, writeACLs())
	}
	if status, body, _ := fetch("admin", consoleAdminPassword, "/security"); status != 200 || !strings.Contains(body, "User:bob") || !strings.Contains(body, "WRITE") {
		t.Fatalf("security page: %d", status)
	}
	if status := post("/security/acls/delete", aclForm); status != 200 || writeACLs() != 0 {
		t.Fatalf("delete ACL through the console: %d, %d ACLs", status, writeACLs())
	}
	if status := post("/security/acls", "principal=bob&resource_type=TOPIC&resource_name=x&pattern=LITERAL&operation=READ&permission=ALLOW"); status != 400 {
		t.Fatalf("ACL without a principal type: %d", status)
	}
}

// syncWriter is an io.Writer safe for the node's concurrent loggers.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
