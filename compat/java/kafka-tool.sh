#!/usr/bin/env bash
# Runs one of Apache Kafka's command-line tools from the kafka-tools and
# kafka_2.13 jars that compat/java/pom.xml resolves, the way Kafka's
# bin/kafka-*.sh scripts would, without the Kafka tarball:
#
#   compat/java/kafka-tool.sh kafka-topics --bootstrap-server HOST:PORT --list
#
# The first argument is the script name of Kafka's distribution (or a main
# class); the rest go to the tool unchanged. The classpath is
# compat/java/target/classpath.txt, written by `mvn package` in compat/java
# (compat/run.sh does that). Tool logging goes to stderr at WARN.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
	echo "usage: kafka-tool.sh TOOL [ARGS...]   (e.g. kafka-topics, kafka-consumer-groups)" >&2
	exit 2
fi
tool=$1
shift
case $tool in
kafka-topics) class=org.apache.kafka.tools.TopicCommand ;;
kafka-console-producer) class=org.apache.kafka.tools.ConsoleProducer ;;
kafka-console-consumer) class=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
kafka-consumer-groups) class=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
kafka-configs) class=org.apache.kafka.tools.ConfigCommand ;;
kafka-get-offsets) class=org.apache.kafka.tools.GetOffsetShell ;;
kafka-delete-records) class=org.apache.kafka.tools.DeleteRecordsCommand ;;
kafka-leader-election) class=org.apache.kafka.tools.LeaderElectionCommand ;;
kafka-reassign-partitions) class=org.apache.kafka.tools.reassign.ReassignPartitionsCommand ;;
kafka-log-dirs) class=org.apache.kafka.tools.LogDirsCommand ;;
kafka-metadata-quorum) class=org.apache.kafka.tools.MetadataQuorumCommand ;;
kafka-client-metrics) class=org.apache.kafka.tools.ClientMetricsCommand ;;
kafka-transactions) class=org.apache.kafka.tools.TransactionsCommand ;;
kafka-features) class=org.apache.kafka.tools.FeatureCommand ;;
kafka-groups) class=org.apache.kafka.tools.GroupsCommand ;;
kafka-broker-api-versions) class=org.apache.kafka.tools.BrokerApiVersionsCommand ;;
kafka-producer-perf-test) class=org.apache.kafka.tools.ProducerPerformance ;;
kafka-consumer-perf-test) class=org.apache.kafka.tools.ConsumerPerformance ;;
kafka-e2e-latency) class=org.apache.kafka.tools.EndToEndLatency ;;
kafka-verifiable-producer) class=org.apache.kafka.tools.VerifiableProducer ;;
kafka-verifiable-consumer) class=org.apache.kafka.tools.VerifiableConsumer ;;
kafka-dump-log) class=org.apache.kafka.tools.DumpLogSegments ;;
*.*) class=$tool ;;
*)
	echo "kafka-tool.sh: unknown tool $tool" >&2
	exit 2
	;;
esac
cp_file=$here/target/classpath.txt
if [ ! -s "$cp_file" ]; then
	echo "kafka-tool.sh: $cp_file is missing: run mvn -q package in compat/java" >&2
	exit 2
fi
exec java ${KAFKA_TOOL_JAVA_OPTS:--Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1} -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 \
	-Dlog4j2.configurationFile="$here/log4j2.properties" \
	-cp "$(cat "$cp_file")" "$class" "$@"
