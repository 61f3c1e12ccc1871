package partition

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// newMoveHarness is a roleHarness whose node has two log dirs.
func newMoveHarness(t *testing.T, leader int32) (*roleHarness, []string) {
	t.Helper()
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	logs, err := log.NewManager(vfs.Default, dirs, log.ManagerOptions{ClusterID: "3Db5QLSqSZieL3rJBUUegA", NodeID: 1, Logger: quiet})
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
	return h, dirs
}

// otherDir is the log dir t-0 is not in.
func otherDir(t *testing.T, m *Manager, dirs []string) string {
	t.Helper()
	current := m.logs.LogDir(log.TopicPartition{Topic: "t", Partition: 0})
	for _, d := range dirs {
		if d != current {
			return d
		}
	}
	t.Fatalf("t-0 is in %q, not in either of %v", current, dirs)
	return ""
}

// stepUntilMoved runs StepMoves until no move is pending, bounded.
func stepUntilMoved(t *testing.T, m *Manager, maxBytes int32) (swapped bool) {
	t.Helper()
	for range 10000 {
		pending, s := m.StepMoves(maxBytes)
		swapped = swapped || s
		if !pending && len(m.LogDirMoves()) == 0 {
			return swapped
		}
	}
	t.Fatal("the move did not finish in 10000 steps")
	return false
}

// TestLogDirMoveLeader moves a led partition between log dirs in small
// steps while it takes appends: DescribeLogDirs's view shows the future
// replica and its lag, and after the swap the partition serves from the
// new dir with every batch, the aborted-transaction index, the open
// transaction and the idempotent producer's cached batches intact; the old
// dir is renamed for deletion.
func TestLogDirMoveLeader(t *testing.T) {
	h, dirs := newMoveHarness(t, 1)
	p := h.leader()
	oldDir := p.Log.Dir()
	const pid, perBatch = 500, 2
	var specs []batchSpec
	var bases []int64
	for i := range 20 {
		s := batchSpec{pid: pid, epoch: 0, seq: int32(i * perBatch), n: perBatch, payload: strings.Repeat("x", 200)}
		if i >= 15 {
			specs = append(specs, s)
			bases = append(bases, mustAppendSpec(t, p, s).BaseOffset)
			continue
		}
		mustAppendSpec(t, p, s)
	}
	// An aborted transaction, whose index entry must move too.
	mustAppendSpec(t, p, batchSpec{pid: pid + 1, epoch: 0, seq: 0, txn: true})
	if _, code, err := p.AppendTxnMarker(TxnMarker{ProducerID: pid + 1, ProducerEpoch: 0, CoordinatorEpoch: 1}); code != nil || err != nil {
		t.Fatalf("abort marker: %v %v", code, err)
	}
	// A transaction left open across the move.
	openFirst := mustAppendSpec(t, p, batchSpec{pid: pid + 2, epoch: 0, seq: 0, txn: true}).BaseOffset
	abortedBefore, err := p.CollectAbortedTxns(0, p.Log.LogEndOffset())
	if err != nil || len(abortedBefore) != 1 {
		t.Fatalf("aborted before the move: %+v %v", abortedBefore, err)
	}

	dest := otherDir(t, h.m, dirs)
	if err := h.m.AlterLogDir("t", 0, dest); err != nil {
		t.Fatal(err)
	}
	moves := h.m.LogDirMoves()
	if len(moves) != 1 || moves[0].FutureDir != dest || moves[0].OffsetLag != p.Log.LogEndOffset() {
		t.Fatalf("moves before copying: %+v, want one to %s lagging by %d", moves, dest, p.Log.LogEndOffset())
	}
	// One small step copies one batch: still lagging.
	if pending, _ := h.m.StepMoves(1); !pending {
		t.Fatal("the first one-batch step reported the move done")
	}
	if moves := h.m.LogDirMoves(); len(moves) != 1 || moves[0].OffsetLag <= 0 || moves[0].FutureSize <= 0 {
		t.Fatalf("moves after one step: %+v", moves)
	}
	// Appends go on during the move.
	for i := 20; i < 25; i++ {
		s := batchSpec{pid: pid, epoch: 0, seq: int32(i * perBatch), n: perBatch}
		specs = append(specs[1:], s)
		bases = append(bases[1:], mustAppendSpec(t, p, s).BaseOffset)
	}
	end := p.Log.LogEndOffset()
	stepUntilMoved(t, h.m, 1024)

	if !p.Closed() {
		t.Fatal("the Partition over the old log still serves")
	}
	if _, code := appendSpec(t, p, batchSpec{pid: 9, epoch: 0, seq: 0}, AppendOptions{}); code == nil {
		t.Fatal("the old Partition took an append after the move")
	}
	moved := h.leader()
	if got := filepath.Dir(moved.Log.Dir()); got != dest {
		t.Fatalf("t-0 is in %s after the move, want %s", got, dest)
	}
	if moved.Log.LogEndOffset() != end || moved.HighWatermark() != p.HighWatermark() {
		t.Fatalf("moved log ends at %d with high watermark %d, want %d and %d", moved.Log.LogEndOffset(), moved.HighWatermark(), end, p.HighWatermark())
	}
	if _, err := os.Stat(oldDir); !os.IsNotExist(err) {
		t.Fatalf("old partition dir still there: %v", err)
	}
	deleted, _ := filepath.Glob(filepath.Join(filepath.Dir(oldDir), "t-0.*-delete"))
	if len(deleted) != 1 {
		t.Fatalf("old dir renamed for deletion: %v", deleted)
	}
	aborted, err := moved.CollectAbortedTxns(0, moved.Log.LogEndOffset())
	if err != nil || len(aborted) != 1 || aborted[0] != abortedBefore[0] {
		t.Fatalf("aborted after the move: %+v (%v), want %+v", aborted, err, abortedBefore)
	}
	var txnStart int64 = -2
	for _, info := range moved.ActiveProducers() {
		if info.ProducerID == pid+2 {
			txnStart = info.CurrentTxnStartOffset
		}
	}
	if txnStart != openFirst {
		t.Fatalf("open transaction starts at %d after the move, want %d", txnStart, openFirst)
	}
	resendAll(t, moved, specs, bases)
	if got, want := moved.Log.EpochCache().Entries(), p.Log.EpochCache().Entries(); len(got) != len(want) || (len(got) > 0 && got[len(got)-1] != want[len(want)-1]) {
		t.Fatalf("leader epochs after the move: %+v, want %+v", got, want)
	}
	// Every batch reads back from the new dir.
	for offset := int64(0); offset < end; {
		data, _, err := moved.Log.ReadBytes(offset, 1<<20, end, true)
		if err != nil || len(data) == 0 {
			t.Fatalf("read at %d: %v", offset, err)
		}
		_, _, last := wholeBatches(data)
		offset = last + 1
	}
}

