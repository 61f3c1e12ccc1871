package group

import "github.com/twmb/franz-go/pkg/kmsg"

// streamsReconciliation moves one member toward its target tasks (Kafka's
// streams CurrentAssignmentBuilder), as reconciliation does for consumer
// groups: tasks it keeps stay, tasks it loses (of any kind) are revoked
// first, at its current epoch in UnrevokedTasks until a heartbeat no
// longer reports them owned; then it moves to the target epoch, in
// UnreleasedTasks while an active task it gains is still owned by another
// member, Stable otherwise. Standby and warm-up tasks are given without
// waiting for release. It is pure.
type streamsReconciliation struct {
	targetEpoch int32
	target      streamsTasks
	// activeOwner returns the member owning an active task, "" for none.
	activeOwner func(taskID) string
	// owned is what the member reported owning; known is false when the
	// heartbeat left it out (unchanged since the last one).
	owned streamsTasks
	known bool
}

func ownedTasksOf(req *kmsg.StreamsGroupHeartbeatRequest) (streamsTasks, bool) {
	if req.ActiveTasks == nil || req.StandbyTasks == nil || req.WarmupTasks == nil {
		return streamsTasks{}, false
	}
	return streamsTasks{active: taskSetFromWire(req.ActiveTasks), standby: taskSetFromWire(req.StandbyTasks), warmup: taskSetFromWire(req.WarmupTasks)}, true
}

func taskSetFromWire(in []kmsg.TaskIDs) taskSet {
	raw := make(map[string][]int32, len(in))
	for _, t := range in {
		raw[t.SubtopologyID] = append(raw[t.SubtopologyID], t.Partitions...)
	}
	return newTaskSet(raw)
}

func taskSetToWire(s taskSet) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	var current *kmsg.TaskIDs
	for t := range s.each() {
		if current == nil || current.SubtopologyID != t.subtopology {
			out = append(out, kmsg.TaskIDs{SubtopologyID: t.subtopology})
			current = &out[len(out)-1]
		}
		current.Partitions = append(current.Partitions, t.partition)
	}
	return out
}

func (r *streamsReconciliation) next(m *streamsMember) (*streamsMember, *heartbeatError) {
	switch m.state {
	case memberStable:
		if m.memberEpoch != r.targetEpoch {
			return r.computeNext(m), nil
		}
		return m, nil
	case memberUnrevokedPartitions:
		if r.ownsAny(m.pendingRevocation) {
			return m, nil
		}
		return r.computeNext(m), nil
	case memberUnreleasedPartitions:
		return r.computeNext(m), nil
	}
	if !r.known || !r.owned.isEmpty() {
		return nil, &heartbeatError{code: fencedMemberEpochCode, message: "The streams group member is in a unknown state. The member must abandon all its tasks and rejoin."}
	}
	c := m.clone()
	c.state, c.memberEpoch = memberStable, r.targetEpoch
	return r.computeNext(c), nil
}

// ownsAny reports whether the member still owns a task of t: true when it
// did not say what it owns.
func (r *streamsReconciliation) ownsAny(t streamsTasks) bool {
	if !r.known {
		return true
	}
	return len(r.owned.active.intersect(t.active)) > 0 || len(r.owned.standby.intersect(t.standby)) > 0 ||
		len(r.owned.warmup.intersect(t.warmup)) > 0
}

func (r *streamsReconciliation) computeNext(m *streamsMember) *streamsMember {
	keep := streamsTasks{
		active:  m.assigned.active.intersect(r.target.active),
		standby: m.assigned.standby.intersect(r.target.standby),
		warmup:  m.assigned.warmup.intersect(r.target.warmup),
	}
	revoke := streamsTasks{
		active:  m.assigned.active.minus(r.target.active),
		standby: m.assigned.standby.minus(r.target.standby),
		warmup:  m.assigned.warmup.minus(r.target.warmup),
	}
	if !revoke.isEmpty() && r.ownsAny(revoke) {
		next := m.clone()
		next.previousMemberEpoch = m.memberEpoch
		next.state = memberUnrevokedPartitions
		next.assigned, next.pendingRevocation = keep, revoke
		return next
	}
	var gained []taskID
	unreleased := false
	for t := range r.target.active.minus(m.assigned.active).each() {
		// A task another member still owns is not free yet; one this
		// member is itself revoking is.
		if owner := r.activeOwner(t); owner != "" && owner != m.id {
			unreleased = true
			continue
		}
		gained = append(gained, t)
	}
	active := keep.active
	if len(gained) > 0 {
		all := gained
		for t := range keep.active.each() {
			all = append(all, t)
		}
		active = taskSetOf(all)
	}
	next := m.clone()
	next.previousMemberEpoch, next.memberEpoch = m.memberEpoch, r.targetEpoch
	next.state = memberStable
	if unreleased {
		next.state = memberUnreleasedPartitions
	}
	next.assigned = streamsTasks{active: active, standby: r.target.standby, warmup: r.target.warmup}
	next.pendingRevocation = streamsTasks{}
	return next
}
