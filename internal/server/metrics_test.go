package server

import (
	"bufio"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// seriesValue sums the series of metric name whose labels include every one
// of labels (each written name="value"), and reports whether any matched.
func seriesValue(m map[string]float64, name string, labels ...string) (float64, bool) {
	var sum float64
	found := false
	for series, v := range m {
		seriesName, rest, _ := strings.Cut(series, "{")
		if seriesName != name {
			continue
		}
		matches := true
		for _, l := range labels {
			matches = matches && strings.Contains(rest, l)
		}
		if matches {
			sum += v
			found = true
		}
	}
	return sum, found
}

// loadNode starts a node that fsyncs every append, and drives it the way an
// operator's dashboard expects to see it used: a topic produced to and
// consumed from, and a group with a committed offset behind the log end. It
// returns the node and scrapes from before and after the load.
func loadNode(t *testing.T) (tn *testNode, before, after map[string]float64) {
	t.Helper()
	tn = startTestNode(t, "log.flush.interval.messages=1")
	adm := tn.admin()
	mustCreateTopic(t, adm, "diag", 2, nil)
	mustCreateTopic(t, adm, "lagged", 1, nil)
	before = scrape(t, tn)

	produceKeyed(t, tn.client(), "diag", 100)
	consumeAll(t, tn, "diag", 100)
	produceKeyed(t, tn.client(), "lagged", 50)
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "lagged", Partition: 0, At: 20, LeaderEpoch: -1})
	committed, err := adm.CommitOffsets(testContext(t), "lag-group", offsets)
	if err != nil {
		t.Fatal(err)
	}
	if err := committed.Error(); err != nil {
		t.Fatal(err)
	}
	return tn, before, scrape(t, tn)
}

// TestMetricsDiagnosticSeries checks that every series the bottleneck
// diagnosis in docs/operations.md relies on is exported, and that the ones
// that count work move when the node works.
func TestMetricsDiagnosticSeries(t *testing.T) {
	tn, before, after := loadNode(t)

	grows := []struct {
		name   string
		labels []string
	}{
		{"samsa_requests_total", []string{`api="Produce"`}},
		{"samsa_requests_total", []string{`api="Fetch"`}},
		{"samsa_request_total_seconds_count", []string{`api="Produce"`}},
		{"samsa_request_queue_seconds_count", []string{`api="Fetch"`}},
		{"samsa_request_local_seconds_count", []string{`api="Produce"`}},
		{"samsa_request_send_seconds_count", []string{`api="Fetch"`}},
		{"samsa_topic_bytes_in_total", []string{`topic="diag"`}},
		{"samsa_topic_messages_in_total", []string{`topic="diag"`}},
		{"samsa_topic_bytes_out_total", []string{`topic="diag"`}},
		{"samsa_log_flush_seconds_count", []string{`kind="file"`}},
		{"samsa_log_size_bytes", []string{`topic="diag"`}},
		{"samsa_log_end_offset", []string{`topic="diag"`}},
		{"samsa_network_received_bytes_total", nil},
		{"samsa_network_sent_bytes_total", nil},
		{"samsa_network_responses_sent_total", nil},
		{"samsa_network_handler_idle_seconds_total", nil},
		{"samsa_network_network_busy_seconds_total", nil},
		{"go_gc_duration_seconds_count", nil},
	}
	for _, g := range grows {
		was, _ := seriesValue(before, g.name, g.labels...)
		now, ok := seriesValue(after, g.name, g.labels...)
		if !ok {
			t.Errorf("%s%v missing", g.name, g.labels)
		} else if now <= was && g.name != "go_gc_duration_seconds_count" {
			t.Errorf("%s%v did not grow: %v -> %v", g.name, g.labels, was, now)
		}
	}

	for _, name := range []string{
		"samsa_network_request_queue_size", "samsa_network_request_queue_capacity",
		"samsa_network_handler_threads", "samsa_network_network_threads", "samsa_network_connections",
		"samsa_purgatory_fetch_size", "samsa_purgatory_produce_size",
		"samsa_under_replicated_partitions", "samsa_under_min_isr_partitions", "samsa_offline_partitions", "samsa_reassigning_partitions",
		"samsa_active_controller_count", "samsa_partitions", "samsa_topics", "samsa_log_segments",
		"samsa_metadata_log_offset", "samsa_metadata_log_end_offset", "samsa_metadata_lag_records",
		"samsa_group_lag_truncated", "go_memstats_heap_alloc_bytes", "go_goroutines",
	} {
		if _, ok := seriesValue(after, name); !ok {
			t.Errorf("series %s missing", name)
		}
	}

	// The idle ratios cover the time since the previous scrape (at least a
	// second): keep producing until a window with requests in it has passed.
	ratios := []string{"samsa_request_handler_avg_idle_ratio", "samsa_network_processor_avg_idle_ratio"}
	busyDeadline := time.Now().Add(20 * time.Second)
	producer := tn.client()
	for busy := false; !busy; {
		produceKeyed(t, producer, "diag", 10)
		m := scrape(t, tn)
		busy = true
		for _, name := range ratios {
			v, ok := seriesValue(m, name)
			if !ok || v < 0 || v > 1 {
				t.Fatalf("%s = %v (present %v), want a ratio in [0, 1]", name, v, ok)
			}
			busy = busy && v < 1
		}
		if !busy && time.Now().After(busyDeadline) {
			t.Fatalf("idle ratios stayed at 1 while requests were served: %v", ratios)
		}
	}

	group := []string{`group="lag-group"`, `topic="lagged"`, `partition="0"`}
	if v, _ := seriesValue(after, "samsa_group_committed_offset", group...); v != 20 {
		t.Errorf("samsa_group_committed_offset = %v, want 20", v)
	}
	if v, _ := seriesValue(after, "samsa_group_lag_records", group...); v != 30 {
		t.Errorf("samsa_group_lag_records = %v, want 30 (50 produced, 20 committed)", v)
	}

	end, _ := seriesValue(after, "samsa_metadata_log_end_offset")
	applied, _ := seriesValue(after, "samsa_metadata_log_offset")
	if lag, _ := seriesValue(after, "samsa_metadata_lag_records"); lag != 0 || end != applied+1 {
		t.Errorf("metadata log end %v, applied %v, lag %v: want everything applied", end, applied, lag)
	}

	// The idle ratios come from the window since the previous scrape: after
	// a second with no requests the handlers were idle all along.
	deadline := time.Now().Add(10 * time.Second)
	for {
		idle, _ := seriesValue(scrape(t, tn), "samsa_request_handler_avg_idle_ratio")
		if idle > 0.99 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handler idle ratio still %v with no requests", idle)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// metricNames returns the metric families a node exposes, from the # TYPE
// lines of /metrics, with the series names histograms and summaries add.
func metricNames(t *testing.T, tn *testNode) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + tn.node.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 || fields[0] != "#" || fields[1] != "TYPE" {
			continue
		}
		names[fields[2]] = true
		switch fields[3] {
		case "histogram":
			names[fields[2]+"_bucket"] = true
			fallthrough
		case "summary":
			names[fields[2]+"_sum"] = true
			names[fields[2]+"_count"] = true
		}
	}
	return names
}

