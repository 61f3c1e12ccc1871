package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timers of consumer group members, beside the classic ones of timers.go.
const (
	// timerConsumerSession removes a member that stopped heartbeating
	// (group.consumer.session.timeout.ms).
	timerConsumerSession timerKind = 16 + iota
	// timerConsumerRebalance removes a member that did not revoke its
	// partitions within its rebalance timeout; the timer's generation holds
	// the member epoch it was set at.
	timerConsumerRebalance
)

// fenceRetryBackoffMs is how long a timer whose removal of a member failed
// to be written waits before trying again, as Kafka retries its timers.
const fenceRetryBackoffMs = 500

// heartbeatLeave handles a heartbeat with epoch -1 (leave) or -2 (a static
// member leaving for now: it keeps its partitions, and the instance id, for
// its session timeout, so that it can come back without a rebalance).
func (s *shard) heartbeatLeave(req *kmsg.ConsumerGroupHeartbeatRequest) (*heartbeatOutcome, *heartbeatError) {
	g, ok := s.groups[req.Group].(*consumerGroup)
	if !ok {
		if s.groups[req.Group] == nil {
			return nil, hbError(kerr.GroupIDNotFound, "Consumer group %s not found.", req.Group)
		}
		return nil, hbError(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
	}
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.MemberID, resp.MemberEpoch = stringPtr(req.MemberID), req.MemberEpoch
	out := &heartbeatOutcome{group: g, resp: resp}
	var m *consumerMember
	if req.InstanceID == nil {
		if m = g.members[req.MemberID]; m == nil {
			return nil, hbError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.id)
		}
		s.log.Info("member left the consumer group", "group", g.id, "member", m.id)
		out.records = s.fenceRecords(g, m)
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
		s.log.Info("static member temporarily left the consumer group", "group", g.id, "member", m.id, "instance", instanceID)
		leaving := m.clone()
		leaving.memberEpoch, leaving.pendingRevocation = leaveStaticMemberEpoch, nil
		out.records = []*consumerRecord{currentAssignmentRecord(g.id, leaving)}
		return out, nil
	}
	s.log.Info("static member left the consumer group", "group", g.id, "member", m.id, "instance", instanceID)
	out.records = s.fenceRecords(g, m)
	return out, nil
}

// fenceRecords removes member m and bumps the group epoch, so that the
// next heartbeat hands its partitions to the others.
func (s *shard) fenceRecords(g *consumerGroup, m *consumerMember) []*consumerRecord {
	records := memberTombstones(g.id, m.id)
	changes := memberChanges{m.id: nil}
	regexes := g.resolvedRegexes
	if m.subscribedTopicRegex != "" && g.numRegexSubscribers(m.subscribedTopicRegex) == 1 {
		regexes = make(map[string]resolvedRegex, len(g.resolvedRegexes))
		for k, v := range g.resolvedRegexes {
			regexes[k] = v
		}
		delete(regexes, m.subscribedTopicRegex)
		records = append(records, tombstone(recordTypeConsumerGroupRegex, g.id, m.subscribedTopicRegex))
	}
	metadata := s.subscriptionMetadata(g.subscribedTopicCounts(changes, regexes))
	if !equalTopicInfos(metadata, g.subscriptionMetadata) {
		records = append(records, subscriptionMetadataRecord(g.id, metadata))
	}
	return append(records, groupEpochRecord(g.id, g.groupEpoch+1))
}

func (s *shard) scheduleConsumerSession(now time.Time, groupID, memberID string) {
	s.timers.schedule(&timer{
		key:      timerKey{kind: timerConsumerSession, group: groupID, member: memberID},
		deadline: now.Add(time.Duration(s.config.ConsumerGroup.SessionTimeoutMs) * time.Millisecond),
	})
}

func (s *shard) scheduleConsumerRebalance(now time.Time, groupID string, m *consumerMember) {
	s.timers.schedule(&timer{
		key:        timerKey{kind: timerConsumerRebalance, group: groupID, member: m.id},
		deadline:   now.Add(time.Duration(max(m.rebalanceTimeoutMs, 0)) * time.Millisecond),
		generation: m.memberEpoch,
	})
}

func (s *shard) cancelConsumerTimers(groupID, memberID string) {
	s.timers.cancel(timerKey{kind: timerConsumerSession, group: groupID, member: memberID})
	s.timers.cancel(timerKey{kind: timerConsumerRebalance, group: groupID, member: memberID})
}

// fireConsumerTimer runs a consumer member's timer; it reports false for a
// timer of another kind.
func (s *shard) fireConsumerTimer(now time.Time, t *timer) bool {
	if t.key.kind != timerConsumerSession && t.key.kind != timerConsumerRebalance {
		return false
	}
	g, ok := s.groups[t.key.group].(*consumerGroup)
	if !ok {
		return true
	}
	m := g.members[t.key.member]
	if m == nil || (t.key.kind == timerConsumerRebalance && m.memberEpoch != t.generation) {
		return true
	}
	if g.pendingWrites > 0 {
		// Another timer of this tick changed the group; decide once that
		// change is applied.
		t.deadline = now.Add(time.Millisecond)
		s.timers.schedule(t)
		return true
	}
	reason := "its session expired"
	if t.key.kind == timerConsumerRebalance {
		reason = "it did not revoke its partitions within the rebalance timeout"
	}
	s.log.Info("removing consumer group member", "group", g.id, "member", m.id, "reason", reason)
	s.writeConsumerRecords(now, g, s.fenceRecords(g, m), func(now time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to remove consumer group member; retrying", "group", g.id, "member", m.id, "err", err)
			t.deadline = now.Add(fenceRetryBackoffMs * time.Millisecond)
			s.timers.schedule(t)
		}
	})
	return true
}

// onConsumerGroupsLoaded starts the clocks of the consumer group members of
// a freshly loaded partition.
func (s *shard) onConsumerGroupsLoaded(now time.Time) {
	for _, id := range s.sortedGroupIDs() {
		g, ok := s.groups[id].(*consumerGroup)
		if !ok {
			continue
		}
		for _, memberID := range g.sortedMemberIDs() {
			m := g.members[memberID]
			s.scheduleConsumerSession(now, g.id, m.id)
			if m.state == memberUnrevokedPartitions {
				s.scheduleConsumerRebalance(now, g.id, m)
			}
		}
	}
}

// checkConsumerInvariants checks the consumer groups' invariants.
func (s *shard) checkConsumerInvariants() {
	for _, gr := range s.groups {
		if g, ok := gr.(*consumerGroup); ok {
			g.checkInvariants()
		}
	}
}
