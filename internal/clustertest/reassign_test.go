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
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// replicaStateOf is one partition as one node's metadata shows it.
func replicaStateOf(ctx context.Context, addr, topic string, partition int32) (partitionState, error) {
	st, err := topicState(ctx, addr, topic)
	if err != nil {
		return partitionState{}, err
	}
	p, ok := st[partition]
	if !ok {
		return partitionState{}, fmt.Errorf("node %s: no partition %s-%d", addr, topic, partition)
	}
	return p, nil
}

// waitReplicas waits until every node's metadata shows the partition on
// exactly replicas, all of them in the ISR, led by one of them.
func waitReplicas(t *testing.T, c *Cluster, topic string, partition int32, replicas []int32, timeout time.Duration) {
	t.Helper()
	WaitFor(t, timeout, func() error { return replicasAre(c.Nodes, topic, partition, replicas) })
}

func replicasAre(nodes []*Node, topic string, partition int32, replicas []int32) error {
	sorted := func(ids []int32) []int32 { s := slices.Clone(ids); slices.Sort(s); return s }
	for _, n := range nodes {
		st, err := replicaStateOf(context.Background(), n.Addr(), topic, partition)
		if err != nil {
			return err
		}
		if !slices.Equal(st.replicas, replicas) || !slices.Equal(sorted(st.isr), sorted(replicas)) || !slices.Contains(replicas, st.leader) {
			return fmt.Errorf("node %s: replicas %v isr %v leader %d, want replicas %v all in sync", n.Addr(), st.replicas, st.isr, st.leader, replicas)
		}
	}
	return nil
}

// listReassignmentsAt asks one node (only) for every reassignment in
// progress.
func listReassignmentsAt(ctx context.Context, addr string) ([]kmsg.ListPartitionReassignmentsResponseTopicPartition, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var out []kmsg.ListPartitionReassignmentsResponseTopicPartition
	for _, rt := range resp.Topics {
		out = append(out, rt.Partitions...)
	}
	return out, nil
}

// createAssignedTopic creates a one-partition topic on replicas (the first
// leads) with min.insync.replicas minISR.
func createAssignedTopic(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, replicas []int32, minISR string) {
	t.Helper()
	WaitFor(t, 30*time.Second, func() error {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = 0, replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name, rc.Value = "min.insync.replicas", &minISR
		rt.Configs = append(rt.Configs, rc)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return err
		}
		return nil
	})
}