var metricNameRE = regexp.MustCompile(`\b(?:samsa|go|process)_[a-zA-Z0-9_]+`)

// TestDashboardAndDocsNameRealMetrics checks that the Grafana dashboard and
// the operations guide only name metrics a running node exposes, so neither
// drifts when a metric is renamed.
func TestDashboardAndDocsNameRealMetrics(t *testing.T) {
	tn, _, _ := loadNode(t)
	exposed := metricNames(t, tn)

	dashboard := readDashboard(t)
	var exprs []string
	collectExprs(dashboard, &exprs)
	if len(exprs) < 20 {
		t.Fatalf("dashboard has %d queries; expected one per panel", len(exprs))
	}
	used := map[string]bool{}
	for _, expr := range exprs {
		for _, name := range metricNameRE.FindAllString(expr, -1) {
			used[name] = true
			if !exposed[name] {
				t.Errorf("dashboard query %q names %s, which the broker does not expose", expr, name)
			}
		}
	}
	// The diagnosis metrics must each be on the dashboard.
	for _, name := range []string{
		"samsa_request_handler_avg_idle_ratio", "samsa_network_processor_avg_idle_ratio",
		"samsa_network_request_queue_size", "samsa_request_total_seconds_bucket", "samsa_log_flush_seconds_bucket",
		"samsa_group_lag_records", "samsa_under_replicated_partitions", "samsa_log_size_bytes",
	} {
		if !used[name] {
			t.Errorf("dashboard does not chart %s", name)
		}
	}

	doc := readRepoFile(t, "docs/operations.md")
	var missing []string
	for _, name := range metricNameRE.FindAllString(doc, -1) {
		if !exposed[name] && !strings.HasSuffix(name, "_") {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/operations.md names metrics the broker does not expose: %v", missing)
	}
}

// TestMetricsReplicationGauges checks the replication gauges of a single
// node: a topic asking for more in-sync replicas than it has counts as
// under min ISR by its own min.insync.replicas (the broker's is 1), and the
// node, as the only controller, is the active one.
func TestMetricsReplicationGauges(t *testing.T) {
	tn := startTestNode(t)
	two := "2"
	mustCreateTopic(t, tn.admin(), "strict", 2, map[string]*string{"min.insync.replicas": &two})
	mustCreateTopic(t, tn.admin(), "lenient", 1, nil)
	var m map[string]float64
	deadline := time.Now().Add(10 * time.Second)
	for {
		m = scrape(t, tn)
		if v, _ := seriesValue(m, "samsa_partitions"); v == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("samsa_partitions never reached 3")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, want := range map[string]float64{
		"samsa_under_min_isr_partitions":    2,
		"samsa_under_replicated_partitions": 0,
		"samsa_offline_partitions":          0,
		"samsa_active_controller_count":     1,
		"samsa_isr_shrinks_total":           0,
		"samsa_isr_expands_total":           0,
		"samsa_isr_updates_failed_total":    0,
	} {
		if v, ok := seriesValue(m, name); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
}
