package partition

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// roleHarness is a Manager for node 1 over one log dir, told about one
// partition t-0 with replicas 1 and 2 through metadata images.
type roleHarness struct {
	t       *testing.T
	m       *Manager
	img     *metadata.Image
	offset  int64
	topicID metadata.UUID
}

func newRoleHarness(t *testing.T, leader int32) *roleHarness {
	t.Helper()
	logs, err := log.NewManager(vfs.Default, []string{t.TempDir()}, log.ManagerOptions{ClusterID: "3Db5QLSqSZieL3rJBUUegA", NodeID: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logs.Shutdown() })
	broker, _, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	topicConfig := func(img *metadata.Image, topic string) *config.TopicConfig {
		tc := broker.ResolveTopic(img.Configs(metadata.ResourceTopic, topic))
		return &tc
	}
	h := &roleHarness{t: t, m: NewManager(1, logs, topicConfig, nil, quiet), img: metadata.EmptyImage(), topicID: metadata.UUID{7}}
	h.apply(&metadata.TopicRecord{Name: "t", TopicID: h.topicID},
		&metadata.PartitionRecord{TopicID: h.topicID, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: leader})
	return h
}

func (h *roleHarness) apply(recs ...metadata.Record) {
	h.t.Helper()
	old := h.img
	h.img = h.img.Apply(h.offset, recs)
	h.offset++
	if old.NumTopics() == 0 {
		old = nil
	}
	if err := h.m.Reconcile(old, h.img); err != nil {
		h.t.Fatal(err)
	}
}

// lead moves the leadership of t-0 to node (a new leader epoch).
func (h *roleHarness) lead(node int32) {
	h.t.Helper()
	h.apply(&metadata.PartitionChangeRecord{TopicID: h.topicID, Partition: 0, Leader: &node})
}

func (h *roleHarness) leader() *Partition {
	h.t.Helper()
	p := h.m.Get("t", 0)
	if p == nil || h.m.GetFollower("t", 0) != nil {
		h.t.Fatal("t-0 is not led here")
	}
	return p
}

func (h *roleHarness) follower() *Partition {
	h.t.Helper()
	p := h.m.GetFollower("t", 0)
	if p == nil || h.m.Get("t", 0) != nil {
		h.t.Fatal("t-0 is not followed here")
	}
	return p
}

// replicate appends s to the follower as a batch fetched from the leader
// would arrive, at the follower's log end; it returns the base offset.
func replicate(t *testing.T, f *Partition, s batchSpec) int64 {
	t.Helper()
	b, _ := buildBatch(t, s)
	base := f.Log.LogEndOffset()
	record.SetBaseOffset(b, base)
	record.SetPartitionLeaderEpoch(b, f.LeaderEpoch())
	if err := f.AppendAsFollower(b, base); err != nil {
		t.Fatal(err)
	}
	return base
}

// resendAll sends each batch again to the leader and checks it is answered
// as a duplicate with its original base offset, writing nothing.
func resendAll(t *testing.T, p *Partition, specs []batchSpec, bases []int64) {
	t.Helper()
	end := p.Log.LogEndOffset()
	for i, s := range specs {
		res, code := appendSpec(t, p, s, AppendOptions{})
		if code != nil {
			t.Fatalf("retry of batch %d (sequence %d): %v, want a duplicate", i, s.seq, code)
		}
		if res.BaseOffset != bases[i] {
			t.Fatalf("retry of batch %d answered base offset %d, want its original %d", i, res.BaseOffset, bases[i])
		}
	}
	if got := p.Log.LogEndOffset(); got != end {
		t.Fatalf("retries moved the log end from %d to %d", end, got)
	}
}

