package cli

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestTopicsLifecycle(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)

	out := mustRun(t, bootstrap, "", "topics", "create", "orders", "--partitions", "3", "--replication-factor", "1",
		"--config", "retention.ms=86400000").stdout
	if want := `Created topic "orders" with 3 partitions and replication factor 1.`; !strings.Contains(out, want) {
		t.Errorf("create output %q, want %q", out, want)
	}

	out = mustRun(t, bootstrap, "", "topics", "list").stdout
	if !strings.HasPrefix(out, "TOPIC") {
		t.Errorf("list output has no header:\n%s", out)
	}
	if rows := tableRows(out, "orders"); len(rows) != 1 || rows[0][1] != "3" || rows[0][2] != "1" {
		t.Errorf("list rows for orders = %v, want [[orders 3 1]]\n%s", rows, out)
	}
	var listed []topicSummary
	decodeJSON(t, mustRun(t, bootstrap, "", "topics", "list", "-o", "json").stdout, &listed)
	if len(listed) != 1 || listed[0].Topic != "orders" || listed[0].Partitions != 3 || listed[0].ReplicationFactor != 1 {
		t.Errorf("list -o json = %+v", listed)
	}

	out = mustRun(t, bootstrap, "", "topics", "describe", "orders").stdout
	if !strings.Contains(out, "retention.ms=86400000") {
		t.Errorf("describe does not show the config override:\n%s", out)
	}
	for _, header := range []string{"LEADER", "REPLICAS", "ISR"} {
		if !strings.Contains(out, header) {
			t.Errorf("describe output lacks column %s:\n%s", header, out)
		}
	}
	// One summary row and three partition rows.
	if rows := tableRows(out, "orders"); len(rows) != 4 {
		t.Errorf("describe has %d rows for orders, want 4:\n%s", len(rows), out)
	}

	var described []describedTopic
	decodeJSON(t, mustRun(t, bootstrap, "", "topics", "describe", "orders", "-o", "json").stdout, &described)
	if len(described) != 1 || len(described[0].Partitions) != 3 {
		t.Fatalf("describe -o json = %+v", described)
	}
	for _, p := range described[0].Partitions {
		if p.Leader < 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Errorf("partition %+v: want a leader, one replica, one ISR member", p)
		}
	}
	if got := described[0].Configs["retention.ms"]; got != "86400000" {
		t.Errorf("describe -o json configs[retention.ms] = %q", got)
	}

	out = mustRun(t, bootstrap, "", "topics", "alter", "orders", "--partitions", "5",
		"--config", "retention.ms=1000", "--config", "cleanup.policy=compact").stdout
	if !strings.Contains(out, "partitions set to 5") || !strings.Contains(out, "set cleanup.policy=compact, retention.ms=1000") {
		t.Errorf("alter output: %q", out)
	}
	mustRun(t, bootstrap, "", "topics", "alter", "orders", "--delete-config", "cleanup.policy")
	decodeJSON(t, mustRun(t, bootstrap, "", "topics", "describe", "orders", "-o", "json").stdout, &described)
	if len(described[0].Partitions) != 5 {
		t.Errorf("after alter: %d partitions, want 5", len(described[0].Partitions))
	}
	if got, want := described[0].Configs, map[string]string{"retention.ms": "1000"}; len(got) != 1 || got["retention.ms"] != want["retention.ms"] {
		t.Errorf("after alter: configs %v, want %v", got, want)
	}

	out = mustRun(t, bootstrap, "", "topics", "delete", "orders").stdout
	if !strings.Contains(out, `Deleted topic "orders".`) {
		t.Errorf("delete output: %q", out)
	}
	eventually(t, "orders to disappear from topics list", func() bool {
		return len(tableRows(mustRun(t, bootstrap, "", "topics", "list").stdout, "orders")) == 0
	})
}

