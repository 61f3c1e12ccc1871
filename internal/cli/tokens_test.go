package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

// startTokenTestBroker is startSASLTestBroker with delegation tokens on.
func startTokenTestBroker(t *testing.T) string {
	t.Helper()
	cfg, _, err := config.Load("", []string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + t.TempDir(),
		"metrics.listener=",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password=admin-secret]",
		"delegation.token.secret.key=cli-token-secret",
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

// samsa tokens create, describe, renew and expire a token, and the
// token logs in through --command-config with tokenauth="true".
func TestTokensCommands(t *testing.T) {
	bootstrap := startTokenTestBroker(t)
	admin := writeCommandConfig(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`)

	created := mustRun(t, bootstrap, "", "--command-config", admin, "-o", "json", "tokens", "create",
		"--renewer-principal", "User:bob", "--max-life-time-period", "7200000").stdout
	var tokens []listedToken
	if err := json.Unmarshal([]byte(created), &tokens); err != nil || len(tokens) != 1 {
		t.Fatalf("tokens create -o json: %v\n%s", err, created)
	}
	token := tokens[0]
	if token.Owner != "User:admin" || token.Requester != "User:admin" || len(token.Renewers) != 1 || token.Renewers[0] != "User:bob" || token.HMAC == "" {
		t.Fatalf("created %+v", token)
	}
	described := mustRun(t, bootstrap, "", "--command-config", admin, "tokens", "describe").stdout
	for _, want := range []string{"TOKENID", token.TokenID, token.HMAC, "User:bob"} {
		if !strings.Contains(described, want) {
			t.Fatalf("tokens describe lacks %q:\n%s", want, described)
		}
	}
	mustRun(t, bootstrap, "", "--command-config", admin, "tokens", "renew", "--hmac", token.HMAC, "--renew-time-period", "3600000")

	asToken := writeCommandConfig(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="`+token.TokenID+`" password="`+token.HMAC+`" tokenauth="true";`)
	mustRun(t, bootstrap, "", "--command-config", asToken, "topics", "list")
	mustFail(t, bootstrap, "", []string{"--command-config", asToken, "tokens", "create"}, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")

	mustFail(t, bootstrap, "", []string{"--command-config", admin, "tokens", "renew", "--hmac", "not base64!"}, "base64")
	mustFail(t, bootstrap, "", []string{"--command-config", admin, "tokens", "create", "--owner-principal", "alice"}, "Type:Name")
	mustRun(t, bootstrap, "", "--command-config", admin, "tokens", "expire", "--hmac", token.HMAC)
	if described := mustRun(t, bootstrap, "", "--command-config", admin, "tokens", "describe").stdout; strings.Contains(described, token.TokenID) {
		t.Fatalf("an expired token is still described:\n%s", described)
	}
	mustFail(t, bootstrap, "", []string{"--command-config", asToken, "--timeout", "5s", "topics", "list"}, "SASL_AUTHENTICATION_FAILED")
}
