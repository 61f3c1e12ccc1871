package api

// Fetches from followers (replica id >= 0; ReplicaID before v15, the
// ReplicaState tag from v15): each one reports the follower's log end
// offset (its fetch offset) to the leader's replica state, which may move
// the high watermark and grow the ISR; a follower reads up to the log end
// offset rather than the high watermark.
//
// Truncation on fetch (KIP-320, v12+): a follower's last_fetched_epoch is
// checked against this leader's epoch history first (Kafka's
// Partition.fetchRecords). When the follower's log diverged, the partition
// answers DivergingEpoch (the leader's epoch and its end offset) with no
// records and the request is answered at once; the fetch offset is then not
// the follower's log end offset as this leader sees it, so it is not
// recorded. An epoch whose end this leader cannot determine, or a fetch
// offset below the log start, answers OFFSET_OUT_OF_RANGE; the follower
// falls back to OffsetForLeaderEpoch.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
)

// fetchReplicaID is the id of the replica sending req, -1 for consumers.
func fetchReplicaID(version int16, req *kmsg.FetchRequest) int32 {
	if version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// followerFetch checks replica's fetch of t and records it, setting the
// high watermark and last stable offset to send back in res. It returns the
// read bound (the log end), or answerNow when res is complete without
// records: a diverging epoch or an error.
func followerFetch(p *partition.Partition, replica int32, t fetchTarget, res *fetchPartitionResult) (upper int64, answerNow bool) {
	if t.lastFetchedEpoch >= 0 {
		diverging, diverged, err := p.CheckLastFetchedEpoch(t.lastFetchedEpoch, t.offset)
		switch {
		case errors.Is(err, log.ErrOffsetOutOfRange):
			res.errorCode = kerr.OffsetOutOfRange.Code
			return 0, true
		case err != nil:
			res.errorCode = kerr.UnknownServerError.Code
			return 0, true
		case diverged:
			res.divergingEpoch = &diverging
			return 0, true
		}
	}
	p.UpdateFollowerFetch(replica, t.offset)
	res.highWatermark, res.lastStable = p.HighWatermark(), p.LastStableOffset()
	return p.Log.LogEndOffset(), false
}
