package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchAgainstARealBroker runs each bench mode briefly against a real
// node and checks that records flowed; it asserts nothing about speed.
func TestBenchAgainstARealBroker(t *testing.T) {
	bootstrap := startTestBroker(t)
	produced := mustRun(t, bootstrap, "", "bench", "produce", "perf", "--num-records", "3000",
		"--record-size", "100", "--partitions", "3", "--keys", "random:100", "--acks", "all", "--report-interval", "50ms")
	if !strings.Contains(produced.stdout, "produce perf: 3000 records") || !strings.Contains(produced.stdout, "; 0 errors") {
		t.Fatalf("produce summary: %q", produced.stdout)
	}
	if !strings.Contains(produced.stderr, `created topic "perf" with 3 partitions`) {
		t.Errorf("produce did not say it created the topic: %q", produced.stderr)
	}
	// The producer's warm-up record is in the topic too.
	for _, raw := range []string{"--raw=false", "--raw=true"} {
		consumed := mustRun(t, bootstrap, "", "-o", "json", "bench", "consume", "perf", "--num-records", "3001", raw)
		var summary benchSummary
		if err := json.Unmarshal([]byte(consumed.stdout), &summary); err != nil {
			t.Fatalf("consume %s: %v in %q", raw, err, consumed.stdout)
		}
		if summary.Records != 3001 || summary.Errors != 0 || summary.Mode != "consume" {
			t.Errorf("consume %s: %+v", raw, summary)
		}
	}
	e2e := mustRun(t, bootstrap, "", "bench", "e2e", "perf", "--duration", "300ms", "--throughput", "1000", "--record-size", "64")
	if !strings.Contains(e2e.stdout, "end-to-end latency p50") {
		t.Errorf("e2e summary: %q", e2e.stdout)
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "produce", "--acks", "2"}, "invalid --acks"},
		{[]string{"bench", "produce", "--keys", "zipf:3"}, "invalid --keys"},
		{[]string{"bench", "produce", "--compression", "brotli"}, "invalid --compression"},
		{[]string{"bench", "produce", "--duration", "0s"}, "set --num-records or --duration"},
		{[]string{"bench", "produce", "--throughput", "5", "--throughput-mb", "5"}, "not both"},
		{[]string{"bench", "e2e", "--record-size", "4"}, "at least 8"},
		{[]string{"bench", "consume", "--idle-timeout", "0s"}, "--idle-timeout must be positive"},
		{[]string{"bench", "produce", "a", "b"}, "accepts at most 1 arg"},
	} {
		mustFail(t, "127.0.0.1:1", "", c.args, c.want)
	}
}
