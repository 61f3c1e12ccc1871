package partition

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// fakeController records ISR proposals and commits them at once.
type fakeController struct {
	mu        sync.Mutex
	proposals [][]int32
	done      chan struct{}
}

func (f *fakeController) alter(_ context.Context, r AlterPartitionRequest) ([]int32, int32, error) {
	f.mu.Lock()
	f.proposals = append(f.proposals, r.NewISR)
	f.mu.Unlock()
	f.done <- struct{}{}
	return r.NewISR, r.PartitionEpoch + 1, nil
}

func TestLeaderHighWatermarkAndISR(t *testing.T) {
	nowMs := int64(1_000_000)
	now := func() time.Time { return time.UnixMilli(nowMs) }
	p := testPartition(t, t.TempDir(), now)
	counts := &ISRChangeCounts{}
	p.isrChanges = counts
	fc := &fakeController{done: make(chan struct{}, 4)}
	if err := p.UpdateReplicaState(LeaderState{NodeID: 1, Leader: 1, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Alter: fc.alter}); err != nil {
		t.Fatal(err)
	}
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 3})
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d before any follower fetched, want 0", hw)
	}
	// Follower 2 (in the ISR) fetches at 2, then at the log end.
	p.UpdateFollowerFetch(2, 2)
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d, want 2", hw)
	}
	p.UpdateFollowerFetch(2, 3)
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("high watermark %d, want 3", hw)
	}
	// Follower 3 (out of the ISR) does not hold the high watermark back;
	// reaching it proposes its joining.
	p.UpdateFollowerFetch(3, 1)
	if len(fc.proposals) != 0 {
		t.Fatalf("proposed %v for a follower below the high watermark", fc.proposals)
	}
	p.UpdateFollowerFetch(3, 3)
	<-fc.done
	waitFor(t, func() bool { return slices.Equal(p.ISR(), []int32{1, 2, 3}) })
	if e, s := counts.Expands.Load(), counts.Shrinks.Load(); e != 1 || s != 0 {
		t.Fatalf("after one expansion: %d expands, %d shrinks counted", e, s)
	}
	// Follower 3 is now in the ISR and lags: the high watermark waits for it.
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 2})
	p.UpdateFollowerFetch(2, 5)
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("high watermark %d with follower 3 at 3, want 3", hw)
	}
	// After replica.lag.time.max.ms without catching up it is dropped, and
	// the high watermark moves on.
	nowMs += 30_001
	p.MaybeShrinkISR(30_000)
	<-fc.done
	waitFor(t, func() bool { return slices.Equal(p.ISR(), []int32{1, 2}) })
	if hw := p.HighWatermark(); hw != 5 {
		t.Fatalf("high watermark %d after the shrink, want 5", hw)
	}
	if got := p.InSyncReplicaCount(); got != 2 {
		t.Fatalf("ISR size %d", got)
	}
	if e, s, f := counts.Expands.Load(), counts.Shrinks.Load(), counts.Failed.Load(); e != 1 || s != 1 || f != 0 {
		t.Fatalf("after one expansion and one shrink: %d expands, %d shrinks, %d failed counted", e, s, f)
	}
}

