package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestQuotasCommands sets and reads client quotas with samsa quotas and
// with kafka-configs' syntax under samsa configs, and checks the usage
// errors.
func TestQuotasCommands(t *testing.T) {
	bootstrap := startTestBroker(t)
	mustRun(t, bootstrap, "", "quotas", "alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152")
	mustRun(t, bootstrap, "", "configs", "alter", "--entity-type", "users", "--entity-name", "alice",
		"--entity-type", "clients", "--entity-default", "--add-config", "request_percentage=25")
	mustRun(t, bootstrap, "", "quotas", "alter", "--ip-defaults", "--add-config", "connection_creation_rate=10")
	mustRun(t, bootstrap, "", "quotas", "alter", "--client", "app", "--add-config", "controller_mutation_rate=5")
	mustRun(t, bootstrap, "", "quotas", "alter", "--client", "app", "--delete-config", "controller_mutation_rate")

	out := mustRun(t, bootstrap, "", "quotas", "describe").stdout
	for _, want := range []string{
		"user=alice                      consumer_byte_rate=2097152,producer_byte_rate=1048576",
		"user=alice,client-id=<default>  request_percentage=25",
		"ip=<default>                    connection_creation_rate=10",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "app") {
		t.Errorf("removed quota still described:\n%s", out)
	}

	// Exactly alice: strict; with --all, alice's per-client quota too.
	var rows []describedQuota
	if err := json.Unmarshal([]byte(mustRun(t, bootstrap, "", "-o", "json", "configs", "describe", "--entity-type", "users", "--entity-name", "alice").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Quotas["producer_byte_rate"] != 1048576 {
		t.Fatalf("describe alice: %+v", rows)
	}
	if err := json.Unmarshal([]byte(mustRun(t, bootstrap, "", "-o", "json", "quotas", "describe", "--user", "alice", "--all").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("describe alice --all: %+v", rows)
	}
	// Every user entity: an --entity-type without a name.
	if err := json.Unmarshal([]byte(mustRun(t, bootstrap, "", "-o", "json", "quotas", "describe", "--entity-type", "users", "--all").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("describe users: %+v", rows)
	}

	mustFail(t, bootstrap, "", []string{"quotas", "alter", "--user", "bob", "--add-config", "bogus=1"}, "Invalid configuration key bogus")
	mustFail(t, bootstrap, "", []string{"quotas", "alter", "--user", "bob", "--add-config", "producer_byte_rate=-1"}, "must be greater than 0")
	mustFail(t, bootstrap, "", []string{"quotas", "alter", "--entity-type", "groups", "--entity-name", "g", "--add-config", "producer_byte_rate=1"}, "--entity-type must be users, clients or ips")
	mustFail(t, bootstrap, "", []string{"quotas", "alter", "--user", "bob"}, "nothing to alter")
	mustFail(t, bootstrap, "", []string{"quotas", "alter", "--entity-type", "users", "--add-config", "producer_byte_rate=1"}, "give --entity-name or --entity-default")
	mustFail(t, bootstrap, "", []string{"quotas", "alter", "--user", "bob", "--add-config", "producer_byte_rate=fast"}, "must be a number")
}
