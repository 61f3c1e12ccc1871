package server

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// logDirsNode starts a node with three log dirs; the third is replaced by a
// file before any topic exists, so it is offline.
func logDirsNode(t *testing.T) (tn *testNode, dirs []string) {
	t.Helper()
	base := t.TempDir()
	for i := range 3 {
		dirs = append(dirs, filepath.Join(base, "dir"+strconv.Itoa(i)))
	}
	tn = startTestNode(t, "log.dirs="+strings.Join(dirs, ","))
	if err := os.RemoveAll(dirs[2]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dirs[2], []byte("a failed disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tn, dirs
}

// replicaDir returns the dir holding topic-0's current (not future)
// replica, as DescribeLogDirs tells it.
func replicaDir(t *testing.T, adm *kadm.Client, topic string) (dir string, future *kadm.DescribedLogDirPartition) {
	t.Helper()
	described, err := adm.DescribeBrokerLogDirs(testContext(t), 1, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range described {
		p, ok := d.Topics.Lookup(topic, 0)
		if !ok {
			continue
		}
		if p.IsFuture {
			future = &p
		} else {
			dir = d.Dir
		}
	}
	return dir, future
}

// loadProducer produces numbered records to topic from one idempotent
// producer until stopped, keeping what was acknowledged.
type loadProducer struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	next int
	err  error
}

func startLoad(t *testing.T, cl *kgo.Client, topic string, from int) *loadProducer {
	lp := &loadProducer{stop: make(chan struct{}), done: make(chan struct{}), next: from}
	ctx := testContext(t)
	go func() {
		defer close(lp.done)
		for {
			select {
			case <-lp.stop:
				return
			default:
			}
			lp.mu.Lock()
			start := lp.next
			lp.mu.Unlock()
			var recs []*kgo.Record
			for i := start; i < start+50; i++ {
				recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				lp.mu.Lock()
				lp.err = err
				lp.mu.Unlock()
				return
			}
			lp.mu.Lock()
			lp.next = start + 50
			lp.mu.Unlock()
		}
	}()
	return lp
}

// finish stops the load and returns how many records were acknowledged.
func (lp *loadProducer) finish(t *testing.T) int {
	t.Helper()
	close(lp.stop)
	<-lp.done
	if lp.err != nil {
		t.Fatalf("producing during the move: %v", lp.err)
	}
	return lp.next
}

// consumeInOrder reads topic-0 from the start and checks it holds exactly the
// records 0..n-1 in order.
func consumeInOrder(t *testing.T, tn *testNode, topic string, n int) {
	t.Helper()
	cl := tn.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	ctx := testContext(t)
	seen := 0
	for seen < n {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", seen, n, err)
		}
		fetches.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fetches.EachRecord(func(r *kgo.Record) {
			if want := strconv.Itoa(seen); string(r.Value) != want {
				t.Fatalf("record at offset %d is %q, want %q", r.Offset, r.Value, want)
			}
			seen++
		})
	}
	end, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup(topic, 0); o.Offset != int64(n) {
		t.Fatalf("log ends at %d, want %d records", o.Offset, n)
	}
}

// pollMoved waits until topic-0's replica is in dir with no future replica.
func pollMoved(t *testing.T, adm *kadm.Client, topic, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		current, future := replicaDir(t, adm, topic)
		if current == dir && future == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s-0 still in %s (future %+v), want %s", topic, current, future, dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAlterReplicaLogDirs moves a partition between log dirs with kadm
// while an idempotent producer keeps writing to it: DescribeLogDirs shows
// the future replica and its lag while the move is held, the replica
// lands in the new dir, and every acknowledged record is read back once,
// in order. Bad moves get Kafka's errors in the same request.
func TestAlterReplicaLogDirs(t *testing.T) {
	tn, dirs := logDirsNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	mustCreateTopic(t, adm, "moving", 1, nil)
	mustCreateTopic(t, adm, "staying", 1, nil)
	producer := tn.client(kgo.RequiredAcks(kgo.AllISRAcks()))
	load := startLoad(t, producer, "moving", 0)

	src, _ := replicaDir(t, adm, "moving")
	if src == "" {
		t.Fatal("moving-0 is in no log dir")
	}
	dest := dirs[0]
	if src == dirs[0] {
		dest = dirs[1]
	}
	// Enough data to copy in several steps before the move may start.
	waitFor(t, 30*time.Second, "records acknowledged", func() bool {
		load.mu.Lock()
		defer load.mu.Unlock()
		return load.next >= 2000
	})
	tn.node.logDirMover.held.Store(true)

	var req kadm.AlterReplicaLogDirsReq
	req.Add(dest, kadm.TopicsSet{"moving": {0: {}}})
	req.Add(filepath.Join(t.TempDir(), "not-configured"), kadm.TopicsSet{"staying": {0: {}}})
	req.Add(dirs[2], kadm.TopicsSet{"staying": {1: {}}}) // offline dir checked before the partition
	req.Add(dest, kadm.TopicsSet{"ghost": {0: {}}})
	resp, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int32]error{
		"moving":  {0: nil},
		"staying": {0: kerr.LogDirNotFound, 1: kerr.KafkaStorageError},
		"ghost":   {0: kerr.ReplicaNotAvailable},
	}
	for topic, ps := range want {
		for p, wantErr := range ps {
			got, ok := resp[topic][p]
			if !ok {
				t.Fatalf("no answer for %s-%d", topic, p)
			}
			if !errors.Is(got.Err, wantErr) && !(wantErr == nil && got.Err == nil) {
				t.Errorf("%s-%d to %s: %v, want %v", topic, p, got.Dir, got.Err, wantErr)
			}
		}
	}

	// Held: the future replica is listed in the destination with its lag.
	current, future := replicaDir(t, adm, "moving")
	if current != src || future == nil || future.Dir != dest || future.OffsetLag <= 0 {
		t.Fatalf("while held: current in %s, future %+v; want current in %s and a lagging future in %s", current, future, src, dest)
	}
	described, err := adm.DescribeBrokerLogDirs(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := described[dirs[2]]; !errors.Is(d.Err, kerr.KafkaStorageError) {
		t.Fatalf("offline dir described as %+v, want KAFKA_STORAGE_ERROR", d)
	}

	tn.node.logDirMover.held.Store(false)
	tn.node.broker.LogDirMoverWake()
	pollMoved(t, adm, "moving", dest)
	// Keep writing a little after the swap, then read everything back.
	waitFor(t, 30*time.Second, "records acknowledged", func() bool {
		load.mu.Lock()
		defer load.mu.Unlock()
		return load.next >= 4000
	})
	n := load.finish(t)
	consumeInOrder(t, tn, "moving", n)
	if _, err := os.Stat(filepath.Join(src, "moving-0")); !os.IsNotExist(err) {
		t.Fatalf("moving-0 still in its old dir: %v", err)
	}

	// Moving it back to where it is now is a no-op.
	var back kadm.AlterReplicaLogDirsReq
	back.Add(dest, kadm.TopicsSet{"moving": {0: {}}})
	if resp, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, back); err != nil || resp["moving"][0].Err != nil {
		t.Fatalf("move to the current dir: %v %v", err, resp["moving"][0].Err)
	}
	if _, future := replicaDir(t, adm, "moving"); future != nil {
		t.Fatalf("a move to the current dir left a future replica: %+v", future)
	}
}

// TestAlterReplicaLogDirsResumesAfterRestart: a move half copied when the
// node stops resumes from the future dir on disk when it starts again, and
// completes with every record.
func TestAlterReplicaLogDirsResumesAfterRestart(t *testing.T) {
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "a"), filepath.Join(base, "b")}
	tn := startTestNode(t, "log.dirs="+strings.Join(dirs, ","))
	adm := tn.admin()
	ctx := testContext(t)
	mustCreateTopic(t, adm, "resumed", 1, nil)
	producer := tn.client(kgo.DefaultProduceTopic("resumed"))
	const n = 3000
	for i := 0; i < n; i += 100 {
		var recs []*kgo.Record
		for j := i; j < i+100; j++ {
			recs = append(recs, &kgo.Record{Value: []byte(strconv.Itoa(j))})
		}
		if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := replicaDir(t, adm, "resumed")
	dest := dirs[0]
	if src == dirs[0] {
		dest = dirs[1]
	}
	tn.node.logDirMover.held.Store(true)
	var req kadm.AlterReplicaLogDirsReq
	req.Add(dest, kadm.TopicsSet{"resumed": {0: {}}})
	if resp, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, req); err != nil || resp["resumed"][0].Err != nil {
		t.Fatalf("alter: %v %v", err, resp["resumed"][0].Err)
	}
	// Copy a few batches by hand, then stop.
	for range 3 {
		tn.node.partitions.StepMoves(1)
	}
	if _, future := replicaDir(t, adm, "resumed"); future == nil || future.OffsetLag <= 0 || future.Size <= 0 {
		t.Fatalf("future replica before the restart: %+v", future)
	}
	tn.restart()
	adm = tn.admin()
	pollMoved(t, adm, "resumed", dest)
	consumeInOrder(t, tn, "resumed", n)
}
