package controller

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// PartitionRef names one partition.
type PartitionRef struct {
	Topic     string
	Partition int32
}

// ElectLeaders runs leader elections (ElectLeaders): preferred elections make
// each partition's first replica its leader when that replica is unfenced
// and in the ISR; unclean elections give a leaderless partition its first
// unfenced replica even outside the ISR, accepting the loss of records it
// lacks. A nil targets list means every partition. It returns each
// partition's Kafka error code (0, ELECTION_NOT_NEEDED,
// PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
// UNKNOWN_TOPIC_OR_PARTITION).
//
// ctx carries the request's deadline (deadline.go); past it the error
// satisfies IsTimeout.
func (c *Controller) ElectLeaders(ctx context.Context, unclean bool, targets []PartitionRef) (map[PartitionRef]int16, error) {
	if err := c.beginTimed(ctx); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	img := c.image.Load()
	if targets == nil {
		for _, name := range img.TopicNames() {
			for _, p := range img.Topic(name).Partitions {
				if p != nil {
					targets = append(targets, PartitionRef{name, p.Partition})
				}
			}
		}
	}
	live := func(id int32) bool {
		b := img.Broker(id)
		return b != nil && !b.Fenced
	}
	results := map[PartitionRef]int16{}
	var recs []metadata.Record
	for _, ref := range targets {
		t := img.Topic(ref.Topic)
		if t == nil || ref.Partition < 0 || int(ref.Partition) >= len(t.Partitions) || t.Partitions[ref.Partition] == nil {
			results[ref] = kerr.UnknownTopicOrPartition.Code
			continue
		}
		p := t.Partitions[ref.Partition]
		var leader int32 = -1
		switch {
		case !unclean && p.Leader == p.Replicas[0]:
			results[ref] = kerr.ElectionNotNeeded.Code
			continue
		case !unclean:
			if preferred := p.Replicas[0]; live(preferred) && slices.Contains(p.ISR, preferred) {
				leader = preferred
			} else {
				results[ref] = kerr.PreferredLeaderNotAvailable.Code
				continue
			}
		case p.Leader >= 0:
			results[ref] = kerr.ElectionNotNeeded.Code
			continue
		default:
			for _, r := range p.Replicas {
				if live(r) {
					leader = r
					break
				}
			}
			if leader < 0 {
				results[ref] = kerr.EligibleLeadersNotAvailable.Code
				continue
			}
		}
		change := &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: p.Partition, Leader: &leader}
		if !slices.Contains(p.ISR, leader) {
			change.ISR = []int32{leader}
			// An unclean leader may be the last replica a reassignment
			// was waiting for.
			next := partitionState{replicas: p.Replicas, isr: change.ISR, adding: p.AddingReplicas, removing: p.RemovingReplicas, leader: leader}
			if next.maybeComplete(img) {
				change = next.record(t.ID, p)
			}
		}
		recs = append(recs, change)
		results[ref] = 0
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		return nil, err
	}
	return results, nil
}
