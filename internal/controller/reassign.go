package controller

// Partition reassignment (KIP-455), as Kafka's controller runs it:
//
//  1. AlterPartitionReassignments sets a partition's target replicas. The
//     replica set becomes the target followed by the current replicas not
//     in it, with addingReplicas (target minus current) and
//     removingReplicas (current minus target) recorded beside it. Brokers
//     reconcile from the image: an adding replica creates its log and
//     starts fetching from the leader.
//  2. The leader adds each caught-up replica to the ISR (AlterPartition).
//  3. The first ISR change that puts every adding replica in the ISR (and
//     leaves a member that is not being removed) completes the
//     reassignment in the same record: replicas = target, the ISR without
//     the removed replicas, and, if the leader is being removed, the first
//     target replica in that ISR as leader. Removed replicas stop and
//     delete their logs.
//
// A reassignment whose target is already in the ISR (a reordering, or a
// shrink) completes at once. Cancelling (null replicas) reverts to the
// replicas before it, minus the ones it was adding. Everything here is a
// decision over the image, with no clock or goroutine.
//
// Unlike Kafka, removing replicas does not bump the leader epoch when the
// leader stays: a removed replica stops fetching and deletes its log as
// soon as it applies the change, and the leader forgets it (package
// partition), so there is nothing to fence. A cancel that would leave no
// ISR is refused even where unclean.leader.election.enable would allow it.

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Reassignment is one partition's requested reassignment; nil Replicas
// cancels the one in progress.
type Reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

// ReassignmentResult is the outcome for one partition: nil Err is success.
type ReassignmentResult struct {
	Err     *kerr.Error
	Message string
}

