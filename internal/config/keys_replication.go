package config

import (
	"math"
	"strconv"
	"strings"
)

// replicationQuotaBrokerKeys are the broker keys of replication throttling
// (KIP-73): how fast a leader sends, and a follower fetches, the partitions a
// topic's leader.replication.throttled.replicas and
// follower.replication.throttled.replicas name while their replica catches
// up. kafka-reassign-partitions --throttle sets the rates on the brokers of
// a move and --verify removes them.
var replicationQuotaBrokerKeys = []Key{
	{Name: "leader.replication.throttled.rate", Type: typeLong, Default: longMax, Check: atLeast(0), Dynamic: true,
		Doc: "A long representing the upper bound (bytes/sec) on outbound replication traffic for leader replicas enumerated in the property leader.replication.throttled.replicas (for each topic)."},
	{Name: "follower.replication.throttled.rate", Type: typeLong, Default: longMax, Check: atLeast(0), Dynamic: true,
		Doc: "A long representing the upper bound (bytes/sec) on inbound replication traffic for follower replicas enumerated in the property follower.replication.throttled.replicas (for each topic)."},
	{Name: "replication.quota.window.num", Type: typeInt, Default: "11", Check: atLeast(1),
		Doc: "The number of samples to retain in memory for replication quotas."},
	{Name: "replication.quota.window.size.seconds", Type: typeInt, Default: "1", Check: atLeast(1),
		Doc: "The time span of each sample for replication quotas."},
}

// longKey is the effective value of a LONG key, its default if unparseable.
func (b *Broker) longKey(name string, fallback int64) int64 {
	v, ok := b.Get(name)
	if !ok {
		return fallback
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fallback
	}
	return n
}

// LeaderReplicationThrottledRate is leader.replication.throttled.rate.
func (b *Broker) LeaderReplicationThrottledRate() int64 {
	return b.longKey("leader.replication.throttled.rate", math.MaxInt64)
}

// FollowerReplicationThrottledRate is follower.replication.throttled.rate.
func (b *Broker) FollowerReplicationThrottledRate() int64 {
	return b.longKey("follower.replication.throttled.rate", math.MaxInt64)
}

// ReplicationQuotaWindowNum is replication.quota.window.num.
func (b *Broker) ReplicationQuotaWindowNum() int { return b.intKey("replication.quota.window.num", 11) }

// ReplicationQuotaWindowSizeSeconds is replication.quota.window.size.seconds.
func (b *Broker) ReplicationQuotaWindowSizeSeconds() int {
	return b.intKey("replication.quota.window.size.seconds", 1)
}

// LeaderThrottled reports whether the topic's
// leader.replication.throttled.replicas names partition on broker (the
// leader's side of its replication), as Kafka's QuotaConfigHandler reads it:
// "*" names every replica, else partitionId:brokerId pairs.
func (t *TopicConfig) LeaderThrottled(partition, broker int32) bool {
	return throttledReplicaListed(t.LeaderReplicationThrottledReplicas, partition, broker)
}

// FollowerThrottled is LeaderThrottled for
// follower.replication.throttled.replicas (the catching-up replica's side).
func (t *TopicConfig) FollowerThrottled(partition, broker int32) bool {
	return throttledReplicaListed(t.FollowerReplicationThrottledReplicas, partition, broker)
}

func throttledReplicaListed(list []string, partition, broker int32) bool {
	for _, entry := range list {
		entry = strings.TrimSpace(entry)
		if entry == "*" {
			return true
		}
		p, b, ok := strings.Cut(entry, ":")
		if !ok {
			continue
		}
		pn, err1 := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		bn, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if err1 == nil && err2 == nil && int32(pn) == partition && int32(bn) == broker {
			return true
		}
	}
	return false
}