// TestReadReplicaCandidates checks which followers a leader offers a
// consumer to read from (KIP-392): those in the committed ISR whose log
// holds the fetch offset.
func TestReadReplicaCandidates(t *testing.T) {
	nowMs := int64(1_000_000)
	now := func() time.Time { return time.UnixMilli(nowMs) }
	p := testPartition(t, t.TempDir(), now)
	fc := &fakeController{done: make(chan struct{}, 4)}
	if err := p.UpdateReplicaState(LeaderState{NodeID: 1, Leader: 1, LeaderEpoch: 1, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3}, Alter: fc.alter}); err != nil {
		t.Fatal(err)
	}
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 10})
	ids := func(fetchOffset int64) []int32 {
		cs, ok := p.ReadReplicaCandidates(fetchOffset)
		if !ok {
			t.Fatal("the leader says it does not lead")
		}
		var out []int32
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	if got := ids(0); len(got) != 0 {
		t.Fatalf("candidates %v before any follower fetched", got)
	}
	p.UpdateFollowerLogStartOffset(2, 0)
	p.UpdateFollowerFetch(2, 10)
	p.UpdateFollowerLogStartOffset(3, 5)
	p.UpdateFollowerFetch(3, 8)
	p.UpdateFollowerLogStartOffset(4, 0)
	p.UpdateFollowerFetch(4, 1) // out of the ISR, and behind: never offered
	for _, c := range []struct {
		offset int64
		want   []int32
	}{{0, []int32{2}}, {5, []int32{2, 3}}, {8, []int32{2, 3}}, {9, []int32{2}}} {
		if got := ids(c.offset); !slices.Equal(got, c.want) {
			t.Errorf("fetch offset %d: candidates %v, want %v", c.offset, got, c.want)
		}
	}
	nowMs += 700
	cs, _ := p.ReadReplicaCandidates(0)
	if cs[0].LogEndOffset != 10 || cs[0].TimeSinceCaughtUpMs != 700 {
		t.Errorf("candidate %+v, want log end 10, caught up 700 ms ago", cs[0])
	}
	// A follower is no leader's to offer.
	if err := p.UpdateReplicaState(LeaderState{NodeID: 1, Leader: 2, LeaderEpoch: 2, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.ReadReplicaCandidates(0); ok {
		t.Error("a follower offered read replicas")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLeaderTracksReplicasAddedWithinAnEpoch covers a reassignment: the
// replica set grows and shrinks without a new leader epoch, and the leader
// must let the added replica join the ISR and forget the removed one.
func TestLeaderTracksReplicasAddedWithinAnEpoch(t *testing.T) {
	nowMs := int64(1_000_000)
	now := func() time.Time { return time.UnixMilli(nowMs) }
	p := testPartition(t, t.TempDir(), now)
	fc := &fakeController{done: make(chan struct{}, 4)}
	state := LeaderState{NodeID: 1, Leader: 1, LeaderEpoch: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Alter: fc.alter}
	if err := p.UpdateReplicaState(state); err != nil {
		t.Fatal(err)
	}
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 3})
	p.UpdateFollowerFetch(2, 3)
	// Replica 3 is added in the same epoch; a fetch from it before that is
	// ignored, after it the replica joins once caught up.
	p.UpdateFollowerFetch(3, 3)
	if len(fc.proposals) != 0 {
		t.Fatalf("proposed %v for a non-replica", fc.proposals)
	}
	state.Replicas, state.PartitionEpoch = []int32{1, 2, 3}, 1
	if err := p.UpdateReplicaState(state); err != nil {
		t.Fatal(err)
	}
	p.UpdateFollowerFetch(3, 3)
	select {
	case <-fc.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the added replica was never proposed for the ISR")
	}
	waitFor(t, func() bool { return slices.Equal(p.ISR(), []int32{1, 2, 3}) })
	// The move completes: 2 is removed and no longer holds the high
	// watermark back.
	state.Replicas, state.ISR, state.PartitionEpoch = []int32{1, 3}, []int32{1, 3}, 3
	if err := p.UpdateReplicaState(state); err != nil {
		t.Fatal(err)
	}
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 2})
	p.UpdateFollowerFetch(3, 5)
	if hw := p.HighWatermark(); hw != 5 {
		t.Fatalf("high watermark %d, want 5", hw)
	}
	p.replicaMu.Lock()
	_, kept := p.replica.followers[2]
	p.replicaMu.Unlock()
	if kept {
		t.Fatal("removed replica still tracked")
	}
}

// A node that restarts as the leader of a replicated partition keeps the
// high watermark it checkpointed: records past it may be missing from the
// other in-sync replicas, so they become visible only once those replicas
// are known to have them.
func TestRestartedLeaderKeepsCheckpointedHighWatermark(t *testing.T) {
	dir := t.TempDir()
	p := testPartition(t, dir, time.Now)
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 5})
	end := p.Log.LogEndOffset()
	if err := p.Log.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = 4 << 10
	l, err := log.Open(vfs.Default, dir, cfg, log.OpenOptions{HadCleanShutdown: true, HighWatermark: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p, err = New("t", 0, [16]byte{1}, l, 1, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d after opening, want the checkpointed 2", hw)
	}
	fc := &fakeController{done: make(chan struct{}, 4)}
	if err := p.UpdateReplicaState(LeaderState{NodeID: 1, Leader: 1, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Alter: fc.alter}); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d as leader before the followers fetched, want 2", hw)
	}
	p.UpdateFollowerFetch(2, end)
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d with one of two followers caught up, want 2", hw)
	}
	p.UpdateFollowerFetch(3, end)
	if hw := p.HighWatermark(); hw != end {
		t.Fatalf("high watermark %d with the whole ISR caught up, want %d", hw, end)
	}
}
