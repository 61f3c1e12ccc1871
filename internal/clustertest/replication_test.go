package clustertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Replication tests: RF=3, min.insync.replicas=2, acks=all, real processes
// killed, paused and restarted.

const replicatedPartitions = 6

// createReplicatedTopic creates topic with RF=3 and min.insync.replicas=2
// and waits until every partition has a full ISR.
func createReplicatedTopic(t *testing.T, c *Cluster, topic string, partitions int32) {
	t.Helper()
	adm := kadm.NewClient(c.client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	minISR := "2"
	// Until all three brokers registered, the topic cannot have 3 replicas.
	WaitFor(t, 30*time.Second, func() error {
		resp, err := adm.CreateTopic(ctx, partitions, 3, map[string]*string{"min.insync.replicas": &minISR}, topic)
		if err == nil && resp.Err != nil && !errors.Is(resp.Err, kerr.InvalidReplicationFactor) {
			return errStopWaiting{resp.Err}
		}
		return errors.Join(err, resp.Err)
	})
	waitFullISR(t, c, topic, 30*time.Second)
}

// partitionState is one partition as the metadata of a node says.
type partitionState struct {
	leader        int32
	epoch         int32
	replicas, isr []int32
}

func topicState(ctx context.Context, addr, topic string, opts ...kgo.Opt) (map[int32]partitionState, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &topic
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return nil, err
	}
	out := map[int32]partitionState{}
	for _, mt := range resp.Topics {
		for _, p := range mt.Partitions {
			out[p.Partition] = partitionState{leader: p.Leader, epoch: p.LeaderEpoch, replicas: p.Replicas, isr: p.ISR}
		}
	}
	return out, nil
}

func waitFullISR(t *testing.T, c *Cluster, topic string, timeout time.Duration) {
	t.Helper()
	WaitFor(t, timeout, func() error {
		for _, n := range c.Nodes {
			st, err := topicState(context.Background(), n.Addr(), topic, c.ClientOpts...)
			if err != nil {
				return err
			}
			if len(st) == 0 {
				return fmt.Errorf("no partitions yet")
			}
			for p, s := range st {
				if len(s.isr) != len(c.Nodes) || s.leader < 0 {
					return fmt.Errorf("node %s: partition %d leader %d isr %v", n.Addr(), p, s.leader, s.isr)
				}
			}
		}
		return nil
	})
}

func replicationCluster(t *testing.T, overrides ...string) *Cluster {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	return StartCluster(t, 3, append(replicationOverrides(), overrides...)...)
}

// replicationOverrides are the settings of the replication tests' clusters:
// a follower out of the ISR, and back, within seconds.
func replicationOverrides() []string {
	return []string{"replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200"}
}

func acksAllProducer(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	return c.client(t, append([]kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProduceRequestTimeout(5 * time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(100 * time.Millisecond),
	}, opts...)...)
}

// readPartition consumes partition from the start up to its high watermark
// and returns the values in offset order with their offsets.
func readPartition(t *testing.T, c *Cluster, topic string, partition int32) (values []string, offsets []int64) {
	t.Helper()
	adm := kadm.NewClient(c.client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, ok := ends.Lookup(topic, partition)
	if !ok || end.Err != nil {
		t.Fatalf("end offset of %d: %v", partition, end.Err)
	}
	if end.Offset == 0 {
		return nil, nil
	}
	cl := c.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().AtStart()}}))
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading partition %d: got %d of %d", partition, len(values), end.Offset)
		}
		var done bool
		fs.EachRecord(func(r *kgo.Record) {
			values = append(values, string(r.Value))
			offsets = append(offsets, r.Offset)
			if r.Offset >= end.Offset-1 {
				done = true
			}
		})
		if done {
			return values, offsets
		}
	}
}

// produceSync produces one record with acks=all and returns its error.
func produceSync(ctx context.Context, cl *kgo.Client, topic string, partition int32, value string) error {
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(value)}).FirstErr()
}

