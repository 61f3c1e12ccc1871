package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestSASLKafkaJS runs kafkajs with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN,
// and a wrong password, when compat/run.sh has installed it.
func TestSASLKafkaJS(t *testing.T) {
	modules, _ := filepath.Abs("../../compat/kafkajs/node_modules")
	if _, err := os.Stat(filepath.Join(modules, "kafkajs")); err != nil {
		t.Skip("kafkajs not installed (compat/run.sh installs it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	sn := startSASLNode(t)
	admin := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism())
	adm := kadm.NewClient(admin)
	mustCreateTopic(t, adm, "js", 1, nil)
	if _, err := adm.AlterUserSCRAMs(testContext(t), nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: saslBobPassword}}); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "sasl.js")
	program := fmt.Sprintf(`
const { Kafka, logLevel } = require('kafkajs');
const broker = %q;
async function produce(sasl) {
  const kafka = new Kafka({ clientId: 'sasl', brokers: [broker], sasl, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'js', messages: [{ value: sasl.mechanism }] });
  await producer.disconnect();
}
(async () => {
  await produce({ mechanism: 'scram-sha-512', username: 'admin', password: %q });
  await produce({ mechanism: 'scram-sha-256', username: 'bob', password: %q });
  await produce({ mechanism: 'plain', username: 'alice', password: %q });
  try {
    await produce({ mechanism: 'scram-sha-512', username: 'admin', password: 'wrong' });
    console.log('accepted a wrong password'); process.exit(1);
  } catch (e) {
    if (!String(e).includes('SASL')) { console.log('unexpected error', String(e)); process.exit(1); }
  }
  console.log('ok');
})().catch(e => { console.log('failed', String(e)); process.exit(1); });
`, sn.saslAddr(), saslAdminPassword, saslBobPassword, saslAlicePassword)
	if err := os.WriteFile(script, []byte(program), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("kafkajs: %v\n%s", err, out)
	}
}
