package cli

import (
	"strconv"
	"strings"
	"testing"
)

// firstBrokerID returns the node id of the test cluster's first broker.
func firstBrokerID(t *testing.T, bootstrap string) string {
	t.Helper()
	var cluster describedCluster
	decodeJSON(t, mustRun(t, bootstrap, "", "cluster", "describe", "-o", "json").stdout, &cluster)
	if len(cluster.Brokers) == 0 {
		t.Fatalf("cluster has no brokers: %+v", cluster)
	}
	return strconv.Itoa(int(cluster.Brokers[0].NodeID))
}

func TestConfigsTopic(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "settings", 1)

	out := mustRun(t, bootstrap, "", "configs", "alter", "--topic", "settings", "--set", "retention.ms=1000", "--set", "cleanup.policy=compact").stdout
	if want := `Altered topic "settings": set cleanup.policy=compact, retention.ms=1000.`; !strings.Contains(out, want) {
		t.Errorf("configs alter output %q, want %q", out, want)
	}
	out = mustRun(t, bootstrap, "", "configs", "describe", "--topic", "settings").stdout
	if rows := tableRows(out, "retention.ms"); len(rows) != 1 || rows[0][1] != "1000" || rows[0][2] != "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("configs describe rows for retention.ms: %v\n%s", rows, out)
	}
	if rows := tableRows(out, "max.message.bytes"); len(rows) != 0 {
		t.Errorf("configs describe without --all shows a default:\n%s", out)
	}
	var all describedConfigs
	decodeJSON(t, mustRun(t, bootstrap, "", "configs", "describe", "--topic", "settings", "--all", "-o", "json").stdout, &all)
	sources := map[string]string{}
	for _, c := range all.Configs {
		sources[c.Name] = c.Source
	}
	if all.Resource != "topic" || all.Name != "settings" || sources["retention.ms"] != "DYNAMIC_TOPIC_CONFIG" || len(sources) < 3 {
		t.Errorf("configs describe --all -o json: %+v", all)
	}

	mustRun(t, bootstrap, "", "configs", "alter", "--topic", "settings", "--delete", "retention.ms")
	out = mustRun(t, bootstrap, "", "configs", "describe", "--topic", "settings").stdout
	if len(tableRows(out, "retention.ms")) != 0 || len(tableRows(out, "cleanup.policy")) != 1 {
		t.Errorf("after --delete retention.ms:\n%s", out)
	}

	mustFail(t, bootstrap, "", []string{"configs", "describe", "--topic", "missing"}, `topic "missing"`, "UNKNOWN_TOPIC_OR_PARTITION")
	mustFail(t, bootstrap, "", []string{"configs", "alter", "--topic", "missing", "--set", "retention.ms=1"}, `topic "missing"`, "UNKNOWN_TOPIC_OR_PARTITION")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"configs", "describe"}, "give exactly one of --topic, --broker, --broker-defaults or --client-metrics"},
		{[]string{"configs", "describe", "--topic", "settings", "--broker", "1"}, "give exactly one of"},
		{[]string{"configs", "alter", "--topic", "settings"}, "nothing to alter"},
		{[]string{"configs", "alter", "--topic", "settings", "--set", "retention.ms"}, `invalid --set "retention.ms": expected key=value`},
		{[]string{"configs", "describe", "--broker", "-3"}, "--broker must be a node id of 0 or more"},
	} {
		mustFail(t, bootstrap, "", tc.args, tc.want, "--help")
	}
}

func TestConfigsBroker(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	broker := firstBrokerID(t, bootstrap)

	var all describedConfigs
	decodeJSON(t, mustRun(t, bootstrap, "", "configs", "describe", "--broker", broker, "--all", "-o", "json").stdout, &all)
	if all.Resource != "broker" || all.Name != broker || len(all.Configs) == 0 {
		t.Errorf("configs describe --broker --all: %+v", all)
	}

	out := mustRun(t, bootstrap, "", "configs", "alter", "--broker", broker, "--set", "log.retention.ms=7200000").stdout
	if !strings.Contains(out, `Altered broker "`+broker+`": set log.retention.ms=7200000.`) {
		t.Errorf("configs alter --broker output: %q", out)
	}
	out = mustRun(t, bootstrap, "", "configs", "describe", "--broker", broker).stdout
	if rows := tableRows(out, "log.retention.ms"); len(rows) != 1 || rows[0][1] != "7200000" {
		t.Errorf("configs describe --broker after alter:\n%s", out)
	}

	// An invalid value is refused by the broker with a Kafka error name.
	mustFail(t, bootstrap, "", []string{"configs", "alter", "--broker", broker, "--set", "log.retention.ms=forever"},
		`broker "`+broker+`"`, "INVALID_", "hint:")

	out = mustRun(t, bootstrap, "", "configs", "alter", "--broker-defaults", "--set", "log.retention.ms=3600000").stdout
	if !strings.Contains(out, `Altered broker "defaults"`) {
		t.Errorf("configs alter --broker-defaults output: %q", out)
	}
	mustRun(t, bootstrap, "", "configs", "describe", "--broker-defaults")
}