// TestReplicationLeaderKill kills the leader of a partition and measures
// the time to the first successful acks=all produce on it; then a follower
// offline for a while catches up and rejoins the ISR, and every replica
// holds the same records.
func TestReplicationLeaderKill(t *testing.T) {
	// Failover is bounded by how soon the controller fences the dead
	// leader: a session timeout tuned for tests (Kafka's default is 9 s).
	c := replicationCluster(t, "broker.session.timeout.ms=1000", "broker.heartbeat.interval.ms=100")
	const topic = "replicated-kill"
	createReplicatedTopic(t, c, topic, 1)
	producer := acksAllProducer(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 100 {
		if err := produceSync(ctx, producer, topic, 0, strconv.Itoa(i)); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	// A topic needing 3 in-sync replicas, for the NOT_ENOUGH_REPLICAS check.
	adm := kadm.NewClient(c.client(t))
	three := "3"
	if resp, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": &three}, "replicated-strict"); err != nil || resp.Err != nil {
		t.Fatalf("create strict topic: %v %v", err, resp.Err)
	}
	waitFullISR(t, c, "replicated-strict", 30*time.Second)
	leader := c.Nodes[st[0].leader-1]
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	role := "not the active controller"
	if md.ControllerID == st[0].leader {
		role = "also the active controller"
	}
	killed := time.Now()
	leader.Kill()
	next := 100
	for {
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		err := produceSync(pctx, producer, topic, 0, strconv.Itoa(next))
		pcancel()
		if err == nil {
			next++
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no acks=all produce succeeded after killing the leader: %v", err)
		}
	}
	t.Logf("leader kill: first acks=all produce %v after SIGKILL of leader %d (%s)", time.Since(killed).Round(time.Millisecond), st[0].leader, role)

	// With a node down, a topic needing 3 in-sync replicas refuses acks=all
	// writes with NOT_ENOUGH_REPLICAS once the ISR shrank.
	strict := acksAllProducer(t, c, kgo.RecordRetries(0), kgo.RecordDeliveryTimeout(5*time.Second))
	WaitFor(t, 30*time.Second, func() error {
		err := produceSync(ctx, strict, "replicated-strict", 0, "x")
		if errors.Is(err, kerr.NotEnoughReplicas) {
			return nil
		}
		return fmt.Errorf("acks=all to a topic with 2 of 3 replicas in sync: %v", err)
	})

	// The old leader stays down while more is written, then catches up and
	// rejoins the ISR.
	for i := range 200 {
		if err := produceSync(ctx, producer, topic, 0, strconv.Itoa(next+i)); err != nil {
			t.Fatalf("produce with one node down: %v", err)
		}
	}
	next += 200
	restarted := time.Now()
	leader.Start()
	waitFullISR(t, c, topic, 60*time.Second)
	t.Logf("follower catch-up: node %d rejoined the ISR %v after restart", st[0].leader, time.Since(restarted).Round(time.Millisecond))

	values, _ := readPartition(t, c, topic, 0)
	checkSequence(t, values, next)
	compareReplicas(t, c, topic, 1)
}

// checkSequence checks values are exactly 0..n-1 in order.
func checkSequence(t *testing.T, values []string, n int) {
	t.Helper()
	if len(values) != n {
		t.Fatalf("read %d records, want %d", len(values), n)
	}
	for i, v := range values {
		if v != strconv.Itoa(i) {
			t.Fatalf("record %d is %q", i, v)
		}
	}
}

// replicaBytes is the segment files of one replica of a partition, one
// after the other.
func replicaBytes(t *testing.T, n *Node, topic string, partition int32) []byte {
	t.Helper()
	dir := filepath.Join(n.Dir, "data", fmt.Sprintf("%s-%d", topic, partition))
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var data []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	return data
}

// replicaRecords parses the segment files of one replica of a partition.
func replicaRecords(t *testing.T, n *Node, topic string, partition int32) []string {
	t.Helper()
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.RecordBatches = replicaBytes(t, n, topic, partition)
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: topic, Partition: partition}, &rp, kgo.DefaultDecompressor(), nil)
	var out []string
	for _, r := range fp.Records {
		out = append(out, fmt.Sprintf("%d:%s", r.Offset, r.Value))
	}
	return out
}

// compareReplicas stops every node (so the logs are still) and checks each
// replica of each partition holds the same records at the same offsets, in
// the same bytes (followers copy the leader's batches unchanged).
func compareReplicas(t *testing.T, c *Cluster, topic string, partitions int32) {
	t.Helper()
	for _, n := range c.Nodes {
		n.Stop()
	}
	for p := range partitions {
		first := replicaRecords(t, c.Nodes[0], topic, p)
		firstBytes := replicaBytes(t, c.Nodes[0], topic, p)
		for i, n := range c.Nodes[1:] {
			other := replicaRecords(t, n, topic, p)
			if !slices.Equal(first, other) {
				t.Errorf("partition %d: replica on node 1 has %d records, node %d has %d; they differ", p, len(first), i+2, len(other))
			} else if otherBytes := replicaBytes(t, n, topic, p); !bytes.Equal(firstBytes, otherBytes) {
				t.Errorf("partition %d: replicas on node 1 and node %d hold the same records in different bytes (%d and %d bytes)", p, i+2, len(firstBytes), len(otherBytes))
			}
		}
		if len(first) == 0 {
			t.Errorf("partition %d: no records on disk", p)
		}
	}
}

// faultReport counts what the verifier found.
type faultReport struct {
	acknowledged, lost, duplicated, reordered, faults int
}

// TestReplicationUnderFaults writes sequence-numbered records with an
// idempotent acks=all producer to 6 partitions while nodes are SIGKILLed,
// SIGSTOPped and restarted at random, one at a time; then every
// acknowledged record must be in the log exactly once, in order.
// SAMSA_SOAK=1 runs it for 10 minutes instead of about one.
func TestReplicationUnderFaults(t *testing.T) {
	duration, minFaults := 60*time.Second, 20
	if os.Getenv("SAMSA_SOAK") == "1" {
		duration, minFaults = 10*time.Minute, 200
	}
	replicationUnderFaults(t, replicationCluster(t), duration, minFaults)
}

