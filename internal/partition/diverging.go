package partition

// Truncation on fetch (KIP-320). A follower's fetch (v12+) names the epoch
// of the last batch it holds, last_fetched_epoch. The leader looks up where
// that epoch ends in its own history; when its largest epoch at or below it
// is older, or ends before the fetch offset, the follower's tail diverged.
// The leader then answers with that epoch and end offset (DivergingEpoch)
// and no records, and the follower truncates and fetches again, with no
// OffsetForLeaderEpoch round trip in between.

import (
	"fmt"

	"github.com/samsa-streaming/samsa/internal/log"
)

// EpochEndOffset is where a leader epoch ends in a log: the start offset of
// the next epoch, or the log end offset for the latest one.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// CheckLastFetchedEpoch validates a follower's fetch at fetchOffset whose
// last fetched batch has lastFetchedEpoch against this leader's epoch
// history. It returns the diverging epoch and true when the follower's log
// diverged (the follower must truncate), false when fetching can go on. An
// epoch whose end is unknown here (newer than every epoch this log knows)
// and a fetch offset below the log start are log.ErrOffsetOutOfRange, as in
// Kafka, whatever the epochs say.
func (p *Partition) CheckLastFetchedEpoch(lastFetchedEpoch int32, fetchOffset int64) (EpochEndOffset, bool, error) {
	epoch, end := p.Log.EndOffsetForEpoch(lastFetchedEpoch)
	if epoch == log.UndefinedEpoch || end == log.UndefinedEpochOffset {
		return EpochEndOffset{}, false, fmt.Errorf("%w: end offset of last fetched epoch %d unknown", log.ErrOffsetOutOfRange, lastFetchedEpoch)
	}
	if start := p.Log.LogStartOffset(); fetchOffset < start {
		return EpochEndOffset{}, false, fmt.Errorf("%w: fetch offset %d below log start %d", log.ErrOffsetOutOfRange, fetchOffset, start)
	}
	if epoch < lastFetchedEpoch || end < fetchOffset {
		return EpochEndOffset{Epoch: epoch, EndOffset: end}, true, nil
	}
	return EpochEndOffset{}, false, nil
}
