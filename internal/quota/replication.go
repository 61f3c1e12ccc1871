package quota

import (
	"math"
	"sync"
)

// ReplicationQuota is one side of Kafka's replication throttle
// (ReplicationQuotaManager): the bytes a leader sends to followers that are
// catching up, or a follower fetches while catching up, on the partitions
// named in a topic's leader.replication.throttled.replicas or
// follower.replication.throttled.replicas, measured as one Rate against the
// broker's leader.replication.throttled.rate or
// follower.replication.throttled.rate (replication.quota.window.num windows
// of replication.quota.window.size.seconds). While the rate is above the
// bound, throttled partitions are left out: the leader answers them with no
// records, the follower does not ask for them. Replicas in the ISR are never
// throttled. The bound is read at each check, so a dynamic change of the
// broker config applies at once.
//
// It is safe for concurrent use: the leader side is shared by the request
// handlers.
type ReplicationQuota struct {
	windows Windows
	mu      struct {
		sync.Mutex
		rate Rate
	}
}

// NewReplicationQuota returns a quota measured over w.
func NewReplicationQuota(w Windows) *ReplicationQuota {
	return &ReplicationQuota{windows: w.valid()}
}

// Unbounded reports whether boundBytesPerSec leaves replication unthrottled
// (Kafka's default, Long.MAX_VALUE).
func Unbounded(boundBytesPerSec int64) bool {
	return boundBytesPerSec <= 0 || boundBytesPerSec == math.MaxInt64
}

// Exceeded reports whether the throttled bytes measured at nowMs exceed
// boundBytesPerSec.
func (q *ReplicationQuota) Exceeded(boundBytesPerSec int64, nowMs int64) bool {
	if Unbounded(boundBytesPerSec) {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.rate.PerSecond(q.windows, nowMs) > float64(boundBytesPerSec)
}

// WaitMs is how long, with no more throttled bytes, until the rate measured
// at nowMs falls back to boundBytesPerSec (Kafka's QuotaUtils.throttleTime);
// 0 when it is within the bound.
func (q *ReplicationQuota) WaitMs(boundBytesPerSec int64, nowMs int64) int64 {
	if Unbounded(boundBytesPerSec) {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	rate := q.mu.rate.PerSecond(q.windows, nowMs)
	return q.mu.rate.throttleMs(q.windows, rate, float64(boundBytesPerSec), nowMs)
}

// Record counts bytes of throttled partitions sent or fetched at nowMs.
func (q *ReplicationQuota) Record(bytes int64, nowMs int64) {
	if bytes <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.mu.rate.Record(q.windows, float64(bytes), nowMs)
}

// PerSecond is the measured rate of throttled bytes at nowMs.
func (q *ReplicationQuota) PerSecond(nowMs int64) float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.rate.PerSecond(q.windows, nowMs)
}