// replicationUnderFaults is TestReplicationUnderFaults on c for at least
// duration and minFaults faults.
func replicationUnderFaults(t *testing.T, c *Cluster, duration time.Duration, minFaults int) {
	const topic = "replicated-faults"
	createReplicatedTopic(t, c, topic, replicatedPartitions)
	producer := acksAllProducer(t, c, kgo.MaxBufferedRecords(2000), kgo.RecordDeliveryTimeout(40*time.Second))

	var mu sync.Mutex
	acked := make([][]int, replicatedPartitions)
	var failed int
	failures := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(5 * time.Millisecond)
		defer ticker.Stop()
		seq := make([]int, replicatedPartitions)
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
			for p := range int32(replicatedPartitions) {
				s := seq[p]
				seq[p]++
				producer.Produce(context.Background(), &kgo.Record{Topic: topic, Partition: p, Value: []byte(strconv.Itoa(s))}, func(r *kgo.Record, err error) {
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						failed++
						failures[err.Error()]++
						return
					}
					acked[r.Partition] = append(acked[r.Partition], s)
				})
			}
		}
	}()

	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	faults := 0
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) || faults < minFaults {
		victim := c.Nodes[rng.IntN(len(c.Nodes))]
		down := time.Duration(500+rng.IntN(3500)) * time.Millisecond
		switch rng.IntN(3) {
		case 0:
			victim.Kill()
			pause(down)
			victim.Start()
		case 1:
			victim.Pause()
			pause(down)
			victim.Resume()
		case 2:
			victim.Restart()
		}
		faults++
		// Let the cluster recover before the next fault, so at most one
		// replica is behind at a time (RF=3, min.insync.replicas=2).
		waitFullISR(t, c, topic, 60*time.Second)
		if faults >= 4*minFaults {
			break
		}
	}
	close(stop)
	wg.Wait()
	flushCtx, flushCancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := producer.Flush(flushCtx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	flushCancel()

	mu.Lock()
	ackedBy := make([]map[string][]int, replicatedPartitions)
	for p := range ackedBy {
		ackedBy[p] = map[string][]int{"": acked[p]}
	}
	mu.Unlock()
	rep := verifyAcknowledged(t, c, topic, ackedBy)
	rep.faults = faults
	t.Logf("faults survived %d, acknowledged %d, lost %d, duplicated %d, reordered %d (failed deliveries %d)",
		rep.faults, rep.acknowledged, rep.lost, rep.duplicated, rep.reordered, failed)
	for msg, n := range failures {
		t.Logf("failed delivery (not acknowledged, so allowed): %d x %s", n, msg)
	}
	if failed > 0 || rep.lost+rep.duplicated+rep.reordered > 0 {
		logNodeWarnings(t, c)
	}
	if rep.lost != 0 || rep.duplicated != 0 || rep.reordered != 0 {
		t.Errorf("acks=all guarantees broken: %+v", rep)
	}
	if rep.acknowledged == 0 {
		t.Errorf("nothing was acknowledged")
	}
	compareReplicas(t, c, topic, replicatedPartitions)
}

// verifyAcknowledged reads every partition of topic to its high watermark
// and counts the acknowledged records missing from it, and the records in
// it more than once or out of order. acked is, per partition and per
// producer, the sequence numbers acknowledged; a record's value is its
// producer's name, "-" and its sequence number, or the sequence number
// alone for the producer named "".
func verifyAcknowledged(t *testing.T, c *Cluster, topic string, acked []map[string][]int) faultReport {
	t.Helper()
	var rep faultReport
	for p := range int32(len(acked)) {
		values, _ := readPartition(t, c, topic, p)
		type key struct {
			producer string
			seq      int
		}
		seen := map[key]int{}
		last := map[string]int{}
		for _, v := range values {
			producer, seqText := "", v
			if i := strings.LastIndexByte(v, '-'); i >= 0 {
				producer, seqText = v[:i], v[i+1:]
			}
			s, err := strconv.Atoi(seqText)
			if err != nil {
				t.Fatalf("partition %d: bad value %q", p, v)
			}
			k := key{producer, s}
			seen[k]++
			if seen[k] > 1 {
				rep.duplicated++
			}
			if prev, ok := last[producer]; ok && s < prev {
				rep.reordered++
			}
			last[producer] = max(last[producer], s)
		}
		for producer, seqs := range acked[p] {
			for _, s := range seqs {
				rep.acknowledged++
				if seen[key{producer, s}] == 0 {
					rep.lost++
				}
			}
		}
	}
	return rep
}

// pause waits d: a fault's down time, not a wait for a condition.
func pause(d time.Duration) { <-time.After(d) }
