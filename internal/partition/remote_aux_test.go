package partition

import (
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
)

// TestRebuildFromRemote starts a follower's log at a leader's local log
// start from remote aux state: the log start lies in the remote tier, the
// epochs are the remote lineage, the producer state comes from the remote
// snapshot (or, without one, is empty), and replication goes on from there.
func TestRebuildFromRemote(t *testing.T) {
	h := newRoleHarness(t, 2)
	f := h.follower()
	cfg := log.DefaultConfig()
	cfg.RemoteStorage = true
	f.Log.UpdateConfig(cfg)
	replicate(t, f, batchSpec{noPID: true})

	epochs := []log.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 3, StartOffset: 300}, {Epoch: 4, StartOffset: 700}}
	if err := f.RebuildFromRemote(RemoteAuxState{LocalLogStartOffset: 500, LogStartOffset: 100, LeaderEpochs: epochs}); err != nil {
		t.Fatal(err)
	}
	if start, local, end := f.Log.LogStartOffset(), f.Log.LocalLogStartOffset(), f.Log.LogEndOffset(); start != 100 || local != 500 || end != 500 {
		t.Fatalf("log start %d, local start %d, end %d", start, local, end)
	}
	if e, ok := f.Log.LatestEpoch(); !ok || e != 3 {
		t.Fatalf("latest epoch %d %v, want 3 (epoch 4 starts past the local start)", e, ok)
	}
	if got := len(f.ActiveProducers()); got != 0 {
		t.Fatalf("%d producers without a snapshot", got)
	}
	replicate(t, f, batchSpec{pid: 9, epoch: 0, seq: 0})

	producer := emptyEntry(42)
	producer.addBatch(1, batchMetadata{firstSeq: 0, lastSeq: 4, firstOffset: 795, lastOffset: 799, timestamp: time.Now().UnixMilli()})
	snapshot := encodeSnapshot(map[int64]*producerEntry{42: &producer})
	if err := f.RebuildFromRemote(RemoteAuxState{LocalLogStartOffset: 800, LogStartOffset: 100, LeaderEpochs: epochs, ProducerSnapshot: snapshot}); err != nil {
		t.Fatal(err)
	}
	active := f.ActiveProducers()
	if len(active) != 1 || active[0].ProducerID != 42 {
		t.Fatalf("producers after a rebuild with a snapshot: %+v", active)
	}
	if err := f.RebuildFromRemote(RemoteAuxState{LocalLogStartOffset: 900, LogStartOffset: 100, ProducerSnapshot: []byte("junk")}); err == nil {
		t.Fatal("a corrupt remote producer snapshot was accepted")
	}
	if end := f.Log.LogEndOffset(); end != 800 {
		t.Fatalf("a refused rebuild changed the log: end %d, want 800", end)
	}
	if err := f.RebuildFromRemote(RemoteAuxState{LocalLogStartOffset: 50, LogStartOffset: 100}); err == nil {
		t.Fatal("a log start above the local start was accepted")
	}
}
