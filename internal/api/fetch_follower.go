package api

// Fetching from the closest replica (KIP-392), on both sides.
//
// Behavior:
//   - With replica.selector.class set to Kafka's RackAwareReplicaSelector, a
//     leader answering a consumer fetch (replica id -1) of v11+ that names a
//     rack (client.rack) chooses a read replica per partition, as Kafka's
//     selector does: the leader when its broker is in the client's rack,
//     else the most caught-up candidate in that rack (highest log end
//     offset, then the one caught up most recently), else the leader.
//   - Candidates are the followers in the committed ISR whose log, as their
//     last fetch reported it, holds the fetch offset, on brokers the client
//     can see in Metadata (registered with an endpoint, not fenced). A
//     follower that falls out of the ISR is offered to no new consumer; a
//     consumer already reading from it keeps doing so until it asks the
//     leader again (Java: metadata.max.age.ms; franz-go:
//     RecheckPreferredReplicaInterval) or the follower answers an error.
//   - When a follower is chosen the partition answers with no records, the
//     leader's offsets and PreferredReadReplica, and the fetch is answered at
//     once rather than parked; an incremental fetch session always includes
//     such a partition.
//   - A follower serves consumer fetches of v11+ for the partitions it
//     follows, up to its own high watermark (read_committed: its last stable
//     offset), which it learns from the leader's fetch responses. An offset
//     outside its log answers OFFSET_OUT_OF_RANGE, a leader epoch other
//     than the one it follows FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH;
//     fetch sessions and long polls work as on the leader, woken when the
//     follower's high watermark moves. Older versions, and replica fetches,
//     get NOT_LEADER_OR_FOLLOWER from a follower, as in Kafka. ListOffsets
//     is answered by leaders only.
//   - Observable: samsa_fetch_follower_requests_total counts fetches a
//     follower served, samsa_fetch_preferred_read_replica_total the
//     partitions a leader redirected; both log a line at debug level.

import (
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
)

// mayReadFollower reports whether the fetch may be served by a follower:
// a consumer's (Kafka's fetchOnlyFromLeader is false) from v11 on, the
// versions that carry the client's rack.
func (op *fetchOp) mayReadFollower() bool { return op.replicaID < 0 && op.c.version >= 11 }

// partitionFor returns the partition t reads: the one led here, else, for a
// fetch that may read from a follower, the one followed here.
func (op *fetchOp) partitionFor(t fetchTarget) (p *partition.Partition, follower bool) {
	if p := op.b.Partitions.Get(t.topic, t.partition); p != nil {
		return p, false
	}
	if op.mayReadFollower() {
		if p := op.b.Partitions.GetFollower(t.topic, t.partition); p != nil {
			return p, true
		}
	}
	return nil, false
}

// preferredReadReplica returns the follower a consumer should read t from
// instead of this leader, if the replica selector picks one.
func (op *fetchOp) preferredReadReplica(p *partition.Partition, t fetchTarget) (int32, bool) {
	if !op.mayReadFollower() || op.req.Rack == "" || op.b.Config().ReplicaSelectorClass != config.RackAwareReplicaSelector {
		return -1, false
	}
	followers, leading := p.ReadReplicaCandidates(t.offset)
	if !leading || len(followers) == 0 {
		return -1, false
	}
	img := op.b.Image()
	leader := readReplicaView{id: op.b.NodeID, rack: brokerRack(img, op.b.NodeID)}
	views := make([]readReplicaView, 0, len(followers))
	for _, f := range followers {
		if b := img.Broker(f.ID); b == nil || b.Fenced || len(b.Endpoints) == 0 {
			continue
		}
		views = append(views, readReplicaView{id: f.ID, rack: brokerRack(img, f.ID), logEndOffset: f.LogEndOffset, timeSinceCaughtUpMs: f.TimeSinceCaughtUpMs})
	}
	id := selectRackAwareReplica(op.req.Rack, leader, views)
	if id == leader.id {
		return -1, false
	}
	if op.b.Logger != nil {
		op.b.Logger.Debug("preferred read replica", "partition", p, "replica", id, "client.rack", op.req.Rack, "fetch.offset", t.offset)
	}
	return id, true
}

func brokerRack(img *metadata.Image, id int32) string {
	if b := img.Broker(id); b != nil && b.Rack != nil {
		return *b.Rack
	}
	return ""
}

// readReplicaView is one replica a read-replica choice weighs.
type readReplicaView struct {
	id                  int32
	rack                string // "" when the broker has none
	logEndOffset        int64
	timeSinceCaughtUpMs int64
}

// selectRackAwareReplica is Kafka's RackAwareReplicaSelector over the leader
// and the candidate followers: without a client rack, or with no replica in
// it, the leader; the leader when it is in the client's rack; else the
// replica in that rack with the highest log end offset, then the smallest
// time since it was caught up, then (so the choice is deterministic) the
// lowest id. Racks compare exactly, as in Kafka.
func selectRackAwareReplica(clientRack string, leader readReplicaView, followers []readReplicaView) int32 {
	if clientRack == "" || leader.rack == clientRack {
		return leader.id
	}
	best := -1
	for i, f := range followers {
		if f.rack != clientRack {
			continue
		}
		if best < 0 || moreCaughtUp(f, followers[best]) {
			best = i
		}
	}
	if best < 0 {
		return leader.id
	}
	return followers[best].id
}

func moreCaughtUp(a, b readReplicaView) bool {
	switch {
	case a.logEndOffset != b.logEndOffset:
		return a.logEndOffset > b.logEndOffset
	case a.timeSinceCaughtUpMs != b.timeSinceCaughtUpMs:
		return a.timeSinceCaughtUpMs < b.timeSinceCaughtUpMs
	}
	return a.id < b.id
}

// observeReplicaReads counts, once per response, the partitions read from a
// follower here and those redirected to a preferred read replica.
func (op *fetchOp) observeReplicaReads(results []fetchPartitionResult) {
	var fromFollower, redirected int
	for i := range results {
		if results[i].fromFollower {
			fromFollower++
		}
		if results[i].hasPreferredReadReplica {
			redirected++
		}
	}
	if fromFollower > 0 {
		op.b.Metrics.FollowerFetch()
		if op.b.Logger != nil {
			op.b.Logger.Debug("fetch served as follower", "partitions", fromFollower, "client.rack", op.req.Rack)
		}
	}
	op.b.Metrics.PreferredReadReplicas(redirected)
}
