package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// metric is one row of the table.
type metric struct {
	key   string
	label string
	// lowerIsBetter marks latency, CPU and memory rows.
	lowerIsBetter bool
	// limit names the machine limit the figure is compared with, if any.
	limit string
	// digits is the number of decimals printed.
	digits int
}

// workload is one load, run against every target broker.
type workload struct {
	id      string
	title   string
	metrics []metric
	run     func(ctx context.Context, env *runEnv) (sample, error)
	// samsaOverrides are broker configs the workload adds on Samsa.
	samsaOverrides []string
	// needsKafkaTools marks a workload that runs Kafka's own tools.
	needsKafkaTools bool
	// samsaOnly workloads are not run on the other targets; noKfake
	// ones not on kfake (for features it lacks).
	samsaOnly bool
	noKfake   bool
	// security, when set, secures Samsa's listener for the workload.
	security func() (securitySetup, error)
	// objectStore workloads run Samsa with tiered storage on a fresh
	// S3-compatible server (workload_tiered.go).
	objectStore bool
}

// runsOn reports whether w runs on target.
func (w workload) runsOn(target string) bool {
	return (!w.samsaOnly || target == roleSamsa) && (!w.noKfake || target != roleKfake)
}

// sample is one run's figures by metric key. recordsKey counts what flowed
// and is not printed.
type sample map[string]float64

const recordsKey = "records"

// runEnv is what a workload run gets: a fresh broker and the options.
type runEnv struct {
	opts   *options
	broker *brokerProcess
	// progress receives the run's progress lines, and log its
	// diagnostics, if wanted.
	progress func(bench.Progress)
	log      io.Writer
	// clientOpts reach the broker (TLS, SASL) when the workload secures it.
	clientOpts []kgo.Opt
	// tiered is the object store of an objectStore workload.
	tiered *tieredSetup
}

// Metric keys shared by several workloads.
const (
	keyMBps      = "mbps"
	keyRecords   = "rps"
	keyAckP50    = "ack_p50_ms"
	keyAckP99    = "ack_p99_ms"
	keyCPUPerGB  = "cpu_s_per_gb"
	keyPeakRSSMB = "rss_mb"
)

// Machine limit keys.
const (
	limitLoopback  = "loopback_mbps"
	limitSendfile  = "sendfile_mbps"
	limitPageCache = "pagecache_mbps"
	limitSustained = "sustained_write_mbps"
	limitFdatasync = "fdatasync_mbps"
	limitStore     = "store_mbps"
	limitStoreCPU  = "store_cpu_s_per_gb"
	limitRTTP50    = "rtt_p50_ms"
	limitRTTP99    = "rtt_p99_ms"
	limitRTTP999   = "rtt_p999_ms"
	limitRTTMax    = "rtt_max_ms"
)

// limitRows are the machine's rows of the table.
var limitRows = []metric{
	{key: limitLoopback, label: "loopback TCP, 1 connection (MB/s)", digits: 0},
	{key: limitSendfile, label: "sendfile page cache to loopback (MB/s)", digits: 0},
	{key: limitPageCache, label: "sequential file write, page cache (MB/s)", digits: 0},
	{key: limitSustained, label: "sequential file write, page cache, as long as a produce run (MB/s)", digits: 0},
	{key: limitFdatasync, label: "sequential file write, fdatasync per MiB (MB/s)", digits: 0},
	{key: limitStore, label: "loopback TCP into a file, 1 connection (MB/s)", digits: 0},
	{key: limitStoreCPU, label: "loopback TCP into a file, reader's CPU (s/GB)", lowerIsBetter: true, digits: 2},
	{key: limitRTTP50, label: "loopback 1 KiB round trip p50 (ms)", lowerIsBetter: true, digits: 3},
	{key: limitRTTP99, label: "loopback 1 KiB round trip p99 (ms)", lowerIsBetter: true, digits: 3},
	{key: limitRTTP999, label: "loopback 1 KiB round trip p99.9 (ms)", lowerIsBetter: true, digits: 3},
	{key: limitRTTMax, label: "loopback 1 KiB round trip max (ms)", lowerIsBetter: true, digits: 3},
}

