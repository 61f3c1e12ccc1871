package api

// Fetches from followers (replica id >= 0; ReplicaID before v15, the
// ReplicaState tag from v15): each one reports the follower's log end
// offset (its fetch offset) to the leader's replica state, which may move
// the high watermark and grow the ISR; a follower reads up to the log end
// offset rather than the high watermark.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/partition"
)

// fetchReplicaID is the id of the replica sending req, -1 for consumers.
func fetchReplicaID(version int16, req *kmsg.FetchRequest) int32 {
	if version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// followerFetch records replica's fetch at fetchOffset and returns the read
// bound (the log end) and the high watermark to send back.
func followerFetch(p *partition.Partition, replica int32, fetchOffset int64) (upper, highWatermark, lastStable int64) {
	p.UpdateFollowerFetch(replica, fetchOffset)
	return p.Log.LogEndOffset(), p.HighWatermark(), p.LastStableOffset()
}
