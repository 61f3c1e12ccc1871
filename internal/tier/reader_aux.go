package tier

import (
	"context"
	"fmt"
)

// AuxState is what a follower rebuilding its state needs of the remote
// segment ending just before the leader's local log start.
type AuxState struct {
	LeaderEpochs     []EpochEntry
	ProducerSnapshot []byte // nil when the segment has none
}

// AuxStateBefore reads the leader-epoch checkpoint and producer snapshot
// of the remote segment ending at localLogStartOffset-1, from a fresh
// listing of the bucket, Kafka's buildRemoteLogAuxState. The segment must
// end exactly there: local segments are copied whole, so the leader's
// local start is a remote segment boundary.
func (r *Reader) AuxStateBefore(ctx context.Context, p Partition, localLogStartOffset int64) (AuxState, error) {
	r.ForgetView(p)
	view, err := r.View(ctx, p)
	if err != nil {
		return AuxState{}, err
	}
	seg, ok := view.Find(localLogStartOffset - 1)
	if !ok || seg.EndOffset != localLogStartOffset-1 {
		return AuxState{}, fmt.Errorf("%w: no remote segment ends at %d, before the leader's local log start", ErrRemoteOffsetOutOfRange, localLogStartOffset-1)
	}
	raw, err := r.cfg.Store.ReadFile(ctx, &seg, FileLeaderEpochCheckpoint)
	if err != nil {
		return AuxState{}, fmt.Errorf("tier: leader-epoch checkpoint of %s: %w", r.cfg.Store.SegmentDir(&seg), err)
	}
	r.fetched(int64(len(raw)))
	var aux AuxState
	if aux.LeaderEpochs, err = DecodeEpochCheckpoint(raw); err != nil {
		return AuxState{}, err
	}
	if hasFile(&seg, FileProducerSnapshot) {
		if aux.ProducerSnapshot, err = r.cfg.Store.ReadFile(ctx, &seg, FileProducerSnapshot); err != nil {
			return AuxState{}, fmt.Errorf("tier: producer snapshot of %s: %w", r.cfg.Store.SegmentDir(&seg), err)
		}
		r.fetched(int64(len(aux.ProducerSnapshot)))
	}
	return aux, nil
}