func (l machineLimits) sample() sample {
	return sample{
		limitLoopback: l.loopbackMBps, limitSendfile: l.sendfileMBps,
		limitPageCache: l.pageCacheMBps, limitSustained: l.sustainedMBps, limitFdatasync: l.fdatasyncMBps,
		limitStore: l.storeMBps, limitStoreCPU: l.storeCPUPerGB,
		limitRTTP50: ms(l.roundTrip.P50), limitRTTP99: ms(l.roundTrip.P99),
		limitRTTP999: ms(l.roundTrip.P999), limitRTTMax: ms(l.roundTrip.Max),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// produceMetrics are the rows of a producer workload.
func produceMetrics() []metric {
	return []metric{
		{key: keyMBps, label: "produce (MB/s)", limit: limitLoopback, digits: 1},
		// A broker stores what it acknowledges: over a whole run it can go
		// no faster than the machine writes a file for as long.
		{key: keyMBps, label: "produce vs sustained file write (MB/s)", limit: limitSustained, digits: 1},
		{key: keyRecords, label: "produce (records/s)", digits: 0},
		{key: keyAckP50, label: "ack latency p50 (ms)", lowerIsBetter: true, digits: 2},
		{key: keyAckP99, label: "ack latency p99 (ms)", lowerIsBetter: true, digits: 2},
		// The limit is the store probe's CPU: what reading a byte from a
		// socket and writing it to a file costs on this machine.
		{key: keyCPUPerGB, label: "broker CPU (s/GB in)", limit: limitStoreCPU, lowerIsBetter: true, digits: 2},
		{key: keyPeakRSSMB, label: "broker peak RSS (MB)", lowerIsBetter: true, digits: 0},
	}
}

// workloads lists every workload in table order.
func workloads(o *options) []workload {
	produceA := produceSpec{recordBytes: 1024, acks: 1, partitions: 12, producers: 1}
	produceB := produceA
	produceB.acks = -1
	produceC := produceA
	produceC.recordBytes = 100
	// One producer already offers more than the broker absorbs (a), so ten
	// offer ten times as much: the overload for bounded RSS.
	overload := produceA
	overload.producers = 10
	return append([]workload{
		{id: "a", title: "produce 1 KiB, acks=1, 1 producer, 12 partitions, linger 5 ms",
			metrics: produceMetrics(), run: produceA.run},
		{id: "b", title: "produce 1 KiB, acks=all (idempotent), 1 producer, 12 partitions, linger 5 ms",
			metrics: produceMetrics(), run: produceB.run},
		{id: "c", title: "produce 100 B, acks=1, 1 producer, 12 partitions, linger 5 ms",
			metrics: produceMetrics(), run: produceC.run},
		{id: "d", title: fmt.Sprintf("consume %s already written (1 KiB records, 12 partitions)", formatBytes(o.consumeBytes)),
			metrics: []metric{
				{key: "raw_mbps", label: "consume, raw fetch (MB/s)", limit: limitSendfile, digits: 0},
				{key: "client_mbps", label: "consume, franz-go consumer (MB/s)", limit: limitLoopback, digits: 0},
				{key: keyCPUPerGB, label: "broker CPU, raw fetch (s/GB out)", lowerIsBetter: true, digits: 2},
				{key: keyPeakRSSMB, label: "broker peak RSS while consuming (MB)", lowerIsBetter: true, digits: 0},
			}, run: runConsume},
		{id: "e", title: fmt.Sprintf("end-to-end at %g MB/s, 1 KiB, acks=1, linger 0, 12 partitions", o.e2eMBps),
			metrics: []metric{
				{key: "e2e_p50_ms", label: "e2e latency p50 (ms)", lowerIsBetter: true, limit: limitRTTP50, digits: 2},
				{key: "e2e_p99_ms", label: "e2e latency p99 (ms)", lowerIsBetter: true, limit: limitRTTP99, digits: 2},
				{key: "e2e_p999_ms", label: "e2e latency p99.9 (ms)", lowerIsBetter: true, limit: limitRTTP999, digits: 2},
				{key: "e2e_max_ms", label: "e2e latency max (ms)", lowerIsBetter: true, limit: limitRTTMax, digits: 2},
				{key: "e2e_pinned_p50_ms", label: "e2e latency p50, broker and load generator on a core each (ms)", lowerIsBetter: true, limit: limitRTTP50, digits: 2},
				{key: "e2e_pinned_p99_ms", label: "e2e latency p99, broker and load generator on a core each (ms)", lowerIsBetter: true, limit: limitRTTP99, digits: 2},
				{key: "e2e_pinned_p999_ms", label: "e2e latency p99.9, broker and load generator on a core each (ms)", lowerIsBetter: true, limit: limitRTTP999, digits: 2},
				{key: "e2e_pinned_max_ms", label: "e2e latency max, broker and load generator on a core each (ms)", lowerIsBetter: true, limit: limitRTTMax, digits: 2},
				{key: keyMBps, label: "achieved (MB/s)", digits: 1},
				{key: keyCPUPerGB, label: "broker CPU (s/GB in)", lowerIsBetter: true, digits: 2},
				{key: keyPeakRSSMB, label: "broker peak RSS (MB)", lowerIsBetter: true, digits: 0},
			}, run: runEndToEnd},
		{id: "f", title: fmt.Sprintf("%d partitions, %g records/s each (1 KiB, round-robin, acks=1, linger 5 ms)", o.manyPartitions, o.manyPartitionRate),
			metrics: []metric{
				{key: "create_s", label: "create topic (s)", lowerIsBetter: true, digits: 2},
				{key: keyMBps, label: "achieved (MB/s)", digits: 2},
				{key: keyAckP50, label: "ack latency p50 (ms)", lowerIsBetter: true, digits: 2},
				{key: keyAckP99, label: "ack latency p99 (ms)", lowerIsBetter: true, digits: 2},
				{key: keyCPUPerGB, label: "broker CPU (s/GB in)", lowerIsBetter: true, digits: 1},
				{key: keyPeakRSSMB, label: "broker peak RSS (MB)", lowerIsBetter: true, digits: 0},
			}, run: runManyPartitions},
		{id: "g", title: "overload: 10 producers as fast as possible, 1 KiB, acks=1, 12 partitions",
			metrics: produceMetrics(), run: overload.run},
		{id: "j", title: fmt.Sprintf("Kafka's kafka-producer-perf-test then kafka-consumer-perf-test, %s of 1 KiB records, Java client defaults (acks=all, linger 5 ms), 12 partitions", formatBytes(o.consumeBytes)),
			metrics: perfToolMetrics(), run: runPerfTools, needsKafkaTools: true},
	}, slices.Concat(aclWorkloads(), quotaWorkloads(), securityWorkloads(), shareWorkloads(o), tieredWorkloads(o))...)
}

// phase measures the broker's CPU time and peak RSS over part of a run.
type phase struct {
	broker *brokerProcess
	start  processStats
	// log, if set, receives the phase's diagnostics.
	log io.Writer
}

func beginPhase(env *runEnv) (*phase, error) {
	resetPeakRSS(env.broker.pid())
	s, err := env.broker.stats()
	if err != nil {
		return nil, err
	}
	return &phase{broker: env.broker, start: s, log: env.log}, nil
}

// end returns the broker CPU time used since begin and the peak RSS in MB
// since begin.
func (p *phase) end() (cpu time.Duration, peakRSSMB float64, err error) {
	now, err := p.broker.stats()
	if err != nil {
		return 0, 0, err
	}
	if p.log != nil {
		fmt.Fprintf(p.log, "  broker: %.2fs CPU, %d minor and %d major page faults\n", (now.cpu - p.start.cpu).Seconds(),
			now.minorFaults-p.start.minorFaults, now.majorFaults-p.start.majorFaults)
	}
	return now.cpu - p.start.cpu, float64(now.peakRSSKB) * 1024 / 1e6, nil
}

// endPerGB adds the broker's CPU seconds per GB of bytes and its peak RSS to s.
func (p *phase) endPerGB(s sample, bytes int64) error {
	cpu, rss, err := p.end()
	if err != nil {
		return err
	}
	s[keyCPUPerGB] = cpuPerGB(cpu, bytes)
	s[keyPeakRSSMB] = rss
	return nil
}

func cpuPerGB(cpu time.Duration, bytes int64) float64 {
	if bytes <= 0 {
		return 0
	}
	return cpu.Seconds() / (float64(bytes) / 1e9)
}

// produceSpec is a producer workload.
type produceSpec struct {
	recordBytes int
	acks        bench.Acks
	partitions  int32
	producers   int
}

func (spec produceSpec) config(env *runEnv, topic string) bench.ProduceConfig {
	return bench.ProduceConfig{
		Brokers: []string{env.broker.addr}, ClientOpts: env.clientOpts, Topic: topic,
		RecordBytes: spec.recordBytes, Duration: env.opts.duration,
		Acks: spec.acks, Compression: "none", Linger: bench.DefaultLinger,
		BatchBytes: bench.DefaultBatchBytes, BufferBytes: bench.DefaultBufferBytes,
		MaxInFlight: bench.DefaultMaxInFlight, Producers: spec.producers,
		ProgressInterval: time.Second, Progress: env.progress,
	}
}

func (spec produceSpec) run(ctx context.Context, env *runEnv) (sample, error) {
	const topic = "bench"
	if err := createTopic(ctx, env, topic, spec.partitions); err != nil {
		return nil, err
	}
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	r, err := bench.Produce(ctx, spec.config(env, topic))
	if err != nil {
		return nil, err
	}
	if err := resultError(r); err != nil {
		return nil, err
	}
	s := sample{
		recordsKey: float64(r.Records), keyMBps: r.MBPerSecond(), keyRecords: r.RecordsPerSecond(),
		keyAckP50: ms(r.Latency.P50), keyAckP99: ms(r.Latency.P99),
	}
	return s, p.endPerGB(s, r.Bytes)
}

func createTopic(ctx context.Context, env *runEnv, topic string, partitions int32) error {
	_, _, err := bench.EnsureTopic(ctx, []string{env.broker.addr}, env.clientOpts, bench.TopicSpec{
		Name: topic, Partitions: partitions, ReplicationFactor: 1,
	})
	return err
}

func resultError(r bench.Result) error {
	if r.Errors > 0 {
		return fmt.Errorf("%d records failed: %w", r.Errors, r.FirstError)
	}
	if r.Records == 0 {
		return fmt.Errorf("no records flowed")
	}
	return nil
}

// runConsume writes the data set as fast as possible, then reads it back
// twice: raw fetches (the broker's serving rate) and the franz-go consumer
// (what an application sees).
func runConsume(ctx context.Context, env *runEnv) (sample, error) {
	const topic = "bench"
	if err := createTopic(ctx, env, topic, 12); err != nil {
		return nil, err
	}
	spec := produceSpec{recordBytes: 1024, acks: 1, partitions: 12, producers: 1}
	pc := spec.config(env, topic)
	pc.Duration = 0
	pc.Records = max(env.opts.consumeBytes/int64(spec.recordBytes), 1)
	pc.Progress = nil
	written, err := bench.Produce(ctx, pc)
	if err != nil {
		return nil, err
	}
	if err := resultError(written); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	// The warm-up record is in the log too.
	total := written.Records + 1
	cc := bench.ConsumeConfig{
		Brokers: []string{env.broker.addr}, Topic: topic, Records: total,
		IdleTimeout: 10 * time.Second, ProgressInterval: time.Second, Progress: env.progress,
	}
	s := sample{}
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	cc.RawFetch = true
	raw, err := bench.Consume(ctx, cc)
	if err == nil {
		err = resultError(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("raw fetch: %w", err)
	}
	if raw.Records < total {
		return nil, fmt.Errorf("raw fetch read %d of %d records", raw.Records, total)
	}
	rawCPU, _, err := p.end()
	if err != nil {
		return nil, err
	}
	s[keyCPUPerGB] = cpuPerGB(rawCPU, raw.Bytes)
	cc.RawFetch = false
	client, err := bench.Consume(ctx, cc)
	if err == nil {
		err = resultError(client)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	if _, s[keyPeakRSSMB], err = p.end(); err != nil {
		return nil, err
	}
	s["raw_mbps"] = raw.MBPerSecond()
	s["client_mbps"] = client.MBPerSecond()
	s[recordsKey] = float64(min(raw.Records, client.Records))
	return s, nil
}

func runEndToEnd(ctx context.Context, env *runEnv) (sample, error) {
	const topic = "bench"
	if err := createTopic(ctx, env, topic, 12); err != nil {
		return nil, err
	}
	spec := produceSpec{recordBytes: 1024, acks: 1, partitions: 12, producers: 1}
	pc := spec.config(env, topic)
	pc.Linger = 0
	pc.RecordsPerSecond = env.opts.e2eMBps * 1e6 / float64(spec.recordBytes)
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	r, err := endToEnd(ctx, pc)
	if err != nil {
		return nil, err
	}
	s := sample{recordsKey: float64(r.Records), keyMBps: r.MBPerSecond()}
	addLatency(s, "e2e", r.Latency)
	if err := p.endPerGB(s, r.Bytes); err != nil {
		return nil, err
	}
	// The same load again with the broker on one core and the load
	// generator on the other, as on machines of their own: on two shared
	// cores each process's threads preempt the other's, and that wait,
	// not the broker's work, is most of the shared run's tail.
	brokerCPU, clientCPU, ok := twoCPUs()
	if !ok {
		return s, nil
	}
	unpinBroker, err := pinProcess(env.broker.pid(), brokerCPU)
	if err != nil {
		return nil, err
	}
	defer unpinBroker()
	unpinSelf, err := pinProcess(os.Getpid(), clientCPU)
	if err != nil {
		return nil, err
	}
	defer unpinSelf()
	r, err = endToEnd(ctx, pc)
	if err != nil {
		return nil, err
	}
	addLatency(s, "e2e_pinned", r.Latency)
	return s, nil
}

// endToEnd runs one end-to-end measurement and fails on any error in it.
func endToEnd(ctx context.Context, pc bench.ProduceConfig) (bench.Result, error) {
	r, err := bench.EndToEnd(ctx, bench.EndToEndConfig{Produce: pc})
	if err != nil {
		return r, err
	}
	return r, resultError(r)
}

// addLatency adds the p50, p99, p99.9 and max of l to s as prefix_p50_ms...
func addLatency(s sample, prefix string, l bench.LatencySummary) {
	s[prefix+"_p50_ms"], s[prefix+"_p99_ms"] = ms(l.P50), ms(l.P99)
	s[prefix+"_p999_ms"], s[prefix+"_max_ms"] = ms(l.P999), ms(l.Max)
}

func runManyPartitions(ctx context.Context, env *runEnv) (sample, error) {
	const topic = "bench"
	start := time.Now()
	if err := createTopic(ctx, env, topic, int32(env.opts.manyPartitions)); err != nil {
		return nil, err
	}
	created := time.Since(start)
	spec := produceSpec{recordBytes: 1024, acks: 1, partitions: int32(env.opts.manyPartitions), producers: 1}
	pc := spec.config(env, topic)
	pc.Keys = bench.KeyDistribution{Kind: bench.KeysRoundRobin}
	pc.RecordsPerSecond = float64(env.opts.manyPartitions) * env.opts.manyPartitionRate
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	r, err := bench.Produce(ctx, pc)
	if err != nil {
		return nil, err
	}
	if err := resultError(r); err != nil {
		return nil, err
	}
	s := sample{
		recordsKey: float64(r.Records), "create_s": created.Seconds(), keyMBps: r.MBPerSecond(),
		keyAckP50: ms(r.Latency.P50), keyAckP99: ms(r.Latency.P99),
	}
	return s, p.endPerGB(s, r.Bytes)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1e9 && n%1e8 == 0:
		return fmt.Sprintf("%g GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%g MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d bytes", n)
}