// OngoingReassignment is a reassignment in progress, as
// ListPartitionReassignments reports it.
type OngoingReassignment struct {
	Topic            string
	Partition        int32
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// AlterPartitionReassignments starts, replaces or cancels reassignments.
// Each partition succeeds or fails on its own; the records of the
// successful ones commit together. allowReplicationFactorChange false
// (AlterPartitionReassignments v1, KIP-860) refuses a target whose size
// differs from the replica count the partition is headed for. Go errors are
// failures to commit (ErrNotActive on a follower), or the request's deadline
// in ctx passing (IsTimeout; deadline.go).
func (c *Controller) AlterPartitionReassignments(ctx context.Context, reqs []Reassignment, allowReplicationFactorChange bool) ([]ReassignmentResult, error) {
	if err := c.beginTimed(ctx); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	// work is the image with this request's earlier changes applied, so a
	// partition named twice is decided on its latest state.
	work := c.image.Load()
	results := make([]ReassignmentResult, len(reqs))
	var recs []metadata.Record
	for i, r := range reqs {
		rec, code, msg := planReassignment(work, r, allowReplicationFactorChange)
		if code != nil {
			results[i] = ReassignmentResult{Err: code, Message: msg}
			continue
		}
		if rec != nil {
			recs = append(recs, rec)
			work = work.Apply(work.Offset, []metadata.Record{rec})
			checkReplicaInvariants(work.Topic(r.Topic).Partitions[r.Partition])
		}
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		return nil, err
	}
	return results, nil
}

// planReassignment decides one partition's record (nil: nothing to change)
// or the Kafka error refusing it.
func planReassignment(img *metadata.Image, r Reassignment, allowReplicationFactorChange bool) (*metadata.PartitionChangeRecord, *kerr.Error, string) {
	t := img.Topic(r.Topic)
	if t == nil {
		return nil, kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find a topic named %s.", r.Topic)
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Partitions) || t.Partitions[r.Partition] == nil {
		return nil, kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find partition %s:%d.", r.Topic, r.Partition)
	}
	p := t.Partitions[r.Partition]
	if r.Replicas == nil {
		return planCancel(img, t, p)
	}
	if msg := checkTargetReplicas(img, r.Replicas); msg != "" {
		return nil, kerr.InvalidReplicaAssignment, msg
	}
	if current := len(p.TargetReplicas()); !allowReplicationFactorChange && current != len(r.Replicas) {
		return nil, kerr.InvalidReplicationFactor, fmt.Sprintf("The replication factor is changed from %d to %d", current, len(r.Replicas))
	}
	next := partitionState{replicas: slices.Clone(r.Replicas), isr: p.ISR, leader: p.Leader}
	for _, id := range p.Replicas {
		if !slices.Contains(r.Replicas, id) {
			next.removing = append(next.removing, id)
			next.replicas = append(next.replicas, id)
		}
	}
	for _, id := range r.Replicas {
		if !slices.Contains(p.Replicas, id) {
			next.adding = append(next.adding, id)
		}
	}
	next.maybeComplete(img)
	return next.record(t.ID, p), nil, ""
}

// checkTargetReplicas applies Kafka's rules for a manual assignment: not
// empty, no broker twice, every broker registered (fenced ones included: a
// fenced replica catches up once it is back). It returns the error message,
// "" when the target is valid.
func checkTargetReplicas(img *metadata.Image, target []int32) string {
	if len(target) == 0 {
		return "The manual partition assignment includes an empty replica list."
	}
	sorted := slices.Clone(target)
	slices.Sort(sorted)
	for i, id := range sorted {
		if img.Broker(id) == nil {
			return fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	return ""
}

// planCancel reverts the reassignment in progress: the replicas and ISR
// without the replicas it was adding, a new leader if the leader was one of
// them. A revert that leaves no ISR would need an unclean election and is
// refused.
func planCancel(img *metadata.Image, t *metadata.Topic, p *metadata.Partition) (*metadata.PartitionChangeRecord, *kerr.Error, string) {
	if !p.Reassigning() {
		return nil, kerr.NoReassignmentInProgress, kerr.NoReassignmentInProgress.Message
	}
	next := partitionState{
		replicas: without(p.Replicas, p.AddingReplicas),
		isr:      without(p.ISR, p.AddingReplicas),
		leader:   p.Leader,
	}
	if len(next.isr) == 0 {
		return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf(
			"Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", t.Name, p.Partition)
	}
	next.electLeader(img)
	return next.record(t.ID, p), nil, ""
}

// partitionState is a partition's replica state being decided.
type partitionState struct {
	replicas, isr, adding, removing []int32
	leader                          int32
}

// maybeComplete finishes the reassignment when the ISR allows it (Kafka's
// completeReassignmentIfNeeded): every adding replica in the ISR, and an
// ISR member that is not being removed. It reports whether it did.
func (s *partitionState) maybeComplete(img *metadata.Image) bool {
	if len(s.adding) == 0 && len(s.removing) == 0 {
		return false
	}
	isr := without(s.isr, s.removing)
	replicas := without(s.replicas, s.removing)
	if len(isr) == 0 || len(replicas) == 0 {
		return false
	}
	for _, id := range s.adding {
		if !slices.Contains(isr, id) {
			return false
		}
	}
	s.replicas, s.isr, s.adding, s.removing = replicas, isr, nil, nil
	s.electLeader(img)
	return true
}

// electLeader keeps a leader that is still in the ISR, or else picks the
// first replica that is in the ISR and unfenced (-1: none).
func (s *partitionState) electLeader(img *metadata.Image) {
	if slices.Contains(s.isr, s.leader) {
		return
	}
	s.leader = -1
	for _, id := range s.replicas {
		if b := img.Broker(id); b != nil && !b.Fenced && slices.Contains(s.isr, id) {
			s.leader = id
			return
		}
	}
}

// record is the PartitionChangeRecord taking p to s, nil if s is p's state.
func (s *partitionState) record(topicID metadata.UUID, p *metadata.Partition) *metadata.PartitionChangeRecord {
	rec := &metadata.PartitionChangeRecord{TopicID: topicID, Partition: p.Partition}
	changed := false
	if !slices.Equal(s.replicas, p.Replicas) || !slices.Equal(s.adding, p.AddingReplicas) || !slices.Equal(s.removing, p.RemovingReplicas) {
		rec.Replicas, rec.AddingReplicas, rec.RemovingReplicas = s.replicas, s.adding, s.removing
		changed = true
	}
	if !slices.Equal(s.isr, p.ISR) {
		rec.ISR = s.isr
		changed = true
	}
	if s.leader != p.Leader {
		leader := s.leader
		rec.Leader = &leader
		changed = true
	}
	if !changed {
		return nil
	}
	return rec
}

// checkReplicaInvariants panics, in builds with the invariants tag, if p's
// replica state is not one the reassignment rules can produce: adding and
// removing replicas disjoint subsets of the replicas, the ISR within the
// replicas, the leader in the ISR or none.
func checkReplicaInvariants(p *metadata.Partition) {
	if !invariantsEnabled {
		return
	}
	for _, id := range p.AddingReplicas {
		if !slices.Contains(p.Replicas, id) || slices.Contains(p.RemovingReplicas, id) {
			panic(fmt.Sprintf("controller: partition %d adding replica %d not a replica, or also removed: %+v", p.Partition, id, p))
		}
	}
	for _, id := range p.RemovingReplicas {
		if !slices.Contains(p.Replicas, id) {
			panic(fmt.Sprintf("controller: partition %d removing replica %d not a replica: %+v", p.Partition, id, p))
		}
	}
	for _, id := range p.ISR {
		if !slices.Contains(p.Replicas, id) {
			panic(fmt.Sprintf("controller: partition %d ISR member %d not a replica: %+v", p.Partition, id, p))
		}
	}
	if p.Leader >= 0 && !slices.Contains(p.ISR, p.Leader) {
		panic(fmt.Sprintf("controller: partition %d leader %d outside the ISR: %+v", p.Partition, p.Leader, p))
	}
}

// without returns ids minus the members of drop, in order.
func without(ids, drop []int32) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}

// ListPartitionReassignments returns the reassignments in progress among
// targets, or all of them for nil targets. Unknown topics and partitions,
// and partitions with no reassignment, are left out, as in Kafka.
func (c *Controller) ListPartitionReassignments(targets []PartitionRef) ([]OngoingReassignment, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return nil, err
	}
	img := c.image.Load()
	out := []OngoingReassignment{}
	add := func(t *metadata.Topic, p *metadata.Partition) {
		if p != nil && p.Reassigning() {
			out = append(out, OngoingReassignment{Topic: t.Name, Partition: p.Partition,
				Replicas: slices.Clone(p.Replicas), AddingReplicas: slices.Clone(p.AddingReplicas), RemovingReplicas: slices.Clone(p.RemovingReplicas)})
		}
	}
	if targets == nil {
		for _, name := range img.TopicNames() {
			t := img.Topic(name)
			for _, p := range t.Partitions {
				add(t, p)
			}
		}
		return out, nil
	}
	seen := map[PartitionRef]bool{}
	for _, ref := range targets {
		t := img.Topic(ref.Topic)
		if t == nil || ref.Partition < 0 || int(ref.Partition) >= len(t.Partitions) || seen[ref] {
			continue
		}
		seen[ref] = true
		add(t, t.Partitions[ref.Partition])
	}
	return out, nil
}
