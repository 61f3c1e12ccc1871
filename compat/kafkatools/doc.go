// Package kafkatools holds the tests that run Apache Kafka's own
// command-line tools (kafka-topics, kafka-console-producer and -consumer,
// kafka-consumer-groups, kafka-configs, kafka-get-offsets,
// kafka-delete-records, kafka-leader-election, kafka-reassign-partitions,
// kafka-log-dirs, kafka-metadata-quorum, kafka-transactions, kafka-features,
// kafka-client-metrics,
// the perf tests, kafka-e2e-latency, the verifiable producer and consumer,
// and kafka-dump-log) against real samsa nodes, and check what each prints.
//
// The tools come from the kafka-tools and kafka_2.13 4.4.0 jars that
// compat/java/pom.xml resolves from Maven Central; compat/java/kafka-tool.sh
// runs one with `java -cp`. The tests run only with SAMSA_KAFKA_TOOLS=1,
// which compat/run.sh (make compat) sets after the Maven build:
//
//	SAMSA_KAFKA_TOOLS=1 go test -count=1 ./compat/kafkatools/
package kafkatools
