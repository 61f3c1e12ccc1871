package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// Remote read (n): the data set of -remote-gb is written to a topic with
// remote.storage.enable=true and read back with raw fetches from local
// segments (the reference); then local.retention.ms=1 makes the node roll,
// copy to the bucket (-object-store: moto_server or gofakes3 on loopback)
// and delete locally every
// segment, and the same records are read again, all of them from the
// remote tier, through the remote reader pool and its disk cache. The read
// amplification is what the node fetched from the store
// (samsa_remote_fetch_bytes_total: chunks and indexes that missed the
// cache) per byte the fetches returned. The figure is Samsa's alone: the
// peers have no remote tier (Kafka ships no RemoteStorageManager).
const (
	tieredPartitions = 12
	// tieredSegmentBytes is the topic's segment.bytes. moto reads a whole
	// object to answer a ranged GET, so its cost per GET grows with the
	// segment; 64 MiB keeps that from being all the run measures.
	tieredSegmentBytes = 64 << 20
	// tieredTaskIntervalMs is remote.log.manager.task.interval.ms and
	// log.retention.check.interval.ms for the run: a copy starts within a
	// second of the segment closing, not Kafka's 30 s later.
	tieredTaskIntervalMs = 1000
	// tieredCopyMinMBps bounds the wait for the copy to the bucket: the
	// run fails if it goes slower than this.
	tieredCopyMinMBps = 1.0
)

// tieredSetup is what a tiered workload adds to a Samsa run: its object
// store, and the metrics listener the run scrapes.
type tieredSetup struct {
	store       *objectStore
	metricsAddr string
}

// startTiered starts the object store and returns the broker overrides
// that point a node at it.
func startTiered(ctx context.Context, o *options) (*tieredSetup, []string, error) {
	store, err := startObjectStore(ctx, o.objectStore, o.workDir)
	if err != nil {
		return nil, nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.stop()
		return nil, nil, err
	}
	metricsAddr := listener.Addr().String()
	listener.Close()
	interval := strconv.Itoa(tieredTaskIntervalMs)
	return &tieredSetup{store: store, metricsAddr: metricsAddr}, []string{
		"remote.log.storage.system.enable=true",
		"rsm.config.bucket.url=" + store.bucketURL(),
		"remote.log.manager.task.interval.ms=" + interval,
		"log.retention.check.interval.ms=" + interval,
		"metrics.listener=" + metricsAddr,
	}, nil
}

func (s *tieredSetup) stop() { s.store.stop() }

// storeNames are the object stores -object-store takes, as titles name them.
var storeNames = map[string]string{storeMoto: "moto_server", storeGofakes3: "gofakes3"}

func tieredWorkloads(o *options) []workload {
	return []workload{{
		id: "n", title: fmt.Sprintf("consume %s from the remote tier (%s on loopback, %d MiB segments) beside the same read from local segments (1 KiB records, %d partitions, raw fetches)",
			formatBytes(o.remoteBytes), storeNames[o.objectStore], tieredSegmentBytes>>20, tieredPartitions),
		metrics: []metric{
			{key: "local_mbps", label: "consume from local segments (MB/s)", limit: limitSendfile, digits: 0},
			{key: "remote_mbps", label: "consume from the remote tier (MB/s)", digits: 1},
			{key: "remote_amplification", label: "read amplification: bytes fetched from the store per byte served", lowerIsBetter: true, digits: 3},
			{key: "copy_mbps", label: "copy to the remote tier, local.retention.ms=1 to the last local segment deleted (MB/s)", digits: 1},
			{key: "local_cpu_s_per_gb", label: "broker CPU, local read (s/GB out)", lowerIsBetter: true, digits: 2},
			{key: "remote_cpu_s_per_gb", label: "broker CPU, remote read (s/GB out)", lowerIsBetter: true, digits: 2},
			{key: "remote_rss_mb", label: "broker peak RSS, remote read (MB)", lowerIsBetter: true, digits: 0},
		},
		run: runRemoteRead, samsaOnly: true, objectStore: true,
	}}
}