// TestPromotedFollowerKeepsCachedBatches: a follower that replicated five
// batches of an idempotent producer and is then promoted answers a retry of
// any of them as a duplicate (Kafka's NUM_BATCHES_TO_RETAIN), not only of
// the last one a snapshot holds, and takes the next batch in sequence. The
// same holds after the leadership goes away and comes back.
func TestPromotedFollowerKeepsCachedBatches(t *testing.T) {
	h := newRoleHarness(t, 2)
	f := h.follower()
	const pid, perBatch = 4000, 3
	var specs []batchSpec
	var bases []int64
	for i := range producerBatchCacheSize {
		s := batchSpec{pid: pid, epoch: 2, seq: int32(i * perBatch), n: perBatch}
		specs = append(specs, s)
		bases = append(bases, replicate(t, f, s))
	}
	// A second producer with an open transaction, carried over too.
	txnFirst := replicate(t, f, batchSpec{pid: pid + 1, epoch: 0, seq: 0, txn: true})

	h.lead(1)
	p := h.leader()
	resendAll(t, p, specs, bases)
	sixth := batchSpec{pid: pid, epoch: 2, seq: producerBatchCacheSize * perBatch, n: perBatch}
	res := mustAppendSpec(t, p, sixth)
	if want := txnFirst + 1; res.BaseOffset != want {
		t.Fatalf("sixth batch at %d, want %d", res.BaseOffset, want)
	}
	specs, bases = append(specs[1:], sixth), append(bases[1:], res.BaseOffset)
	if _, code := appendSpec(t, p, batchSpec{pid: pid, epoch: 2, seq: sixth.seq + 2*perBatch}, AppendOptions{}); code != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("a gap after the promotion answered %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	var txnStart int64 = -2
	for _, info := range p.ActiveProducers() {
		if info.ProducerID == pid+1 {
			txnStart = info.CurrentTxnStartOffset
		}
	}
	if txnStart != txnFirst {
		t.Fatalf("open transaction of producer %d starts at %d after the promotion, want %d", pid+1, txnStart, txnFirst)
	}
	// The old follower is closed: it takes no more replicated batches.
	if err := f.AppendAsFollower(nil, 0); err == nil {
		t.Fatal("the retired follower still takes appends")
	}

	// Leader to follower and back: the last five batches are still known.
	h.lead(2)
	f = h.follower()
	if _, code := appendSpec(t, p, sixth, AppendOptions{}); code != kerr.NotLeaderForPartition {
		t.Fatalf("the old leader answered %v, want NOT_LEADER_OR_FOLLOWER", code)
	}
	// Whatever still holds the old leader cannot touch the follower's state.
	if n := p.ExpireProducers(time.Now().Add(time.Hour).UnixMilli(), 1); n == 0 {
		t.Fatal("the old leader had no producers to expire")
	}
	h.lead(1)
	p = h.leader()
	resendAll(t, p, specs, bases)
	seventh := batchSpec{pid: pid, epoch: 2, seq: sixth.seq + perBatch}
	if res := mustAppendSpec(t, p, seventh); res.BaseOffset != bases[len(bases)-1]+perBatch {
		t.Fatalf("seventh batch at %d, want %d", res.BaseOffset, bases[len(bases)-1]+perBatch)
	}
}

// TestHandoffFitsOnlyItsLog: a handed-off producer state is used only for
// the same log under the same topic id, at the log end it was taken at;
// otherwise the partition loads its state from the snapshot and the log.
func TestHandoffFitsOnlyItsLog(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	for i := range 3 {
		mustAppendSpec(t, p, batchSpec{pid: 9, epoch: 0, seq: int32(i)})
	}
	from, err := p.close()
	if err != nil {
		t.Fatal(err)
	}
	if from.producersFor(p.TopicID, p.Log) == nil {
		t.Fatal("the handoff does not fit the log it was taken from")
	}
	if from.producersFor(metadata.UUID{2}, p.Log) != nil {
		t.Fatal("the handoff fits a log under another topic id")
	}
	other := testPartition(t, t.TempDir(), time.Now)
	defer other.Log.Close()
	if from.producersFor(p.TopicID, other.Log) != nil {
		t.Fatal("the handoff fits another log")
	}
	b, _ := buildBatch(t, batchSpec{noPID: true})
	if _, err := p.Log.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	if from.producersFor(p.TopicID, p.Log) != nil {
		t.Fatal("the handoff fits a log that grew since")
	}
	var nilHandoff *handoff
	if nilHandoff.producersFor(p.TopicID, p.Log) != nil {
		t.Fatal("a nil handoff gave a producer state")
	}
	// Reopened with the stale handoff, the state comes from the snapshot:
	// only the last batch is known.
	q, err := open(p.Topic, p.Index, p.TopicID, p.Log, 0, Options{Logger: quiet}, from)
	if err != nil {
		t.Fatal(err)
	}
	if _, code := appendSpec(t, q, batchSpec{pid: 9, epoch: 0, seq: 2}, AppendOptions{}); code != nil {
		t.Fatalf("retry of the last batch: %v", code)
	}
	if _, code := appendSpec(t, q, batchSpec{pid: 9, epoch: 0, seq: 1}, AppendOptions{}); code != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("retry of an older batch after a reload: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
}

// snapshotAt decodes the producer snapshot at offset into entries by
// producer id.
func snapshotAt(t *testing.T, l *log.Log, offset int64) map[int64]producerEntry {
	t.Helper()
	entries, err := readSnapshot(l, offset)
	if err != nil {
		t.Fatalf("snapshot at %d: %v", offset, err)
	}
	out := map[int64]producerEntry{}
	for _, e := range entries {
		out[e.producerID] = e
	}
	return out
}

// TestRoleChangesLeaveOneRollHook: every role change opens a new Partition
// over the same log; the closed one's roll hook goes with it, so after many
// changes the log has exactly one hook, and a roll writes the producer
// snapshot of the Partition hosting the log now.
func TestRoleChangesLeaveOneRollHook(t *testing.T) {
	h := newRoleHarness(t, 1)
	l := h.leader().Log
	hooks := func(when string) {
		t.Helper()
		if n := l.RollHooks(); n != 1 {
			t.Fatalf("%s: %d roll hooks on the log, want 1", when, n)
		}
	}
	hooks("first leader")
	const pid, changes = 6000, 50
	var seq int32
	for i := range changes {
		h.lead(2)
		f := h.follower()
		if f.Log != l {
			t.Fatal("the follower was opened over another log")
		}
		hooks(fmt.Sprintf("follower after %d changes", 2*i+1))
		replicate(t, f, batchSpec{pid: pid, epoch: 0, seq: seq})
		seq++
		h.lead(1)
		hooks(fmt.Sprintf("leader after %d changes", 2*i+2))
		mustAppendSpec(t, h.leader(), batchSpec{pid: pid, epoch: 0, seq: seq})
		seq++
	}
	// A producer only the current leader has seen, then a roll.
	p := h.leader()
	mustAppendSpec(t, p, batchSpec{pid: pid + 1, epoch: 3, seq: 0, n: 2})
	end := l.LogEndOffset()
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	offsets, err := l.ProducerSnapshotOffsets()
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) == 0 || offsets[len(offsets)-1] != end {
		t.Fatalf("snapshots at %v after a roll at %d, want the newest at %d", offsets, end, end)
	}
	snap := snapshotAt(t, l, end)
	if e, ok := snap[pid]; !ok || e.lastSeq() != seq-1 {
		t.Fatalf("snapshot entry of producer %d = %+v, want last sequence %d", pid, e, seq-1)
	}
	if e, ok := snap[pid+1]; !ok || e.epoch != 3 || e.lastSeq() != 1 {
		t.Fatalf("snapshot entry of producer %d = %+v, want epoch 3, last sequence 1", pid+1, e)
	}

	// Moving away (no longer a replica) removes the last hook.
	h.apply(&metadata.PartitionChangeRecord{TopicID: h.topicID, Partition: 0, Replicas: []int32{2, 3}, ISR: []int32{2, 3}, Leader: ptr[int32](2)})
	if h.m.Get("t", 0) != nil || h.m.GetFollower("t", 0) != nil {
		t.Fatal("t-0 still hosted after it moved away")
	}
	if n := l.RollHooks(); n != 0 {
		t.Fatalf("%d roll hooks on the log of a partition hosted no more, want 0", n)
	}
}

func ptr[T any](v T) *T { return &v }
