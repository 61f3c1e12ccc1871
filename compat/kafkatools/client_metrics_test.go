package kafkatools

import (
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestKafkaClientMetricsTool manages a client-metrics subscription
// (KIP-714) with kafka-client-metrics and kafka-configs --entity-type
// client-metrics: alter, describe, list, a refused bad interval, delete.
func TestKafkaClientMetricsTool(t *testing.T) {
	needTools(t)
	node := clustertest.StartNode(t)
	b := node.Addr()
	out := mustTool(t, "", "kafka-client-metrics", "--bootstrap-server", b, "--alter", "--name", "producers",
		"--metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.", "--interval", "1000",
		"--match", "client_software_name=apache-kafka-java,client_id=app.*")
	mustContain(t, "alter", out, "Altered client metrics config for producers.")
	out = mustTool(t, "", "kafka-client-metrics", "--bootstrap-server", b, "--describe", "--name", "producers")
	mustContain(t, "describe", out, "Client metrics configs for producers are:", "interval.ms=1000",
		"match=client_software_name=apache-kafka-java,client_id=app.*", "metrics=org.apache.kafka.producer.,org.apache.kafka.consumer.")
	mustContain(t, "list", mustTool(t, "", "kafka-client-metrics", "--bootstrap-server", b, "--list"), "producers")
	out = mustTool(t, "", "kafka-configs", "--bootstrap-server", b, "--entity-type", "client-metrics", "--entity-name", "producers", "--describe")
	mustContain(t, "kafka-configs describe", out, "Dynamic configs for client-metric producers are:", "interval.ms=1000 sensitive=false synonyms={}")
	r := tool(t, "", "kafka-client-metrics", "--bootstrap-server", b, "--alter", "--name", "producers", "--interval", "10")
	if r.err == nil || !strings.Contains(r.stdout+r.stderr, "interval must be between 100 and 3600000") {
		t.Fatalf("an interval of 10 ms was not refused as Kafka refuses it:\n%s%s", r.stdout, tail(r.stderr, 5))
	}
	mustContain(t, "delete", mustTool(t, "", "kafka-client-metrics", "--bootstrap-server", b, "--delete", "--name", "producers"),
		"Deleted client metrics config for producers.")
	if out := mustTool(t, "", "kafka-client-metrics", "--bootstrap-server", b, "--list"); strings.Contains(out, "producers") {
		t.Fatalf("the subscription is still listed after --delete:\n%s", out)
	}
}
