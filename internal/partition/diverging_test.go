package partition

import (
	"errors"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
)

// TestCheckLastFetchedEpoch checks a leader's answer to a follower's
// last_fetched_epoch (KIP-320) against a history of epoch 1 at offsets 0-2
// and epoch 3 from offset 3 to the log end at 5.
func TestCheckLastFetchedEpoch(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	lead := func(epoch int32) {
		if err := p.UpdateReplicaState(LeaderState{NodeID: 1, Leader: 1, LeaderEpoch: epoch, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	lead(1)
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 3})
	lead(3)
	mustAppendSpec(t, p, batchSpec{noPID: true, n: 2})
	if got := p.Log.EpochCache().Entries(); len(got) != 2 || got[0] != (log.EpochEntry{Epoch: 1, StartOffset: 0}) || got[1] != (log.EpochEntry{Epoch: 3, StartOffset: 3}) {
		t.Fatalf("epoch history %v", got)
	}
	cases := []struct {
		name             string
		lastFetchedEpoch int32
		fetchOffset      int64
		diverged         bool
		want             EpochEndOffset
		outOfRange       bool
	}{
		{name: "at the log end in the latest epoch", lastFetchedEpoch: 3, fetchOffset: 5},
		{name: "inside the latest epoch", lastFetchedEpoch: 3, fetchOffset: 4},
		{name: "at the end of an older epoch", lastFetchedEpoch: 1, fetchOffset: 3},
		{name: "past the end of an older epoch", lastFetchedEpoch: 1, fetchOffset: 4, diverged: true, want: EpochEndOffset{1, 3}},
		{name: "an epoch this leader never had", lastFetchedEpoch: 2, fetchOffset: 3, diverged: true, want: EpochEndOffset{1, 3}},
		{name: "an epoch before the history", lastFetchedEpoch: 0, fetchOffset: 0, diverged: false},
		{name: "an epoch before the history, past its end", lastFetchedEpoch: 0, fetchOffset: 2, diverged: true, want: EpochEndOffset{0, 0}},
		{name: "an epoch newer than the leader's", lastFetchedEpoch: 4, fetchOffset: 5, outOfRange: true},
	}
	for _, tc := range cases {
		got, diverged, err := p.CheckLastFetchedEpoch(tc.lastFetchedEpoch, tc.fetchOffset)
		switch {
		case tc.outOfRange && !errors.Is(err, log.ErrOffsetOutOfRange):
			t.Errorf("%s: err %v, want offset out of range", tc.name, err)
		case !tc.outOfRange && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case diverged != tc.diverged || got != tc.want:
			t.Errorf("%s: diverged %v at %+v, want %v at %+v", tc.name, diverged, got, tc.diverged, tc.want)
		}
	}
	// Below the log start the answer is OFFSET_OUT_OF_RANGE, even for
	// epochs that would diverge.
	p.Log.UpdateHighWatermark(5)
	if err := p.Log.DeleteRecordsBefore(2); err != nil {
		t.Fatal(err)
	}
	for _, epoch := range []int32{1, 2} {
		if _, _, err := p.CheckLastFetchedEpoch(epoch, 1); !errors.Is(err, log.ErrOffsetOutOfRange) {
			t.Errorf("epoch %d below the log start: %v", epoch, err)
		}
	}
}
