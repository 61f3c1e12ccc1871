package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

// startSASLTestBroker starts a node whose only client listener is
// SASL_PLAINTEXT with SCRAM and PLAIN, and an admin SCRAM user.
func startSASLTestBroker(t *testing.T) string {
	t.Helper()
	cfg, _, err := config.Load("", []string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + t.TempDir(),
		"metrics.listener=",
		"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
		"samsa.sasl.plain.allow.plaintext=true",
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password=admin-secret]",
	}, nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	node, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start samsa node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		node.Shutdown(ctx)
	})
	return node.Addrs()[1].String()
}

func writeCommandConfig(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUsersOverSASL(t *testing.T) {
	bootstrap := startSASLTestBroker(t)
	admin := writeCommandConfig(t,
		"security.protocol=SASL_PLAINTEXT",
		"sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`)

	mustRun(t, bootstrap, "", "--command-config", admin, "users", "create", "alice", "--mechanism", "SCRAM-SHA-256", "--iterations", "8192", "--password", "alice-secret")
	mustRun(t, bootstrap, "bob-secret\n", "--command-config", admin, "users", "create", "bob")
	listed := mustRun(t, bootstrap, "", "--command-config", admin, "users", "list").stdout
	for _, want := range []string{"alice", "SCRAM-SHA-256", "8192", "bob", "admin"} {
		if !strings.Contains(listed, want) {
			t.Fatalf("users list lacks %q:\n%s", want, listed)
		}
	}
	if strings.Contains(listed, "secret") {
		t.Fatalf("users list shows a password:\n%s", listed)
	}

	// The new users log in, with SCRAM and with PLAIN.
	alice := writeCommandConfig(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-256",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`)
	mustRun(t, bootstrap, "", "--command-config", alice, "topics", "list")
	bob := writeCommandConfig(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="bob-secret";`)
	mustRun(t, bootstrap, "", "--command-config", bob, "topics", "list")

	mustFail(t, bootstrap, "", []string{"--command-config", admin, "users", "create", "carol", "--iterations", "100", "--password", "x"}, "iterations")
	mustFail(t, bootstrap, "", []string{"--command-config", admin, "users", "delete", "nobody"}, "does not exist")
	mustRun(t, bootstrap, "", "--command-config", admin, "users", "delete", "alice", "--mechanism", "SCRAM-SHA-256")
	if listed := mustRun(t, bootstrap, "", "--command-config", admin, "users", "list").stdout; strings.Contains(listed, "alice") {
		t.Fatalf("alice still listed:\n%s", listed)
	}
	wrong := writeCommandConfig(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="wrong";`)
	mustFail(t, bootstrap, "", []string{"--command-config", wrong, "--timeout", "5s", "topics", "list"}, "SASL_AUTHENTICATION_FAILED")
}
