package cli

import (
	"strings"
	"testing"
)

// TestConfigsClientMetrics sets, describes, lists and removes a
// client-metrics subscription as kafka-client-metrics.sh would.
func TestConfigsClientMetrics(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	out := mustRun(t, bootstrap, "", "configs", "alter", "--client-metrics", "producers",
		"--set", "metrics=org.apache.kafka.producer.", "--set", "interval.ms=60000", "--set", "match=client_software_name=apache-kafka-java").stdout
	if want := `Altered client-metrics "producers": set interval.ms=60000, match=client_software_name=apache-kafka-java, metrics=org.apache.kafka.producer..`; !strings.Contains(out, want) {
		t.Errorf("alter output %q, want %q", out, want)
	}
	out = mustRun(t, bootstrap, "", "configs", "describe", "--client-metrics", "producers").stdout
	if rows := tableRows(out, "interval.ms"); len(rows) != 1 || rows[0][1] != "60000" || rows[0][2] != "CLIENT_METRICS_CONFIG" {
		t.Errorf("describe rows for interval.ms: %v\n%s", rows, out)
	}
	if rows := tableRows(out, "match"); len(rows) != 1 || rows[0][1] != "client_software_name=apache-kafka-java" {
		t.Errorf("describe rows for match: %v\n%s", rows, out)
	}
	out = mustRun(t, bootstrap, "", "configs", "list", "--type", "client-metrics").stdout
	if rows := tableRows(out, "client-metrics"); len(rows) != 1 || rows[0][1] != "producers" {
		t.Errorf("list rows: %v\n%s", rows, out)
	}
	mustFail(t, bootstrap, "", []string{"configs", "alter", "--client-metrics", "producers", "--set", "interval.ms=10"}, `client-metrics "producers"`, "INVALID_REQUEST")
	mustFail(t, bootstrap, "", []string{"configs", "alter", "--client-metrics", "producers", "--set", "match=client_rack=a"}, "INVALID_CONFIG")
	mustFail(t, bootstrap, "", []string{"configs", "list", "--type", "nonsense"}, "unknown --type")
	mustRun(t, bootstrap, "", "configs", "alter", "--client-metrics", "producers", "--delete", "metrics", "--delete", "interval.ms", "--delete", "match")
	out = mustRun(t, bootstrap, "", "configs", "list", "--type", "client-metrics").stdout
	if rows := tableRows(out, "client-metrics"); len(rows) != 0 {
		t.Errorf("the subscription is still listed after removing its configs:\n%s", out)
	}
}