func runRemoteRead(ctx context.Context, env *runEnv) (sample, error) {
	if env.tiered == nil {
		return nil, fmt.Errorf("no object store for the tiered workload")
	}
	const topic = "tiered"
	if _, _, err := bench.EnsureTopic(ctx, []string{env.broker.addr}, env.clientOpts, bench.TopicSpec{
		Name: topic, Partitions: tieredPartitions, ReplicationFactor: 1,
		Configs: map[string]*string{"remote.storage.enable": kadm.StringPtr("true"), "segment.bytes": kadm.StringPtr(strconv.Itoa(tieredSegmentBytes))},
	}); err != nil {
		return nil, err
	}
	spec := produceSpec{recordBytes: 1024, acks: 1, partitions: tieredPartitions, producers: 1}
	pc := spec.config(env, topic)
	pc.Duration = 0
	pc.Records = max(env.opts.remoteBytes/int64(spec.recordBytes), 1)
	pc.Progress = nil
	written, err := bench.Produce(ctx, pc)
	if err == nil {
		err = resultError(written)
	}
	if err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	total := written.Records + 1 // the warm-up record
	cc := bench.ConsumeConfig{
		Brokers: []string{env.broker.addr}, Topic: topic, Records: total, RawFetch: true,
		IdleTimeout: 30 * time.Second, ProgressInterval: time.Second, Progress: env.progress,
	}
	s := sample{}
	read := func(phase string) (bench.Result, error) {
		p, err := beginPhase(env)
		if err != nil {
			return bench.Result{}, err
		}
		r, err := bench.Consume(ctx, cc)
		if err == nil {
			err = resultError(r)
		}
		if err == nil && r.Records < total {
			err = fmt.Errorf("read %d of %d records", r.Records, total)
		}
		if err != nil {
			return r, fmt.Errorf("%s read: %w", phase, err)
		}
		cpu, rss, err := p.end()
		s[phase+"_cpu_s_per_gb"] = cpuPerGB(cpu, r.Bytes)
		s[phase+"_rss_mb"] = rss
		s[phase+"_mbps"] = r.MBPerSecond()
		return r, err
	}
	if _, err := read("local"); err != nil {
		return nil, err
	}

	copyStart := time.Now()
	if err := alterTopicConfig(ctx, env, topic, "local.retention.ms", "1"); err != nil {
		return nil, err
	}
	copyTimeout := time.Minute + time.Duration(float64(written.Bytes)/(tieredCopyMinMBps*1e6)*float64(time.Second))
	if err := waitAllRemote(ctx, env, topic, copyTimeout); err != nil {
		return nil, err
	}
	s["copy_mbps"] = float64(written.Bytes) / 1e6 / time.Since(copyStart).Seconds()

	before, err := scrapeMetrics(ctx, env.tiered.metricsAddr)
	if err != nil {
		return nil, err
	}
	remote, err := read("remote")
	if err != nil {
		return nil, err
	}
	after, err := scrapeMetrics(ctx, env.tiered.metricsAddr)
	if err != nil {
		return nil, err
	}
	served := after["samsa_remote_fetch_served_bytes_total"] - before["samsa_remote_fetch_served_bytes_total"]
	if served < float64(remote.Bytes) {
		return nil, fmt.Errorf("the remote tier served %.0f bytes of the %d read: the read was not all remote", served, remote.Bytes)
	}
	fetched := after["samsa_remote_fetch_bytes_total"] - before["samsa_remote_fetch_bytes_total"]
	s["remote_amplification"] = fetched / float64(remote.Bytes)
	s[recordsKey] = float64(remote.Records)
	if env.log != nil {
		fmt.Fprintf(env.log, "  remote read: %d bytes served, %.0f fetched from the store, %.0f served by the remote reader in all (retries of timed-out reads included)\n",
			remote.Bytes, fetched, served)
	}
	return s, nil
}

func alterTopicConfig(ctx context.Context, env *runEnv, topic, key, value string) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(env.broker.addr)}, env.clientOpts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: key, Value: kadm.StringPtr(value)}}, topic)
	if err == nil {
		for _, r := range resp {
			if r.Err != nil {
				err = fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("alter %s=%s: %w", key, value, err)
	}
	return nil
}

// waitAllRemote waits until every partition's earliest local offset
// (ListOffsets -4, KIP-405) is its end: every record is in the bucket only.
func waitAllRemote(ctx context.Context, env *runEnv, topic string, timeout time.Duration) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(env.broker.addr)}, env.clientOpts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	deadline := time.Now().Add(timeout)
	lastLog := time.Now()
	for {
		earliestLocal, err := listOffsets(ctx, cl, topic, -4)
		if err != nil {
			return err
		}
		latest, err := listOffsets(ctx, cl, topic, -1)
		if err != nil {
			return err
		}
		pending := 0
		for p := range tieredPartitions {
			if earliestLocal[int32(p)] < latest[int32(p)] {
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		if env.log != nil && time.Since(lastLog) >= 10*time.Second {
			fmt.Fprintf(env.log, "  %d partitions still have local data\n", pending)
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s, %d partitions still have local data", timeout, pending)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// listOffsets asks ListOffsets v9 for one timestamp spec of every partition.
func listOffsets(ctx context.Context, cl *kgo.Client, topic string, spec int64) (map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = 9, -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range tieredPartitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = int32(p), spec, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("ListOffsets %d of %s-%d: %w", spec, topic, p.Partition, err)
			}
			out[p.Partition] = p.Offset
		}
	}
	return out, nil
}

// scrapeMetrics reads the node's /metrics and returns the unlabelled
// series by name.
func scrapeMetrics(ctx context.Context, addr string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: HTTP %d", resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads Prometheus' text format and returns the unlabelled
// samples by name; lines it does not understand are skipped, and a line
// longer than 1 MiB is an error.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		name, value, ok := strings.Cut(scanner.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = v
		}
	}
	return out, scanner.Err()
}
