package kafkatools

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestKafkaToolsAgainstThreeNodes runs the tools that move replicas and
// leaders, kafka-reassign-partitions and kafka-leader-election, against a
// three-node cluster, and kafka-metadata-quorum against its three voters.
func TestKafkaToolsAgainstThreeNodes(t *testing.T) {
	needTools(t)
	c := clustertest.StartCluster(t, 3, "auto.create.topics.enable=false")
	b := strings.Join(c.Addrs(), ",")
	const topic = "moved"

	// Partition 0 on brokers 1 and 2, led by 1; partition 1 on 2 and 3.
	mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--replica-assignment", "1:2,2:3")
	describe := func() string {
		return mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--describe", "--topic", topic)
	}
	waitFor(t, 30*time.Second, func() error {
		out := describe()
		if !strings.Contains(out, "Partition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2") {
			return fmt.Errorf("partition 0 not yet led by 1 with ISR 1,2:\n%s", out)
		}
		return nil
	})

	t.Run("kafka-reassign-partitions", func(t *testing.T) {
		plan := filepath.Join(t.TempDir(), "plan.json")
		os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"`+topic+`","partition":0,"replicas":[2,3]}]}`), 0o644)
		out := mustTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", b, "--reassignment-json-file", plan, "--execute",
			"--throttle", "5000000")
		mustContain(t, "execute", out, "Current partition replica assignment", `"replicas":[1,2]`,
			"The inter-broker throttle limit was set to 5000000 B/s",
			"Successfully started partition reassignment for "+topic+"-0")
		// --throttle set the topic's throttled replicas (leader side on the
		// current replicas, follower side on the new one) and the rates on
		// the brokers of the move.
		topicConfigs := func() string {
			return mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--describe", "--entity-type", "topics", "--entity-name", topic)
		}
		mustContain(t, "topic throttles", topicConfigs(), "leader.replication.throttled.replicas=0:1,0:2", "follower.replication.throttled.replicas=0:3")
		mustContain(t, "broker throttles",
			mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--describe", "--entity-type", "brokers", "--entity-name", "3"),
			"leader.replication.throttled.rate=5000000", "follower.replication.throttled.rate=5000000")
		// Once the reassignment is complete --verify clears the replication
		// throttles: it deletes the broker-level throttle rates on every
		// broker (each BROKER resource sent to the broker it names) and the
		// topic's throttled replica lists.
		verified := waitTool(t, 60*time.Second, func(out string) error {
			if !strings.Contains(out, "Reassignment of partition "+topic+"-0 is completed.") {
				return fmt.Errorf("not completed")
			}
			return nil
		}, "kafka-reassign-partitions", "--bootstrap-server", b, "--reassignment-json-file", plan, "--verify")
		mustContain(t, "verify", verified, "Clearing broker-level throttles on brokers 1,2,3", "Clearing topic-level throttles on topic "+topic)
		if out := topicConfigs(); strings.Contains(out, "throttled.replicas") {
			t.Fatalf("topic throttles left after --verify:\n%s", out)
		}
		if out := mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--describe", "--entity-type", "brokers", "--entity-name", "3"); strings.Contains(out, "throttled.rate") {
			t.Fatalf("broker throttles left after --verify:\n%s", out)
		}
		waitFor(t, 30*time.Second, func() error {
			if out := describe(); !strings.Contains(out, "Partition: 0\tLeader: 2\tReplicas: 2,3\tIsr: 2,3") {
				return fmt.Errorf("partition 0 after the reassignment:\n%s", out)
			}
			return nil
		})
		out = mustTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", b, "--list")
		mustContain(t, "list", out, "No partition reassignments found.")
	})

	t.Run("kafka-leader-election", func(t *testing.T) {
		// Make broker 3 the preferred replica of partition 1 (replicas 3,2:
		// a reorder moves no data), then elect it.
		plan := filepath.Join(t.TempDir(), "order.json")
		os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"`+topic+`","partition":1,"replicas":[3,2]}]}`), 0o644)
		mustTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", b, "--reassignment-json-file", plan, "--execute")
		waitFor(t, 30*time.Second, func() error {
			if out := describe(); !strings.Contains(out, "Partition: 1\tLeader: 2\tReplicas: 3,2") {
				return fmt.Errorf("partition 1 not yet reordered to 3,2 and still led by 2:\n%s", out)
			}
			return nil
		})
		out := mustTool(t, "", "kafka-leader-election", "--bootstrap-server", b, "--election-type", "PREFERRED",
			"--topic", topic, "--partition", "1")
		mustContain(t, "preferred election", out, "Successfully completed leader election (PREFERRED) for partitions "+topic+"-1")
		mustContain(t, "after the election", describe(), "Partition: 1\tLeader: 3\tReplicas: 3,2")
		out = mustTool(t, "", "kafka-leader-election", "--bootstrap-server", b, "--election-type", "PREFERRED",
			"--topic", topic, "--partition", "1")
		mustContain(t, "second election", out, "Valid replica already elected for partitions "+topic+"-1")
	})

	t.Run("kafka-metadata-quorum", func(t *testing.T) {
		out := mustTool(t, "", "kafka-metadata-quorum", "--bootstrap-server", b, "describe", "--replication")
		rows := tableRows(out, "NodeId")
		statuses := map[string]int{}
		for _, r := range rows {
			statuses[r["Status"]]++
		}
		if statuses["Leader"] != 1 || statuses["Follower"] != 2 {
			t.Fatalf("describe --replication: want one Leader and two Followers:\n%s", out)
		}
	})

	// Kafka 4.4's controllers answer DescribeConfigs (KIP-919): the tool
	// talks to the controller listeners only.
	t.Run("kafka-configs --bootstrap-controller", func(t *testing.T) {
		controller := "127.0.0.1:" + strconv.Itoa(c.Nodes[1].ControllerPort)
		out := mustTool(t, "", "kafka-configs", "--bootstrap-controller", controller,
			"--entity-type", "brokers", "--entity-name", "2", "--describe", "--all")
		mustContain(t, "broker describe --all", out, "All configs for broker 2 are:", "auto.create.topics.enable=false",
			"min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1")
		out = mustTool(t, "", "kafka-configs", "--bootstrap-controller", controller,
			"--entity-type", "brokers", "--entity-default", "--describe")
		mustContain(t, "cluster defaults", out, "Default configs for brokers in the cluster are:", "min.insync.replicas=1")
	})
}

func waitFor(t *testing.T, limit time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
