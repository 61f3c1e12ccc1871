package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timers of streams group members.
const (
	// timerStreamsSession removes a member that stopped heartbeating
	// (group.streams.session.timeout.ms).
	timerStreamsSession timerKind = 32 + iota
	// timerStreamsRebalance removes a member that did not revoke its tasks
	// within its rebalance timeout; the timer's generation holds the member
	// epoch it was set at.
	timerStreamsRebalance
	// timerStreamsAssignmentDelay ends a new group's initial rebalance
	// delay: it bumps the group epoch so that the next heartbeat computes
	// the first real assignment.
	timerStreamsAssignmentDelay
)

// streamsHeartbeatLeave handles a heartbeat with epoch -1 (leave) or -2 (a
// static member leaving for now, keeping its tasks for its session).
func (s *shard) streamsHeartbeatLeave(req *kmsg.StreamsGroupHeartbeatRequest) (*streamsOutcome, *heartbeatError) {
	g, ok := s.groups[req.Group].(*streamsGroup)
	if !ok {
		if s.groups[req.Group] == nil {
			return nil, hbError(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
		}
		return nil, hbError(kerr.GroupIDNotFound, "Group %s is not a streams group.", req.Group)
	}
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	resp.MemberID, resp.MemberEpoch = req.MemberID, req.MemberEpoch
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	out := &streamsOutcome{group: g, resp: resp}
	var m *streamsMember
	if req.InstanceID == nil {
		if m = g.members[req.MemberID]; m == nil {
			return nil, hbError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.id)
		}
		s.log.Info("member left the streams group", "group", g.id, "member", m.id)
		out.records = s.streamsFenceRecords(g, m)
		return out, nil
	}
	instanceID := *req.InstanceID
	if m = g.staticMember(instanceID); m == nil {
		return nil, hbError(kerr.UnknownMemberID, "Instance id %s is unknown.", instanceID)
	}
	if m.id != req.MemberID {
		return nil, hbError(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, instanceID, m.id)
	}
	if req.MemberEpoch == leaveStaticMemberEpoch {
		s.log.Info("static member temporarily left the streams group", "group", g.id, "member", m.id, "instance", instanceID)
		leaving := m.clone()
		leaving.memberEpoch, leaving.pendingRevocation = leaveStaticMemberEpoch, streamsTasks{}
		out.records = []*streamsRecord{streamsCurrentAssignmentRecord(g.id, leaving)}
		return out, nil
	}
	s.log.Info("static member left the streams group", "group", g.id, "member", m.id, "instance", instanceID)
	out.records = s.streamsFenceRecords(g, m)
	return out, nil
}

// streamsFenceRecords removes member m and bumps the group epoch, so that
// the next heartbeat hands its tasks to the others.
func (s *shard) streamsFenceRecords(g *streamsGroup, m *streamsMember) []*streamsRecord {
	if len(g.members) == 1 {
		g.shutdownRequested = false // soft state: the application is gone
	}
	g.endpointEpoch++ // soft state: the member's partitions are gone
	records := streamsMemberTombstones(g.id, m.id)
	return append(records, streamsGroupMetadataRecord(g.id, g.groupEpoch+1, g.metadataHash, g.validatedTopologyEpoch))
}

func (s *shard) scheduleStreamsSession(now time.Time, groupID, memberID string) {
	s.timers.schedule(&timer{
		key:      timerKey{kind: timerStreamsSession, group: groupID, member: memberID},
		deadline: now.Add(time.Duration(s.config.StreamsGroup.SessionTimeoutMs) * time.Millisecond),
	})
}

func (s *shard) scheduleStreamsRebalance(now time.Time, groupID string, m *streamsMember) {
	s.timers.schedule(&timer{
		key:        timerKey{kind: timerStreamsRebalance, group: groupID, member: m.id},
		deadline:   now.Add(time.Duration(max(m.rebalanceTimeoutMs, 0)) * time.Millisecond),
		generation: m.memberEpoch,
	})
}

func (s *shard) cancelStreamsTimers(groupID, memberID string) {
	s.timers.cancel(timerKey{kind: timerStreamsSession, group: groupID, member: memberID})
	s.timers.cancel(timerKey{kind: timerStreamsRebalance, group: groupID, member: memberID})
}

// fireStreamsTimer runs a streams member's timer; it reports false for a
// timer of another kind.
func (s *shard) fireStreamsTimer(now time.Time, t *timer) bool {
	if t.key.kind != timerStreamsSession && t.key.kind != timerStreamsRebalance && t.key.kind != timerStreamsAssignmentDelay {
		return false
	}
	g, ok := s.groups[t.key.group].(*streamsGroup)
	if !ok {
		return true
	}
	if t.key.kind == timerStreamsAssignmentDelay {
		s.endAssignmentDelay(now, g, t)
		return true
	}
	m := g.members[t.key.member]
	if m == nil || (t.key.kind == timerStreamsRebalance && m.memberEpoch != t.generation) {
		return true
	}
	if g.pendingWrites > 0 {
		t.deadline = now.Add(time.Millisecond)
		s.timers.schedule(t)
		return true
	}
	reason := "its session expired"
	if t.key.kind == timerStreamsRebalance {
		reason = "it did not revoke its tasks within the rebalance timeout"
	}
	s.log.Info("removing streams group member", "group", g.id, "member", m.id, "reason", reason)
	s.writeStreamsRecords(now, g, s.streamsFenceRecords(g, m), func(now time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to remove streams group member; retrying", "group", g.id, "member", m.id, "err", err)
			t.deadline = now.Add(fenceRetryBackoffMs * time.Millisecond)
			s.timers.schedule(t)
		}
	})
	return true
}

// endAssignmentDelay bumps the group epoch once a new group's initial
// rebalance delay is over, so that the next heartbeat assigns tasks.
func (s *shard) endAssignmentDelay(now time.Time, g *streamsGroup, t *timer) {
	if g.pendingWrites > 0 {
		t.deadline = now.Add(time.Millisecond)
		s.timers.schedule(t)
		return
	}
	g.assignmentDelayedUntil = time.Time{}
	if len(g.members) == 0 {
		return
	}
	record := streamsGroupMetadataRecord(g.id, g.groupEpoch+1, g.metadataHash, g.validatedTopologyEpoch)
	s.writeStreamsRecords(now, g, []*streamsRecord{record}, func(now time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to end the initial rebalance delay of a streams group; retrying", "group", g.id, "err", err)
			t.deadline = now.Add(fenceRetryBackoffMs * time.Millisecond)
			s.timers.schedule(t)
		}
	})
}

// onStreamsGroupsLoaded starts the clocks of the streams group members of
// a freshly loaded partition.
func (s *shard) onStreamsGroupsLoaded(now time.Time) {
	for _, id := range s.sortedGroupIDs() {
		g, ok := s.groups[id].(*streamsGroup)
		if !ok {
			continue
		}
		for _, memberID := range g.sortedMemberIDs() {
			m := g.members[memberID]
			s.scheduleStreamsSession(now, g.id, m.id)
			if m.state == memberUnrevokedPartitions {
				s.scheduleStreamsRebalance(now, g.id, m)
			}
		}
	}
}

func (s *shard) checkStreamsInvariants() {
	for _, gr := range s.groups {
		if g, ok := gr.(*streamsGroup); ok {
			g.checkInvariants()
		}
	}
}
