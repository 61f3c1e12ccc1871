package partition

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestTruncateWhileReadingLSO: a follower truncating its log (a diverging
// epoch) swaps in a rebuilt producer state while consumer fetches from the
// follower (KIP-392) read its last stable offset and active producers. Run
// under -race this fails if the swap is not safe for lock-free readers; it
// also checks every LSO read stays within the log's bounds and the state
// after the last truncation is that of what is left of the log.
func TestTruncateWhileReadingLSO(t *testing.T) {
	h := newRoleHarness(t, 2)
	f := h.follower()
	const pid = 5000
	replicate(t, f, batchSpec{noPID: true})
	open := replicate(t, f, batchSpec{pid: pid, epoch: 0, seq: 0, txn: true})
	f.UpdateFollowerHighWatermark(f.Log.LogEndOffset())
	cut := f.Log.LogEndOffset()

	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	var bad atomic.Value
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				lso := f.LastStableOffset()
				if lso < f.Log.LogStartOffset() || lso > open {
					bad.Store(lso)
				}
				_ = f.ActiveProducers()
				reads.Add(1)
			}
		}()
	}
	const rounds = 200
	for i := range rounds {
		// Another producer's batch past the cut, then the cut: each
		// truncation rebuilds the producer state.
		replicate(t, f, batchSpec{pid: pid + 1 + int64(i), epoch: 0, seq: 0})
		if err := f.TruncateTo(cut); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d truncations, %d concurrent LSO reads", rounds, reads.Load())
	if v := bad.Load(); v != nil {
		t.Fatalf("an LSO read during truncation gave %d, want within [log start, %d]", v, open)
	}
	if lso := f.LastStableOffset(); lso != open {
		t.Fatalf("LSO after truncation = %d, want %d (the open transaction)", lso, open)
	}
	if got := f.ActiveProducers(); len(got) != 1 || got[0].ProducerID != pid {
		t.Fatalf("producers after truncation = %+v, want only %d", got, pid)
	}
	// A roll now snapshots the rebuilt state, not the one truncated away.
	replicate(t, f, batchSpec{pid: pid, epoch: 0, seq: 1, txn: true})
	end := f.Log.LogEndOffset()
	if err := f.Log.Roll(); err != nil {
		t.Fatal(err)
	}
	snap := snapshotAt(t, f.Log, end)
	if e := snap[pid]; len(snap) != 1 || e.lastSeq() != 1 || e.currentTxnFirstOffset != open {
		t.Fatalf("snapshot at roll after truncation = %+v, want only producer %d at sequence 1, transaction from %d", snap, pid, open)
	}
}
