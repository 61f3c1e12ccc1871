package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/kafkaref"
)

// Workload (j) runs Kafka's own kafka-producer-perf-test and
// kafka-consumer-perf-test (org.apache.kafka.tools.ProducerPerformance and
// ConsumerPerformance from the kafka-tools jar, in a JVM with the heap
// their scripts set) against each broker: the figures Kafka users quote.
// The producer runs with the Java client's defaults (acks=all, idempotent,
// linger.ms=5, batch.size=16384); the consumer reads everything back in
// one group.

const (
	producerPerformanceClass = "org.apache.kafka.tools.ProducerPerformance"
	consumerPerformanceClass = "org.apache.kafka.tools.ConsumerPerformance"
	perfRecordBytes          = 1024
	perfTopic                = "perf"
	perfPartitions           = 12
	// perfConsumerTimeoutMs is the consumer tool's --timeout: the longest
	// wait between records before it gives up.
	perfConsumerTimeoutMs = 30_000
)

func perfToolMetrics() []metric {
	return []metric{
		{key: "perf_produce_mbps", label: "kafka-producer-perf-test (MB/s)", limit: limitLoopback, digits: 1},
		{key: "perf_produce_p50_ms", label: "kafka-producer-perf-test latency p50 (ms)", lowerIsBetter: true, digits: 0},
		{key: "perf_produce_p99_ms", label: "kafka-producer-perf-test latency p99 (ms)", lowerIsBetter: true, digits: 0},
		{key: keyCPUPerGB, label: "broker CPU while producing (s/GB in)", lowerIsBetter: true, digits: 2},
		{key: keyPeakRSSMB, label: "broker peak RSS while producing (MB)", lowerIsBetter: true, digits: 0},
		{key: "perf_consume_mbps", label: "kafka-consumer-perf-test (MB/s)", limit: limitLoopback, digits: 1},
		{key: "perf_fetch_mbps", label: "kafka-consumer-perf-test, excluding the group join (MB/s)", limit: limitLoopback, digits: 1},
	}
}

// runPerfTools writes -consume-gb of 1 KiB records with the producer tool
// and reads them back with the consumer tool.
func runPerfTools(ctx context.Context, env *runEnv) (sample, error) {
	classpath, err := kafkaJars()
	if err != nil {
		return nil, err
	}
	if err := createTopic(ctx, env, perfTopic, perfPartitions); err != nil {
		return nil, err
	}
	records := max(env.opts.consumeBytes/perfRecordBytes, 1)
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	out, err := runJavaTool(ctx, classpath, producerPerformanceClass,
		"--topic", perfTopic, "--num-records", strconv.FormatInt(records, 10),
		"--record-size", strconv.Itoa(perfRecordBytes), "--throughput", "-1",
		"--producer-props", "bootstrap.servers="+env.broker.addr)
	if err != nil {
		return nil, err
	}
	produced, err := parseProducerPerformance(out)
	if err != nil {
		return nil, err
	}
	if produced.records != records {
		return nil, fmt.Errorf("kafka-producer-perf-test sent %d of %d records", produced.records, records)
	}
	s := sample{
		recordsKey:            float64(produced.records),
		"perf_produce_mbps":   produced.recordsPerSecond * perfRecordBytes / 1e6,
		"perf_produce_p50_ms": produced.p50Ms, "perf_produce_p99_ms": produced.p99Ms,
	}
	if err := p.endPerGB(s, records*perfRecordBytes); err != nil {
		return nil, err
	}
	out, err = runJavaTool(ctx, classpath, consumerPerformanceClass,
		"--bootstrap-server", env.broker.addr, "--topic", perfTopic,
		"--num-records", strconv.FormatInt(records, 10), "--timeout", strconv.Itoa(perfConsumerTimeoutMs))
	if err != nil {
		return nil, err
	}
	consumed, err := parseConsumerPerformance(out)
	if err != nil {
		return nil, err
	}
	if consumed.records < records {
		return nil, fmt.Errorf("kafka-consumer-perf-test read %d of %d records", consumed.records, records)
	}
	s["perf_consume_mbps"] = consumed.recordsPerSecond * perfRecordBytes / 1e6
	s["perf_fetch_mbps"] = consumed.fetchRecordsPerSecond * perfRecordBytes / 1e6
	return s, nil
}

