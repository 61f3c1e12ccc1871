package group

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// reconciliation moves one member toward its target assignment (Kafka's
// CurrentAssignmentBuilder). It is pure: it returns the member's next
// version, or the member itself when nothing changes.
//
// A member in the Stable state at an older epoch than the target computes
// its next assignment: partitions it has and keeps stay, partitions it has
// and loses are to be revoked, partitions it gains are given only once no
// other member owns them. If it must revoke partitions it still owns, it
// stays at its epoch in UnrevokedPartitions until a heartbeat no longer
// lists them as owned; only then does it move to the target epoch, in
// UnreleasedPartitions while some partitions it gains are still owned by
// another member, Stable otherwise.
type reconciliation struct {
	targetEpoch int32
	target      assignment
	// ownerEpoch returns the epoch of the member owning a partition, -1
	// for none.
	ownerEpoch func(topic [16]byte, partition int32) int32
	// owned is what the member reported owning; nil when the heartbeat
	// left it out (unchanged since the last one).
	owned []kmsg.ConsumerGroupHeartbeatRequestTopic
	// subscribed holds the IDs of the topics the member subscribes to.
	subscribed map[[16]byte]bool
	// enforceSubscription strips topics the member no longer subscribes to
	// even while it is reconciled; set when its subscription changed.
	enforceSubscription bool
}

// errUnknownMemberState is returned for a member in a state from a newer
// version that still owns partitions: it must be fenced and rejoin.
var errUnknownMemberState = &heartbeatError{code: fencedMemberEpochCode, message: "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin."}

func (r *reconciliation) next(m *consumerMember) (*consumerMember, *heartbeatError) {
	switch m.state {
	case memberStable:
		switch {
		case m.memberEpoch != r.targetEpoch:
			return r.computeNext(m, m.memberEpoch), nil
		case r.enforceSubscription:
			return r.dropUnsubscribed(m), nil
		}
		return m, nil
	case memberUnrevokedPartitions:
		if r.ownsAny(m.pendingRevocation) {
			if r.enforceSubscription {
				return r.dropUnsubscribed(m), nil
			}
			return m, nil
		}
		return r.computeNext(m, m.memberEpoch), nil
	case memberUnreleasedPartitions:
		return r.computeNext(m, m.memberEpoch), nil
	default:
		if r.owned == nil || len(r.owned) > 0 {
			return nil, errUnknownMemberState
		}
		return r.computeNext(m, r.targetEpoch), nil
	}
}

// ownsAny reports whether the member still owns a partition of a: true when
// it did not say what it owns.
func (r *reconciliation) ownsAny(a assignment) bool {
	if r.owned == nil {
		return true
	}
	for _, t := range r.owned {
		for _, p := range t.Partitions {
			if a.contains(t.TopicID, p) {
				return true
			}
		}
	}
	return false
}

// withEpoch returns a copy of m moved to epoch, remembering the epoch it
// leaves (Kafka's updateMemberEpoch).
func withEpoch(m *consumerMember, epoch int32) *consumerMember {
	c := m.clone()
	c.previousMemberEpoch, c.memberEpoch = m.memberEpoch, epoch
	return c
}

func (r *reconciliation) computeNext(m *consumerMember, memberEpoch int32) *consumerMember {
	topics := make(map[[16]byte]bool)
	for t := range r.target {
		topics[t] = true
	}
	for t := range m.assigned {
		topics[t] = true
	}
	assigned := make(map[[16]byte][]int32)
	revoking := make(map[[16]byte][]int32)
	gaining := make(map[[16]byte][]int32)
	unreleased := false
	for t := range topics {
		target := r.target[t]
		if !r.subscribed[t] {
			target = nil
		}
		for _, p := range m.assigned[t] {
			if slices.Contains(target, p) {
				assigned[t] = append(assigned[t], p)
			} else {
				revoking[t] = append(revoking[t], p)
			}
		}
		for _, p := range target {
			if m.assigned.contains(t, p) {
				continue
			}
			// A partition another member still owns is not free yet; one
			// this member is itself revoking is.
			if r.ownerEpoch(t, p) != -1 && !m.pendingRevocation.contains(t, p) {
				unreleased = true
				continue
			}
			gaining[t] = append(gaining[t], p)
		}
	}
	pending := newAssignment(revoking)
	switch {
	case len(pending) > 0 && r.ownsAny(pending):
		next := withEpoch(m, memberEpoch)
		next.state = memberUnrevokedPartitions
		next.assigned, next.pendingRevocation = newAssignment(assigned), pending
		return next
	case len(gaining) > 0:
		for t, ps := range gaining {
			assigned[t] = append(assigned[t], ps...)
		}
		fallthrough
	default:
		next := withEpoch(m, r.targetEpoch)
		next.state = memberStable
		if unreleased {
			next.state = memberUnreleasedPartitions
		}
		next.assigned, next.pendingRevocation = newAssignment(assigned), nil
		return next
	}
}

// dropUnsubscribed removes the topics the member no longer subscribes to
// from its assignment, to be revoked if it still owns them.
func (r *reconciliation) dropUnsubscribed(m *consumerMember) *consumerMember {
	kept := make(map[[16]byte][]int32)
	revoking := make(map[[16]byte][]int32)
	for t, ps := range m.pendingRevocation {
		revoking[t] = ps
	}
	changed := false
	for t, ps := range m.assigned {
		if r.subscribed[t] {
			kept[t] = ps
			continue
		}
		changed = true
		revoking[t] = append(revoking[t], ps...)
	}
	if !changed {
		return m
	}
	pending := newAssignment(revoking)
	if len(pending) > 0 && r.ownsAny(pending) {
		next := withEpoch(m, m.memberEpoch)
		next.state = memberUnrevokedPartitions
		next.assigned, next.pendingRevocation = newAssignment(kept), pending
		return next
	}
	next := withEpoch(m, m.memberEpoch)
	next.assigned = newAssignment(kept)
	return next
}
