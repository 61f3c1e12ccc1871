package controller

import (
	"context"
	"slices"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Automatic leader rebalancing (auto.leader.rebalance.enable), decided by
// the active controller every leader.imbalance.check.interval.seconds: a
// broker's leader imbalance is the share of the partitions whose preferred
// (first) replica it is but which another broker, or none, leads. When that
// share exceeds leader.imbalance.per.broker.percentage, each of those
// partitions whose preferred replica is unfenced and in the ISR gets it back
// as leader, as a preferred ElectLeaders would. The node's timer only calls
// BalanceLeaders; the rule reads nothing but the image and its arguments.

// maxElectionsPerRebalance bounds the leader changes one rebalance commits,
// as Kafka's controller does (1000 per run); the rest move in the next run.
const maxElectionsPerRebalance = 1000

// LeaderImbalance is one broker's preferred-leader count: Preferred
// partitions have it as their first replica, NotLeading of them are led by
// another broker or have no leader.
type LeaderImbalance struct {
	Broker     int32
	Preferred  int
	NotLeading int
}

// Exceeds reports whether the broker's imbalance ratio is above percentage
// percent, Kafka's comparison (strictly greater).
func (l LeaderImbalance) Exceeds(percentage int32) bool {
	return l.Preferred > 0 && int64(l.NotLeading)*100 > int64(percentage)*int64(l.Preferred)
}

// LeaderImbalances returns each broker's leader imbalance in img, by broker
// id, for every broker that is the preferred replica of some partition.
func LeaderImbalances(img *metadata.Image) []LeaderImbalance {
	byBroker := map[int32]*LeaderImbalance{}
	for _, name := range img.TopicNames() {
		for _, p := range img.Topic(name).Partitions {
			if p == nil || len(p.Replicas) == 0 {
				continue
			}
			preferred := p.Replicas[0]
			l := byBroker[preferred]
			if l == nil {
				l = &LeaderImbalance{Broker: preferred}
				byBroker[preferred] = l
			}
			l.Preferred++
			if p.Leader != preferred {
				l.NotLeading++
			}
		}
	}
	out := make([]LeaderImbalance, 0, len(byBroker))
	for _, l := range byBroker {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b LeaderImbalance) int { return int(a.Broker) - int(b.Broker) })
	return out
}

// rebalanceRecords returns the leader changes that give back leadership to
// the preferred replicas of every broker whose imbalance exceeds
// percentage, for the partitions where that replica is unfenced and in the
// ISR, and the partitions they move, in topic and partition order, at most
// maxElectionsPerRebalance of them.
func rebalanceRecords(img *metadata.Image, percentage int32) ([]metadata.Record, []PartitionRef) {
	over := map[int32]bool{}
	for _, l := range LeaderImbalances(img) {
		if l.Exceeds(percentage) {
			over[l.Broker] = true
		}
	}
	if len(over) == 0 {
		return nil, nil
	}
	var recs []metadata.Record
	var moved []PartitionRef
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		for _, p := range t.Partitions {
			if p == nil || len(p.Replicas) == 0 {
				continue
			}
			preferred := p.Replicas[0]
			if p.Leader == preferred || !over[preferred] || !slices.Contains(p.ISR, preferred) {
				continue
			}
			if b := img.Broker(preferred); b == nil || b.Fenced {
				continue
			}
			if len(moved) == maxElectionsPerRebalance {
				return recs, moved
			}
			leader := preferred
			recs = append(recs, &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: p.Partition, Leader: &leader})
			moved = append(moved, PartitionRef{Topic: name, Partition: p.Partition})
		}
	}
	return recs, moved
}

// BalanceLeaders runs one automatic leader rebalance with
// leader.imbalance.per.broker.percentage = percentage and returns the
// partitions whose leadership moved back to their preferred replica. Only
// the active controller can run it (ErrNotActive otherwise).
func (c *Controller) BalanceLeaders(percentage int32) ([]PartitionRef, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return nil, err
	}
	recs, moved := rebalanceRecords(c.image.Load(), percentage)
	if err := c.commitLocked(context.Background(), recs); err != nil {
		return nil, err
	}
	return moved, nil
}