// TestLogDirMoveFollowerTruncated moves a follower whose log is truncated
// (to match a new leader) in the middle of the copy: the future log is cut
// where they diverge, and the follower ends up in the new dir with the
// truncated log's content and the batches replicated after.
func TestLogDirMoveFollowerTruncated(t *testing.T) {
	h, dirs := newMoveHarness(t, 2)
	f := h.follower()
	for i := range 10 {
		replicate(t, f, batchSpec{pid: 70, epoch: 0, seq: int32(i)})
	}
	dest := otherDir(t, h.m, dirs)
	if err := h.m.AlterLogDir("t", 0, dest); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		h.m.StepMoves(1)
	}
	if moves := h.m.LogDirMoves(); len(moves) != 1 || moves[0].OffsetLag != 2 {
		t.Fatalf("moves after 8 one-batch steps: %+v, want a lag of 2", moves)
	}
	h.lead(3) // a new leader, whose log this follower's is cut to at 5
	f = h.follower()
	if err := f.TruncateTo(5); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		replicate(t, f, batchSpec{pid: 71, epoch: 0, seq: int32(i), payload: "new"})
	}
	if swapped := stepUntilMoved(t, h.m, 1<<20); !swapped {
		t.Fatal("StepMoves did not report the follower reopened")
	}
	moved := h.follower()
	if moved == f || filepath.Dir(moved.Log.Dir()) != dest {
		t.Fatalf("follower not reopened in %s: %s", dest, moved.Log.Dir())
	}
	if moved.Log.LogEndOffset() != 8 {
		t.Fatalf("moved follower ends at %d, want 8", moved.Log.LogEndOffset())
	}
	data, _, err := moved.Log.ReadBytes(5, 1<<20, 8, true)
	if err != nil || !strings.Contains(string(data), "newv") {
		t.Fatalf("the batches replicated after the truncation are not in the moved log: %v", err)
	}
	if err := f.AppendAsFollower(nil, 0); err == nil {
		t.Fatal("the follower over the old log still takes appends")
	}
	replicate(t, moved, batchSpec{pid: 71, epoch: 0, seq: 3})
}

// TestLogDirMoveErrors: a dir not in log.dirs, an offline dir, a partition
// not hosted here, and a move back to the current dir, which cancels the
// move in progress.
func TestLogDirMoveErrors(t *testing.T) {
	h, dirs := newMoveHarness(t, 1)
	p := h.leader()
	mustAppendSpec(t, p, batchSpec{noPID: true})
	if err := h.m.AlterLogDir("t", 0, filepath.Join(t.TempDir(), "elsewhere")); !errors.Is(err, log.ErrLogDirNotFound) {
		t.Fatalf("unconfigured dir: %v", err)
	}
	if err := h.m.AlterLogDir("nope", 0, dirs[0]); !errors.Is(err, ErrReplicaNotAvailable) {
		t.Fatalf("unknown partition: %v", err)
	}
	dest := otherDir(t, h.m, dirs)
	if err := h.m.AlterLogDir("t", 0, dest); err != nil {
		t.Fatal(err)
	}
	if len(h.m.LogDirMoves()) != 1 {
		t.Fatal("no move in progress")
	}
	if err := h.m.AlterLogDir("t", 0, filepath.Dir(p.Log.Dir())); err != nil {
		t.Fatal(err)
	}
	if moves := h.m.LogDirMoves(); len(moves) != 0 {
		t.Fatalf("a move back to the current dir left %+v", moves)
	}
	// The destination dir goes: a file where the dir was.
	if err := os.RemoveAll(dest); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest, []byte("not a dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.m.AlterLogDir("t", 0, dest); !errors.Is(err, log.ErrLogDirOffline) {
		t.Fatalf("offline dir: %v", err)
	}
	if h.m.LogDirOnline(dest) {
		t.Fatal("the dir replaced by a file is reported online")
	}
	if h.leader() != p {
		t.Fatal("a refused move touched the partition")
	}
}
