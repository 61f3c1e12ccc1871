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

// TestCertsAndCommandConfigOverSSL creates a CA and certificates with samsa
// certs, runs a broker on an SSL listener with them and drives it with the
// CLI through a --command-config of Kafka client properties.
func TestCertsAndCommandConfigOverSSL(t *testing.T) {
	dir := t.TempDir()
	const password = "certs-test-password"
	result := mustRun(t, "", "", "certs", "--dir", dir, "--node", "broker=127.0.0.1,localhost", "--client", "alice", "--password", password)
	for _, want := range []string{"security.protocol=SSL", "ssl.truststore.location=" + dir + "/truststore.p12", "ssl.keystore.location=" + dir + "/broker.p12"} {
		if !strings.Contains(result.stdout, want) {
			t.Errorf("certs output lacks %q:\n%s", want, result.stdout)
		}
	}
	for _, name := range []string{"ca.crt", "ca.key", "truststore.p12", "broker.crt", "broker.key", "broker.p12", "alice.crt", "alice.key", "alice.p12"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("certs did not write %s: %v", name, err)
		}
	}
	// A second run reuses the CA.
	again := mustRun(t, "", "", "certs", "--dir", dir, "--client", "bob", "--password", password)
	if !strings.Contains(again.stdout, "CA reused") {
		t.Errorf("second run did not reuse the CA:\n%s", again.stdout)
	}

	cfg, _, err := config.Load("", []string{
		"listeners=SSL://127.0.0.1:0", "listener.security.protocol.map=SSL:SSL,CONTROLLER:PLAINTEXT", "inter.broker.listener.name=SSL",
		"log.dirs=" + t.TempDir(), "metrics.listener=", "group.initial.rebalance.delay.ms=0",
		"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + filepath.Join(dir, "broker.p12"), "ssl.keystore.password=" + password,
		"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + filepath.Join(dir, "truststore.p12"), "ssl.truststore.password=" + password,
		"ssl.client.auth=required",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	node, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		node.Shutdown(ctx)
	})
	bootstrap := node.Addrs()[0].String()

	properties := filepath.Join(dir, "client.properties")
	clientProperties := strings.Join([]string{
		"security.protocol=SSL",
		"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + filepath.Join(dir, "truststore.p12"), "ssl.truststore.password=" + password,
		"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + filepath.Join(dir, "alice.p12"), "ssl.keystore.password=" + password,
	}, "\n")
	if err := os.WriteFile(properties, []byte(clientProperties), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, bootstrap, "", "--command-config", properties, "topics", "create", "secure", "--partitions", "1")
	mustRun(t, bootstrap, "one\ntwo\n", "--command-config", properties, "produce", "secure")
	consumed := mustRun(t, bootstrap, "", "--command-config", properties, "consume", "secure", "--from-beginning", "--max-messages", "2")
	if consumed.stdout != "one\ntwo\n" {
		t.Errorf("consumed %q", consumed.stdout)
	}

	// Without a client certificate the listener (ssl.client.auth=required)
	// refuses the client.
	noCertificate := filepath.Join(dir, "nocert.properties")
	os.WriteFile(noCertificate, []byte(strings.Join([]string{
		"security.protocol=SSL",
		"ssl.truststore.type=PEM", "ssl.truststore.location=" + filepath.Join(dir, "ca.crt"),
	}, "\n")), 0o600)
	if r := runCLI(t, bootstrap, "", "--command-config", noCertificate, "--timeout", "3s", "topics", "list"); r.code == 0 {
		t.Errorf("a client without a certificate listed topics:\n%s", r.stdout)
	}
	mustFail(t, bootstrap, "", []string{"--command-config", writeFile(t, dir, "wrong.properties", "security.protocol=SSL\nssl.truststore.type=PKCS12\nssl.truststore.location="+filepath.Join(dir, "truststore.p12")+"\nssl.truststore.password=nope\n"), "topics", "list"},
		"ssl.truststore.location")
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