// TestReassignmentUnderLoad moves a partition from brokers {1,2,3} to
// {2,3,4}, leader included, while an idempotent acks=all producer writes
// sequence-numbered records to it; then every acknowledged record must be
// in the log exactly once, in order, every target replica must hold the
// same bytes, and the removed replica must have deleted its log. Before
// that, a move towards a stopped broker is cancelled; after it, a replica
// removed while its broker is down deletes its log when the broker is back.
func TestReassignmentUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 4, "replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200")
	const topic = "reassigned"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admClient := newClient(t, c.Addrs())
	adm := kadm.NewClient(admClient)

	// RF=3 on {1,2,3}, led by 1.
	createAssignedTopic(t, ctx, admClient, topic, []int32{1, 2, 3}, "2")
	waitReplicas(t, c, topic, 0, []int32{1, 2, 3}, 30*time.Second)

	producer := acksAllProducer(t, c, kgo.MaxBufferedRecords(4000), kgo.RecordDeliveryTimeout(40*time.Second))
	// Some data already there (incompressible), so the new replica has a
	// log of about 20 MB to copy.
	rng := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	var acked []int
	failures := map[string]int{}
	seq := 0
	produce := func() {
		s := seq
		seq++
		padding := make([]byte, 1000)
		for i := range padding {
			padding[i] = byte('a' + rng.IntN(26))
		}
		value := append([]byte(strconv.Itoa(s)+" "), padding...)
		producer.Produce(context.Background(), &kgo.Record{Topic: topic, Partition: 0, Value: value}, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures[err.Error()]++
				return
			}
			acked = append(acked, s)
		})
	}
	testStart, prefillStart := time.Now(), time.Now()
	for range 20000 {
		produce()
	}
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	prefill := time.Since(prefillStart)

	// Keep writing throughout the move.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(2 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				produce()
			}
		}
	}()

	// First a move that cannot finish, since broker 4 is down: it stays in
	// progress until cancelled, and the cancel reverts it (to the merged
	// replica order minus the replica it was adding, as Kafka does).
	cancelStart := time.Now()
	c.Nodes[3].Stop()
	var attempt kadm.AlterPartitionAssignmentsReq
	attempt.Assign(topic, 0, []int32{2, 3, 4})
	resp, err := adm.AlterPartitionAssignments(ctx, attempt)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp[topic][0]; r.Err != nil {
		t.Fatalf("reassign towards a stopped broker: %v %s", r.Err, r.ErrMessage)
	}
	list, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := list[topic][0]; !ok || !slices.Equal(r.Replicas, []int32{2, 3, 4, 1}) || !slices.Equal(r.AddingReplicas, []int32{4}) || !slices.Equal(r.RemovingReplicas, []int32{1}) {
		t.Fatalf("listed %+v, want replicas 2,3,4,1 adding 4 removing 1", list)
	}
	// Every node answers the same, the ones that are not the active
	// controller by forwarding.
	for _, n := range c.Nodes[:3] {
		got, err := listReassignmentsAt(ctx, n.Addr())
		if err != nil {
			t.Fatalf("list at %s: %v", n.Addr(), err)
		}
		if len(got) != 1 || !slices.Equal(got[0].Replicas, []int32{2, 3, 4, 1}) {
			t.Fatalf("list at %s: %+v", n.Addr(), got)
		}
	}
	var undo kadm.AlterPartitionAssignmentsReq
	undo.CancelAssign(topic, 0)
	if resp, err = adm.AlterPartitionAssignments(ctx, undo); err != nil || resp[topic][0].Err != nil {
		t.Fatalf("cancel: %v %v", err, resp[topic][0].Err)
	}
	WaitFor(t, 30*time.Second, func() error { return replicasAre(c.Nodes[:3], topic, 0, []int32{2, 3, 1}) })
	if resp, err = adm.AlterPartitionAssignments(ctx, undo); err != nil || !errors.Is(resp[topic][0].Err, kerr.NoReassignmentInProgress) {
		t.Fatalf("second cancel: %v %v", err, resp[topic][0].Err)
	}
	c.Nodes[3].Start()
	WaitFor(t, 30*time.Second, func() error {
		if n, err := brokerCount(c.Nodes[3].Addr()); err != nil || n != 4 {
			return fmt.Errorf("node 4 back: %d brokers, %v", n, err)
		}
		return replicasAre(c.Nodes, topic, 0, []int32{2, 3, 1})
	})

	cancelPhase := time.Since(cancelStart)

	started := time.Now()
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, []int32{2, 3, 4})
	resp, err = adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp[topic][0]; r.Err != nil {
		t.Fatalf("reassign: %v %s", r.Err, r.ErrMessage)
	}
	sawInProgress := false
	WaitFor(t, 60*time.Second, func() error {
		list, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}})
		if err != nil {
			return err
		}
		if r, ok := list[topic][0]; ok {
			sawInProgress = true
			return fmt.Errorf("in progress: replicas %v adding %v removing %v", r.Replicas, r.AddingReplicas, r.RemovingReplicas)
		}
		return replicasAre(c.Nodes, topic, 0, []int32{2, 3, 4})
	})
	moved := time.Since(started)

	// A few hundred more acknowledged after the move, by the new leader.
	mu.Lock()
	atMove := len(acked)
	mu.Unlock()
	WaitFor(t, 30*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(acked) < atMove+300 {
			return fmt.Errorf("%d acknowledged since the move", len(acked)-atMove)
		}
		return nil
	})
	close(stop)
	wg.Wait()
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	// The removed replica deleted its log.
	WaitFor(t, 30*time.Second, func() error {
		dir := filepath.Join(c.Nodes[0].Dir, "data", topic+"-0")
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s still exists (%v)", dir, err)
		}
		return nil
	})

	values, _ := readPartition(t, c, topic, 0)
	seen := map[int]int{}
	duplicated, reordered, last := 0, 0, -1
	for _, v := range values {
		s, err := strconv.Atoi(string(bytes.SplitN([]byte(v), []byte{' '}, 2)[0]))
		if err != nil {
			t.Fatalf("bad value %.20q", v)
		}
		seen[s]++
		if seen[s] > 1 {
			duplicated++
		}
		if s < last {
			reordered++
		}
		last = s
	}
	mu.Lock()
	lost := 0
	for _, s := range acked {
		if seen[s] == 0 {
			lost++
		}
	}
	t.Logf("reassignment {1,2,3} -> {2,3,4} under load: took %v (in progress seen: %v); %d records sent, %d acknowledged, %d in the log, %d lost, %d duplicated, %d reordered; failures %v",
		moved.Round(time.Millisecond), sawInProgress, seq, len(acked), len(values), lost, duplicated, reordered, failures)
	ackedCount := len(acked)
	mu.Unlock()
	if lost > 0 || duplicated > 0 || reordered > 0 {
		t.Fatalf("%d acknowledged records lost, %d duplicated, %d reordered", lost, duplicated, reordered)
	}
	if ackedCount < 20000 {
		t.Fatalf("only %d records acknowledged", ackedCount)
	}

	// A replica removed while its broker is down (Kafka's stray replica)
	// deletes its log once the broker is back.
	createAssignedTopic(t, ctx, admClient, "stray", []int32{4, 1}, "1")
	if err := produceSync(ctx, producer, "stray", 0, "x"); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, c, "stray", 0, []int32{4, 1}, 30*time.Second)
	strayDir := filepath.Join(c.Nodes[0].Dir, "data", "stray-0")
	if _, err := os.Stat(strayDir); err != nil {
		t.Fatalf("node 1 has no log for its replica: %v", err)
	}
	c.Nodes[0].Stop()
	var shrink kadm.AlterPartitionAssignmentsReq
	shrink.Assign("stray", 0, []int32{4})
	if resp, err = adm.AlterPartitionAssignments(ctx, shrink); err != nil || resp["stray"][0].Err != nil {
		t.Fatalf("shrink stray: %v %v", err, resp["stray"][0].Err)
	}
	WaitFor(t, 30*time.Second, func() error { return replicasAre(c.Nodes[1:], "stray", 0, []int32{4}) })
	c.Nodes[0].Start()
	WaitFor(t, 30*time.Second, func() error {
		if _, err := os.Stat(strayDir); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s still exists (%v)", strayDir, err)
		}
		return nil
	})

	// Every target replica holds the same bytes. The nodes are killed
	// rather than stopped one by one: what they wrote stays in the files,
	// and a graceful stop of the last nodes, with the quorum gone, waits
	// for a controlled shutdown that cannot commit.
	for _, n := range c.Nodes {
		n.Kill()
	}
	want := replicaBytes(t, c.Nodes[1], topic, 0)
	if len(want) == 0 {
		t.Fatal("no records on node 2")
	}
	for _, id := range []int{3, 4} {
		if got := replicaBytes(t, c.Nodes[id-1], topic, 0); !bytes.Equal(got, want) {
			t.Errorf("node %d holds %d log bytes, node 2 %d; they differ", id, len(got), len(want))
		}
	}
	t.Logf("target replicas byte-identical: %d log bytes each; phases: 20000-record prefill %v, cancelled move with broker 4 down and back %v, test after cluster start %v",
		len(want), prefill.Round(time.Millisecond), cancelPhase.Round(time.Millisecond), time.Since(testStart).Round(time.Millisecond))
}