// runJavaTool runs one of Kafka's tools and returns its standard output.
func runJavaTool(ctx context.Context, classpath, mainClass string, args ...string) (string, error) {
	cmd := kafkaref.Command(ctx, classpath, kafkaref.ToolHeapOptions, mainClass, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s%s", mainClass, err, lastBytes(stdout.String()), lastBytes(stderr.String()))
	}
	return stdout.String(), nil
}

// lastBytes trims a tool's output to its end for an error message.
func lastBytes(s string) string {
	const keep = 4096
	if len(s) > keep {
		return s[len(s)-keep:]
	}
	return s
}

// producerPerformance is the summary line of kafka-producer-perf-test.
type producerPerformance struct {
	records          int64
	recordsPerSecond float64
	p50Ms, p99Ms     float64
}

// producerSummary matches the final line, e.g. "1000 records sent,
// 512.3 records/sec (0.50 MB/sec), 3.1 ms avg latency, 120.0 ms max
// latency, 2 ms 50th, 9 ms 95th, 30 ms 99th, 110 ms 99.9th."
var producerSummary = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th`)

func parseProducerPerformance(out string) (producerPerformance, error) {
	var p producerPerformance
	matches := producerSummary.FindAllStringSubmatch(out, -1)
	if len(matches) == 0 {
		return p, fmt.Errorf("no summary in kafka-producer-perf-test output: %s", lastBytes(out))
	}
	m := matches[len(matches)-1]
	p.records, _ = strconv.ParseInt(m[1], 10, 64)
	p.recordsPerSecond, _ = strconv.ParseFloat(m[2], 64)
	p.p50Ms, _ = strconv.ParseFloat(m[3], 64)
	p.p99Ms, _ = strconv.ParseFloat(m[4], 64)
	return p, nil
}

// consumerPerformance is the result line of kafka-consumer-perf-test.
type consumerPerformance struct {
	records               int64
	recordsPerSecond      float64
	fetchRecordsPerSecond float64
}

// parseConsumerPerformance reads the line under the header
// "start.time, end.time, data.consumed.in.MB, MB.sec,
// data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms,
// fetch.MB.sec, fetch.nMsg.sec" by column name.
func parseConsumerPerformance(out string) (consumerPerformance, error) {
	var c consumerPerformance
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "start.time") || i+1 >= len(lines) {
			continue
		}
		names := splitColumns(line)
		values := splitColumns(lines[i+1])
		if len(values) != len(names) {
			break
		}
		column := func(name string) (float64, error) {
			for j, n := range names {
				if n == name {
					return strconv.ParseFloat(values[j], 64)
				}
			}
			return 0, fmt.Errorf("no column %q", name)
		}
		count, err1 := column("data.consumed.in.nMsg")
		rate, err2 := column("nMsg.sec")
		fetchRate, err3 := column("fetch.nMsg.sec")
		for _, err := range []error{err1, err2, err3} {
			if err != nil {
				return c, fmt.Errorf("kafka-consumer-perf-test output: %w", err)
			}
		}
		c.records, c.recordsPerSecond, c.fetchRecordsPerSecond = int64(count), rate, fetchRate
		return c, nil
	}
	return c, fmt.Errorf("no result in kafka-consumer-perf-test output: %s", lastBytes(out))
}

func splitColumns(line string) []string {
	var out []string
	for _, field := range strings.Split(line, ",") {
		out = append(out, strings.TrimSpace(field))
	}
	return out
}