func TestTopicsCreateErrors(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "dup", 1)

	mustFail(t, bootstrap, "", []string{"topics", "create", "dup"}, "TOPIC_ALREADY_EXISTS", "hint:")
	out := mustRun(t, bootstrap, "", "topics", "create", "dup", "--if-not-exists").stdout
	if !strings.Contains(out, "already exists") {
		t.Errorf("create --if-not-exists output: %q", out)
	}
	mustFail(t, bootstrap, "", []string{"topics", "create", "wide", "--replication-factor", "5"},
		"INVALID_REPLICATION_FACTOR", "samsa cluster describe")
	mustFail(t, bootstrap, "", []string{"topics", "create", "bad", "--config", "retention.ms"},
		`invalid --config "retention.ms": expected key=value`, "samsa topics create --help")
	mustFail(t, bootstrap, "", []string{"topics", "create", "bad", "--config", "a=1", "--config", "a=2"}, "given more than once")
	mustFail(t, bootstrap, "", []string{"topics", "create", "bad", "--partitions", "0"}, "--partitions must be at least 1")
	mustFail(t, bootstrap, "", []string{"topics", "create"}, "missing TOPIC argument")
	mustFail(t, bootstrap, "", []string{"topics", "alter", "dup"}, "nothing to alter")
	mustFail(t, bootstrap, "", []string{"topics", "alter", "dup", "--partitions", "1", "--config", "x=1", "--delete-config", "x"},
		"both set and deleted")
}

func TestTopicsUnknownTopic(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	for _, args := range [][]string{
		{"topics", "describe", "missing"},
		{"topics", "alter", "missing", "--partitions", "2"},
		{"topics", "alter", "missing", "--config", "retention.ms=1000"},
		{"topics", "delete", "missing"},
	} {
		mustFail(t, bootstrap, "", args, `"missing"`, "UNKNOWN_TOPIC_OR_PARTITION", "samsa topics list")
	}
	out := mustRun(t, bootstrap, "", "topics", "delete", "missing", "--if-exists").stdout
	if !strings.Contains(out, `Topic "missing" does not exist.`) {
		t.Errorf("delete --if-exists output: %q", out)
	}
}

func TestTopicsDescribeFilters(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "healthy", 2)

	for _, filter := range []string{"--under-replicated", "--unavailable"} {
		out := mustRun(t, bootstrap, "", "topics", "describe", filter).stdout
		if rows := tableRows(out, "healthy"); len(rows) != 0 {
			t.Errorf("describe %s lists healthy partitions:\n%s", filter, out)
		}
		if strings.Contains(out, "REPLICATION-FACTOR") {
			t.Errorf("describe %s prints the topic summary:\n%s", filter, out)
		}
	}
}

func TestPartitionFilterMatches(t *testing.T) {
	t.Parallel()
	live := map[int32]bool{1: true, 2: true, 3: true}
	healthy := kadm.PartitionDetail{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	shrunk := kadm.PartitionDetail{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1}}
	leaderless := kadm.PartitionDetail{Leader: -1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	deadLeader := kadm.PartitionDetail{Leader: 7, Replicas: []int32{7}, ISR: []int32{7}}
	for _, tc := range []struct {
		name      string
		filter    partitionFilter
		partition kadm.PartitionDetail
		want      bool
	}{
		{"no filter keeps all", partitionFilter{}, shrunk, true},
		{"under-replicated drops healthy", partitionFilter{underReplicated: true}, healthy, false},
		{"under-replicated keeps shrunk ISR", partitionFilter{underReplicated: true}, shrunk, true},
		{"unavailable drops healthy", partitionFilter{unavailable: true}, healthy, false},
		{"unavailable keeps leaderless", partitionFilter{unavailable: true}, leaderless, true},
		{"unavailable keeps dead leader", partitionFilter{unavailable: true}, deadLeader, true},
		{"unavailable drops shrunk ISR with leader", partitionFilter{unavailable: true}, shrunk, false},
		{"both keep either", partitionFilter{underReplicated: true, unavailable: true}, leaderless, true},
	} {
		if got := tc.filter.matches(tc.partition, live); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
