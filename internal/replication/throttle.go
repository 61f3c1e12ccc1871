package replication

// Replication throttling on the follower (KIP-73, Kafka's
// ReplicaFetcherThread.shouldFollowerThrottle): a partition this broker
// follows but is not yet in the ISR of, which its topic's
// follower.replication.throttled.replicas names on this broker, is left out
// of the fetch while the bytes fetched for such partitions exceed
// follower.replication.throttled.rate; when every partition is left out the
// fetcher waits until the quota allows them again (at most
// replica.fetch.backoff.ms). Followers in the ISR are never throttled.

import (
	"slices"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
)

// throttledPartitions returns the partitions of tps the follower throttle
// applies to; nil when there is no throttle.
func (f *fetcher) throttledPartitions(tps []log.TopicPartition, states map[log.TopicPartition]*fetchState) map[log.TopicPartition]bool {
	if f.m.cfg.FollowerQuota == nil || f.m.cfg.FollowerThrottledRate == nil {
		return nil
	}
	var out map[log.TopicPartition]bool
	img := f.m.image()
	for _, tp := range tps {
		cfg := states[tp].p.Config()
		if cfg == nil || len(cfg.FollowerReplicationThrottledReplicas) == 0 || !cfg.FollowerThrottled(tp.Partition, f.m.cfg.NodeID) {
			continue
		}
		if t := img.Topic(tp.Topic); t != nil && int(tp.Partition) < len(t.Partitions) && t.Partitions[tp.Partition] != nil &&
			slices.Contains(t.Partitions[tp.Partition].ISR, f.m.cfg.NodeID) {
			continue
		}
		if out == nil {
			out = map[log.TopicPartition]bool{}
		}
		out[tp] = true
	}
	return out
}

// followerHeld reports whether throttled partitions are held back now.
func (f *fetcher) followerHeld() bool {
	return f.m.cfg.FollowerQuota.Exceeded(f.m.cfg.FollowerThrottledRate(), time.Now().UnixMilli())
}

// throttleWait is how long a fetcher whose partitions are all held back
// waits: until the follower quota is within its bound again, between 10 ms
// and replica.fetch.backoff.ms (Kafka always waits the backoff, which makes
// the rate fall below the bound).
func (f *fetcher) throttleWait() time.Duration {
	waitMs := f.m.cfg.FollowerQuota.WaitMs(f.m.cfg.FollowerThrottledRate(), time.Now().UnixMilli())
	return min(max(time.Duration(waitMs)*time.Millisecond, 10*time.Millisecond), f.backoff())
}
