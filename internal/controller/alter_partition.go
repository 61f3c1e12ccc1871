package controller

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// AlterPartitionRequest is a leader's proposed ISR for one partition
// (KIP-497).
type AlterPartitionRequest struct {
	Broker         int32
	TopicID        metadata.UUID
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []int32
}

// AlterPartitionResult is the partition's state after the request, or the
// error refusing it.
type AlterPartitionResult struct {
	Err            *kerr.Error
	Leader         int32
	LeaderEpoch    int32
	ISR            []int32
	PartitionEpoch int32
}

// AlterPartition checks a leader's ISR change as Kafka's controller does
// and commits it as a PartitionChangeRecord:
//   - an unknown topic or partition answers UNKNOWN_TOPIC_OR_PARTITION
//     (UNKNOWN_TOPIC_ID by id);
//   - a request from a broker that is not the leader, or with an older
//     leader epoch, answers FENCED_LEADER_EPOCH (NOT_LEADER_OR_FOLLOWER
//     for a newer one);
//   - a partition epoch other than the current answers
//     INVALID_UPDATE_VERSION, so a leader never applies a change based on a
//     stale ISR;
//   - an ISR without the leader, with a non-replica or with a fenced broker
//     answers INELIGIBLE_REPLICA (INVALID_REQUEST for an empty one);
//   - the ISR already as asked answers success without a record;
//   - an ISR that completes a reassignment commits its completion too
//     (reassign.go), answering NEW_LEADER_ELECTED if it moved leadership
//     away from the asking leader.
//
// Go errors are failures to commit (ErrNotActive on a follower).
func (c *Controller) AlterPartition(reqs []AlterPartitionRequest) ([]AlterPartitionResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return nil, err
	}
	img := c.image.Load()
	results := make([]AlterPartitionResult, len(reqs))
	var recs []metadata.Record
	var changed []int
	for i, r := range reqs {
		t := img.TopicByID(r.TopicID)
		if t == nil || r.Partition < 0 || int(r.Partition) >= len(t.Partitions) || t.Partitions[r.Partition] == nil {
			results[i].Err = kerr.UnknownTopicOrPartition
			continue
		}
		p := t.Partitions[r.Partition]
		res := &results[i]
		res.Leader, res.LeaderEpoch, res.ISR, res.PartitionEpoch = p.Leader, p.LeaderEpoch, p.ISR, p.PartitionEpoch
		if code := checkAlterPartition(img, p, r); code != nil {
			res.Err = code
			continue
		}
		if slices.Equal(p.ISR, r.NewISR) {
			continue
		}
		rec := &metadata.PartitionChangeRecord{TopicID: r.TopicID, Partition: r.Partition, ISR: slices.Clone(r.NewISR)}
		// An ISR that holds every replica a reassignment is adding
		// completes it in the same record (reassign.go).
		next := partitionState{replicas: p.Replicas, isr: rec.ISR, adding: p.AddingReplicas, removing: p.RemovingReplicas, leader: p.Leader}
		if next.maybeComplete(img) {
			rec = next.record(r.TopicID, p)
			if next.leader != p.Leader {
				// The leader asking was removed: the change is made, and
				// the leader learns it leads no more (Kafka answers
				// NEW_LEADER_ELECTED, or FENCED_LEADER_EPOCH before v2).
				res.Err = kerr.NewLeaderElected
			}
		}
		recs = append(recs, rec)
		changed = append(changed, i)
	}
	if err := c.commitLocked(context.Background(), recs); err != nil {
		return nil, err
	}
	after := c.image.Load()
	for _, i := range changed {
		p := after.TopicByID(reqs[i].TopicID).Partitions[reqs[i].Partition]
		checkReplicaInvariants(p)
		res := &results[i]
		res.Leader, res.LeaderEpoch, res.ISR, res.PartitionEpoch = p.Leader, p.LeaderEpoch, p.ISR, p.PartitionEpoch
	}
	return results, nil
}

func checkAlterPartition(img *metadata.Image, p *metadata.Partition, r AlterPartitionRequest) *kerr.Error {
	switch {
	case p.Leader != r.Broker || r.LeaderEpoch < p.LeaderEpoch:
		return kerr.FencedLeaderEpoch
	case r.LeaderEpoch > p.LeaderEpoch:
		return kerr.NotLeaderForPartition
	case r.PartitionEpoch != p.PartitionEpoch:
		return kerr.InvalidUpdateVersion
	case len(r.NewISR) == 0:
		return kerr.InvalidRequest
	case !slices.Contains(r.NewISR, p.Leader):
		return kerr.IneligibleReplica
	}
	for _, id := range r.NewISR {
		if !slices.Contains(p.Replicas, id) {
			return kerr.IneligibleReplica
		}
		if slices.Contains(p.ISR, id) {
			continue
		}
		// A broker joining must be live (KIP-841).
		if b := img.Broker(id); b == nil || b.Fenced {
			return kerr.IneligibleReplica
		}
	}
	return nil
}
