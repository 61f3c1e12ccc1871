package kafkatools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

const (
	toolsAdminPassword = "tools-admin-Secret-2a9c"
	toolsTokenSecret   = "tools-token-Secret-77d1"
)

// TestKafkaDelegationTokensTool creates, describes, renews and expires a
// delegation token with Kafka's kafka-delegation-tokens against a SASL
// node, and authenticates Kafka's Java client with it: the console
// producer and consumer over SCRAM-SHA-512 with tokenauth="true", the
// token id as the user and the HMAC as the password.
func TestKafkaDelegationTokensTool(t *testing.T) {
	needTools(t)
	scramJAAS := func(user, password, extra string) string {
		return `org.apache.kafka.common.security.scram.ScramLoginModule required username="` + user + `" password="` + password + `"` + extra + ";"
	}
	node := clustertest.StartNode(t,
		"listener.security.protocol.map=PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
		"listener.name.plaintext.scram-sha-512.sasl.jaas.config="+scramJAAS("admin", toolsAdminPassword, ""),
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password="+toolsAdminPassword+"]",
		"delegation.token.secret.key="+toolsTokenSecret,
		"auto.create.topics.enable=false")
	b := node.Addr()
	dir := t.TempDir()
	properties := func(name, jaas string) string {
		path := filepath.Join(dir, name)
		body := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=" + jaas + "\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	admin := properties("admin.properties", scramJAAS("admin", toolsAdminPassword, ""))

	mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--command-config", admin, "--create", "--topic", "by-token", "--partitions", "1")
	out := mustTool(t, "", "kafka-delegation-tokens", "--bootstrap-server", b, "--command-config", admin,
		"--create", "--max-life-time-period", "-1", "--renewer-principal", "User:renewer")
	tokenID, hmac := tokenRow(t, out)

	// Without --owner-principal the tool sends an empty owner list, which
	// Kafka answers with no tokens; name the owner.
	described := mustTool(t, "", "kafka-delegation-tokens", "--bootstrap-server", b, "--command-config", admin,
		"--describe", "--owner-principal", "User:admin")
	mustContain(t, "describe", described, tokenID, hmac, "User:admin", "User:renewer")
	mustContain(t, "renew", mustTool(t, "", "kafka-delegation-tokens", "--bootstrap-server", b, "--command-config", admin,
		"--renew", "--hmac", hmac, "--renew-time-period", "3600000"), "Completed renew operation")

	asToken := properties("token.properties", scramJAAS(tokenID, hmac, ` tokenauth="true"`))
	mustTool(t, keyValueLines(20), "kafka-console-producer", "--bootstrap-server", b, "--topic", "by-token",
		"--command-config", asToken, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:")
	consumed := mustTool(t, "", "kafka-console-consumer", "--bootstrap-server", b, "--topic", "by-token", "--from-beginning",
		"--max-messages", "20", "--timeout-ms", "30000", "--command-config", asToken)
	if lines := strings.Split(strings.TrimSpace(consumed), "\n"); len(lines) != 20 {
		t.Fatalf("consumed %d records with the token, want 20:\n%s", len(lines), consumed)
	}

	mustContain(t, "expire", mustTool(t, "", "kafka-delegation-tokens", "--bootstrap-server", b, "--command-config", admin,
		"--expire", "--hmac", hmac, "--expiry-time-period", "-1"), "Completed expire operation")
	if out := mustTool(t, "", "kafka-delegation-tokens", "--bootstrap-server", b, "--command-config", admin,
		"--describe", "--owner-principal", "User:admin"); strings.Contains(out, tokenID) {
		t.Fatalf("an expired token is still described:\n%s", out)
	}
	if strings.Contains(node.Log(), toolsAdminPassword) || strings.Contains(node.Log(), hmac) {
		t.Fatal("the node logged a password or a token HMAC")
	}
}

// tokenRow reads the token id and HMAC from the table kafka-delegation-tokens
// --create prints under its TOKENID header.
func tokenRow(t *testing.T, out string) (tokenID, hmac string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "TOKENID") {
			continue
		}
		for _, row := range lines[i+1:] {
			if fields := strings.Fields(row); len(fields) >= 2 && strings.Trim(fields[0], "-") != "" {
				return fields[0], fields[1]
			}
		}
	}
	t.Fatalf("no token in the output:\n%s", out)
	return "", ""
}
