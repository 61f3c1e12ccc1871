package api

// Replication throttling on the leader (KIP-73, Kafka's
// ReplicaManager.shouldLeaderThrottle).
//
// Behavior:
//   - A partition of a follower's fetch is throttled when the follower is
//     not in the partition's ISR and the topic's
//     leader.replication.throttled.replicas names the partition on this
//     broker (partitionId:brokerId, or *). Followers in the ISR are never
//     throttled, so a throttle slows only catching up and reassignment.
//   - While the bytes sent for throttled partitions, measured over
//     replication.quota.window.num windows of
//     replication.quota.window.size.seconds, exceed this broker's
//     leader.replication.throttled.rate, those partitions are answered with
//     no records (offsets and high watermark as usual); the fetch may park
//     as for any fetch with nothing to read, but no longer than until the
//     quota would let the partition go (Kafka parks it for max_wait_ms,
//     which makes the rate fall below the bound).
//   - The records sent for throttled partitions count against the quota
//     when the response goes out.

import (
	"github.com/samsa-streaming/samsa/internal/partition"
)

// leaderThrottle reports whether t, read by the follower op.replicaID, is a
// throttled partition, and whether it is held back now.
func (op *fetchOp) leaderThrottle(p *partition.Partition, t fetchTarget) (throttled, held bool) {
	q := op.b.LeaderReplicationQuota
	if q == nil {
		return false, false
	}
	cfg := p.Config()
	if cfg == nil || len(cfg.LeaderReplicationThrottledReplicas) == 0 || !cfg.LeaderThrottled(t.partition, op.b.NodeID) {
		return false, false
	}
	if p.InISR(op.replicaID) {
		return false, false
	}
	bound, nowMs := op.b.Config().LeaderReplicationThrottledRate(), op.b.Now().UnixMilli()
	if !q.Exceeded(bound, nowMs) {
		return true, false
	}
	op.throttleWaitMs.Store(max(q.WaitMs(bound, nowMs), 1))
	return true, true
}

// recordReplicationThrottle counts the bytes of throttled partitions sent.
func (op *fetchOp) recordReplicationThrottle(results []fetchPartitionResult) {
	q := op.b.LeaderReplicationQuota
	if q == nil || op.replicaID < 0 {
		return
	}
	var bytes int64
	for i := range results {
		if results[i].replicationThrottled {
			bytes += results[i].bytes
		}
	}
	q.Record(bytes, op.b.Now().UnixMilli())
}
