package kafkatools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestKafkaToolsAgainstOneNode runs Kafka's tools, one after another,
// against one samsa node, checking what each prints.
func TestKafkaToolsAgainstOneNode(t *testing.T) {
	needTools(t)
	node := clustertest.StartNode(t, "auto.create.topics.enable=false")
	b := node.Addr()
	const topic = "tools"

	t.Run("kafka-topics", func(t *testing.T) {
		out := mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic,
			"--partitions", "3", "--replication-factor", "1", "--config", "retention.ms=3600000")
		mustContain(t, "create", out, "Created topic "+topic+".")
		r := tool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "3")
		if r.err == nil {
			t.Fatalf("creating %s again succeeded:\n%s", topic, r.stdout)
		}
		mustContain(t, "create again", r.stdout+r.stderr, "Topic '"+topic+"' already exists.")
		mustContain(t, "list", mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--list"), topic+"\n")
		out = mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--describe", "--topic", topic)
		mustContain(t, "describe", out, "Topic: "+topic+"\tTopicId: ", "PartitionCount: 3", "ReplicationFactor: 1",
			// A new cluster holds Kafka's cluster-level min.insync.replicas
			// (DYNAMIC_DEFAULT_BROKER_CONFIG), which the tool lists first.
			"Configs: min.insync.replicas=1,retention.ms=3600000", "Partition: 2\tLeader: 1\tReplicas: 1\tIsr: 1")
		mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", "tools-gone", "--partitions", "1")
		mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--alter", "--topic", "tools-gone", "--partitions", "2")
		mustContain(t, "describe after alter", mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--describe", "--topic", "tools-gone"),
			"PartitionCount: 2")
		mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--delete", "--topic", "tools-gone")
		waitTool(t, 15*time.Second, func(out string) error {
			if strings.Contains(out, "tools-gone\n") {
				return fmt.Errorf("deleted topic still listed")
			}
			return nil
		}, "kafka-topics", "--bootstrap-server", b, "--list")
	})

	t.Run("kafka-console-producer and consumer", func(t *testing.T) {
		mustTool(t, keyValueLines(100), "kafka-console-producer", "--bootstrap-server", b, "--topic", topic,
			"--reader-property", "parse.key=true", "--reader-property", "key.separator=:")
		out := mustTool(t, "", "kafka-console-consumer", "--bootstrap-server", b, "--topic", topic, "--from-beginning",
			"--max-messages", "100", "--group", "tools-group", "--timeout-ms", "30000",
			"--formatter-property", "print.key=true", "--formatter-property", "key.separator=:")
		got := strings.Split(strings.TrimSpace(out), "\n")
		want := strings.Split(strings.TrimSpace(keyValueLines(100)), "\n")
		if len(got) != len(want) {
			t.Fatalf("console consumer printed %d records, want %d:\n%s", len(got), len(want), out)
		}
		seen := map[string]bool{}
		for _, l := range got {
			seen[l] = true
		}
		for _, w := range want {
			if !seen[w] {
				t.Fatalf("console consumer did not print %q:\n%s", w, out)
			}
		}
	})

	t.Run("kafka-get-offsets", func(t *testing.T) {
		latest := offsets(t, mustTool(t, "", "kafka-get-offsets", "--bootstrap-server", b, "--topic", topic), topic)
		if len(latest) != 3 || sum(latest) != 100 {
			t.Fatalf("latest offsets %v, want 3 partitions adding up to 100", latest)
		}
		earliest := offsets(t, mustTool(t, "", "kafka-get-offsets", "--bootstrap-server", b, "--topic", topic, "--time", "-2"), topic)
		if sum(earliest) != 0 {
			t.Fatalf("earliest offsets %v, want all 0", earliest)
		}
	})

	t.Run("kafka-consumer-groups", func(t *testing.T) {
		mustContain(t, "list", mustTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--list"), "tools-group")
		r := tool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--group", "tools-group")
		if r.err != nil {
			t.Fatalf("describe: %v\n%s", r.err, r.stderr)
		}
		mustContain(t, "describe", r.stderr, "Consumer group 'tools-group' has no active members.")
		out := r.stdout
		rows := tableRows(out, "GROUP")
		var current int64
		for _, r := range rows {
			c, _ := strconv.ParseInt(r["CURRENT-OFFSET"], 10, 64)
			current += c
			if r["LAG"] != "0" {
				t.Fatalf("describe: lag %s on partition %s, want 0:\n%s", r["LAG"], r["PARTITION"], out)
			}
		}
		if len(rows) != 3 || current != 100 {
			t.Fatalf("describe: %d rows with current offsets adding up to %d, want 3 and 100:\n%s", len(rows), current, out)
		}
		out = mustTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--reset-offsets", "--group", "tools-group",
			"--topic", topic, "--to-earliest", "--execute")
		rows = tableRows(out, "GROUP")
		if len(rows) != 3 {
			t.Fatalf("reset offsets: %d rows, want 3:\n%s", len(rows), out)
		}
		for _, r := range rows {
			if r["NEW-OFFSET"] != "0" {
				t.Fatalf("reset offsets to earliest: %v:\n%s", r, out)
			}
		}
		out = mustTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--reset-offsets", "--group", "tools-group",
			"--topic", topic+":0", "--to-offset", "3", "--execute")
		if rows = tableRows(out, "GROUP"); len(rows) != 1 || rows[0]["NEW-OFFSET"] != "3" {
			t.Fatalf("reset partition 0 to offset 3: %v:\n%s", rows, out)
		}
		out = mustTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--group", "tools-group", "--offsets")
		var lag int64
		for _, r := range tableRows(out, "GROUP") {
			l, _ := strconv.ParseInt(r["LAG"], 10, 64)
			lag += l
		}
		if lag != 97 {
			t.Fatalf("describe after the resets: lag adds up to %d, want 97:\n%s", lag, out)
		}
		mustContain(t, "state", mustTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--group", "tools-group", "--state"),
			"Empty")
		mustContain(t, "delete", mustTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--delete", "--group", "tools-group"),
			"Deletion of requested consumer groups ('tools-group') was successful.")
	})

	t.Run("kafka-configs", func(t *testing.T) {
		out := mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic,
			"--alter", "--add-config", "retention.ms=7200000,segment.ms=600000")
		mustContain(t, "alter", out, "Completed updating config for topic "+topic+".")
		out = mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic, "--describe")
		mustContain(t, "describe", out, "Dynamic configs for topic "+topic+" are:",
			"retention.ms=7200000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=7200000}", "segment.ms=600000")
		mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic,
			"--alter", "--delete-config", "segment.ms")
		out = mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic, "--describe")
		if strings.Contains(out, "segment.ms=") {
			t.Fatalf("segment.ms still set after --delete-config:\n%s", out)
		}
		out = mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "brokers", "--entity-name", "1", "--describe", "--all")
		mustContain(t, "broker describe --all", out, "All configs for broker 1 are:", "auto.create.topics.enable=false")
		r := tool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic,
			"--alter", "--add-config", "retention.ms=forever")
		if r.err == nil {
			t.Fatalf("retention.ms=forever accepted:\n%s", r.stdout)
		}
	})

	t.Run("kafka-delete-records", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "delete.json")
		os.WriteFile(file, []byte(`{"partitions":[{"topic":"`+topic+`","partition":0,"offset":2}],"version":1}`), 0o644)
		out := mustTool(t, "", "kafka-delete-records", "--bootstrap-server", b, "--offset-json-file", file)
		mustContain(t, "delete records", out, "Records delete operation completed:", "partition: "+topic+"-0\tlow_watermark: 2")
		earliest := offsets(t, mustTool(t, "", "kafka-get-offsets", "--bootstrap-server", b, "--topic", topic, "--partitions", "0", "--time", "-2"), topic)
		if earliest[0] != 2 {
			t.Fatalf("earliest offset of partition 0 after delete records: %d, want 2", earliest[0])
		}
	})

	t.Run("kafka-log-dirs", func(t *testing.T) {
		out := mustTool(t, "", "kafka-log-dirs", "--bootstrap-server", b, "--describe", "--topic-list", topic)
		var doc struct {
			Brokers []struct {
				Broker  int
				LogDirs []struct {
					LogDir     string
					Error      *string
					Partitions []struct {
						Partition string
						Size      int64
					}
				}
			}
		}
		line := out[strings.Index(out, "{"):]
		if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &doc); err != nil {
			t.Fatalf("kafka-log-dirs JSON: %v\n%s", err, out)
		}
		if len(doc.Brokers) != 1 || len(doc.Brokers[0].LogDirs) != 1 || len(doc.Brokers[0].LogDirs[0].Partitions) != 3 {
			t.Fatalf("kafka-log-dirs: want one broker, one dir, 3 partitions:\n%s", out)
		}
		for _, p := range doc.Brokers[0].LogDirs[0].Partitions {
			if !strings.HasPrefix(p.Partition, topic+"-") || p.Size <= 0 {
				t.Fatalf("kafka-log-dirs partition %+v", p)
			}
		}
	})

	t.Run("kafka-metadata-quorum", func(t *testing.T) {
		out := mustTool(t, "", "kafka-metadata-quorum", "--bootstrap-server", b, "describe", "--status")
		for _, w := range []string{"ClusterId:", "LeaderId:               1", "LeaderEpoch:", "HighWatermark:", "CurrentVoters:          [{\"id\": 1"} {
			mustContain(t, "describe --status", out, w)
		}
		out = mustTool(t, "", "kafka-metadata-quorum", "--bootstrap-server", b, "describe", "--replication")
		rows := tableRows(out, "NodeId")
		if len(rows) != 1 || rows[0]["Status"] != "Leader" || rows[0]["Lag"] != "0" {
			t.Fatalf("describe --replication: %v:\n%s", rows, out)
		}
		if rows[0]["LastFetchTimestamp"] == "-1" || rows[0]["LastCaughtUpTimestamp"] == "-1" {
			t.Fatalf("describe --replication: the leader's timestamps are -1 (Kafka reports now):\n%s", out)
		}
	})

	t.Run("kafka-features", func(t *testing.T) {
		out := mustTool(t, "", "kafka-features", "--bootstrap-server", b, "describe")
		mustContain(t, "describe", out, "Feature: metadata.version", "Feature: transaction.version", "FinalizedVersionLevel:")
	})

	t.Run("kafka-transactions", func(t *testing.T) {
		transact(t, b, topic, "tools-txid")
		out := mustTool(t, "", "kafka-transactions", "--bootstrap-server", b, "list")
		rows := tableRows(out, "TransactionalId")
		found := false
		for _, r := range rows {
			if r["TransactionalId"] == "tools-txid" {
				found = r["TransactionState"] == "CompleteCommit" && r["Coordinator"] == "1"
			}
		}
		if !found {
			t.Fatalf("list: no tools-txid in CompleteCommit on coordinator 1:\n%s", out)
		}
		out = mustTool(t, "", "kafka-transactions", "--bootstrap-server", b, "describe", "--transactional-id", "tools-txid")
		rows = tableRows(out, "CoordinatorId")
		if len(rows) != 1 || rows[0]["TransactionalId"] != "tools-txid" || rows[0]["TransactionState"] != "CompleteCommit" || rows[0]["TransactionTimeoutMs"] != "60000" {
			t.Fatalf("describe: %v:\n%s", rows, out)
		}
		out = mustTool(t, "", "kafka-transactions", "--bootstrap-server", b, "describe-producers", "--topic", topic, "--partition", "1")
		if rows = tableRows(out, "ProducerId"); len(rows) == 0 {
			t.Fatalf("describe-producers lists no producer of %s-1:\n%s", topic, out)
		}
	})

	t.Run("kafka-producer-perf-test and kafka-consumer-perf-test", func(t *testing.T) {
		mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", "perf", "--partitions", "2")
		out := mustTool(t, "", "kafka-producer-perf-test", "--topic", "perf", "--num-records", "20000", "--record-size", "100",
			"--throughput", "-1", "--command-property", "bootstrap.servers="+b, "acks=all")
		mustContain(t, "producer perf", out, "20000 records sent,", "records/sec", "99th")
		out = mustTool(t, "", "kafka-consumer-perf-test", "--bootstrap-server", b, "--topic", "perf", "--num-records", "20000", "--timeout", "30000")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		fields := strings.Split(lines[len(lines)-1], ", ")
		if len(fields) < 6 || fields[4] != "20000" {
			t.Fatalf("consumer perf: want data.consumed.in.nMsg 20000:\n%s", out)
		}
	})

	t.Run("kafka-e2e-latency", func(t *testing.T) {
		out := mustTool(t, "", "kafka-e2e-latency", b, "perf", "300", "all", "100")
		mustContain(t, "e2e latency", out, "Avg latency:", "Percentiles: 50th =")
	})

	t.Run("kafka-verifiable-producer and consumer", func(t *testing.T) {
		mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", "verifiable", "--partitions", "2")
		out := mustTool(t, "", "kafka-verifiable-producer", "--bootstrap-server", b, "--topic", "verifiable", "--max-messages", "300", "--acks", "-1")
		data := lastEvent(t, out, "tool_data")
		if data["sent"] != float64(300) || data["acked"] != float64(300) {
			t.Fatalf("verifiable producer: %v", data)
		}
		for _, protocol := range []string{"classic", "consumer"} {
			out := mustTool(t, "", "kafka-verifiable-consumer", "--bootstrap-server", b, "--topic", "verifiable",
				"--group-id", "verifiable-"+protocol, "--group-protocol", protocol, "--max-messages", "300", "--reset-policy", "earliest")
			consumed, committed := 0, false
			for _, e := range events(t, out) {
				switch e["name"] {
				case "records_consumed":
					consumed += int(e["count"].(float64))
				case "offsets_committed":
					if e["success"] != true {
						t.Fatalf("%s: offsets_committed failed: %v", protocol, e)
					}
					committed = true
				}
			}
			if consumed < 300 || !committed {
				t.Fatalf("verifiable consumer (%s): consumed %d, committed %v, want 300 and true:\n%s", protocol, consumed, committed, out)
			}
		}
	})
}

// transact commits one transaction of 10 records with franz-go.
func transact(t *testing.T, bootstrap, topic, txid string) {
	t.Helper()
	transaction(t, bootstrap, topic, txid, kgo.TryCommit)
}

// abortOne aborts one transaction of 10 records.
func abortOne(t *testing.T, bootstrap, topic, txid string) {
	t.Helper()
	transaction(t, bootstrap, topic, txid, kgo.TryAbort)
}

func transaction(t *testing.T, bootstrap, topic, txid string, end kgo.TransactionEndTry) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.TransactionalID(txid), kgo.TransactionTimeout(time.Minute), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("txn-" + strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		t.Fatal(err)
	}
}

func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var all []map[string]any
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		all = append(all, e)
	}
	return all
}

func lastEvent(t *testing.T, out, name string) map[string]any {
	t.Helper()
	var last map[string]any
	for _, e := range events(t, out) {
		if e["name"] == name {
			last = e
		}
	}
	if last == nil {
		t.Fatalf("no %s event in:\n%s", name, out)
	}
	return last
}
