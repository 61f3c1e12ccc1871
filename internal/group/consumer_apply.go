package group

// Applying consumer group records: the only way a consumer group changes,
// whether its records were just appended or are replayed on load.

import (
	"encoding/binary"
	"time"
)

// consumerRecordKind returns the record type of a key, or -1.
func consumerRecordKind(key []byte) int16 {
	if len(key) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(key))
}

// replayConsumerRecord applies a consumer group record read back while
// loading. It reports false for records of other types.
func (s *shard) replayConsumerRecord(key, value []byte) (bool, error) {
	if !isConsumerRecordType(consumerRecordKind(key)) {
		return false, nil
	}
	r, err := decodeConsumerRecord(key, value)
	if err != nil {
		return true, err
	}
	s.applyConsumerRecord(r)
	return true, nil
}

// persistedConsumerGroup returns the consumer group id, creating it when
// create is set. An empty classic group under that id (one holding only
// offsets, or emptied before it became a consumer group) is replaced, its
// offsets kept. It returns nil if no consumer group can be had.
func (s *shard) persistedConsumerGroup(id string, create bool) *consumerGroup {
	switch g := s.groups[id].(type) {
	case *consumerGroup:
		return g
	case *classicGroup:
		if len(g.members) > 0 {
			s.log.Warn("consumer group record for a classic group with members; ignoring it", "group", id)
			return nil
		}
		if !create {
			return nil
		}
	case nil:
		if !create {
			return nil
		}
	}
	g := newConsumerGroup(id)
	s.groups[id] = g
	return g
}

// applyConsumerRecord applies one record to the shard: the only way a
// consumer group changes, whether the record was just written or is being
// replayed.
func (s *shard) applyConsumerRecord(r *consumerRecord) {
	if r.recordType == recordTypeGroupMetadata {
		// A classic group emptied and replaced by a consumer group.
		if _, ok := s.groups[r.group].(*classicGroup); ok {
			s.forgetGroup(r.group)
		}
		return
	}
	if r.recordType == recordTypeConsumerGroupMetadata && r.tombstone {
		if g, ok := s.groups[r.group].(*consumerGroup); ok {
			for id := range g.members {
				s.cancelConsumerTimers(g.id, id)
			}
			s.forgetGroup(r.group)
		}
		return
	}
	create := !r.tombstone && r.recordType != recordTypeConsumerGroupCurrentAssignment
	g := s.persistedConsumerGroup(r.group, create)
	if g == nil {
		return
	}
	if r.recordType == recordTypeConsumerGroupMemberMetadata || r.recordType == recordTypeConsumerGroupRegex {
		g.topicCounts = nil // subscriptions changed
	}
	switch r.recordType {
	case recordTypeConsumerGroupMetadata:
		g.groupEpoch = r.epoch
	case recordTypeConsumerGroupPartitionMetadata:
		g.subscriptionMetadata = r.topics
		if r.tombstone || g.subscriptionMetadata == nil {
			g.subscriptionMetadata = make(map[string]topicInfo)
		}
	case recordTypeConsumerGroupTargetMetadata:
		g.targetAssignmentEpoch = r.epoch
		if r.tombstone {
			g.targetAssignmentEpoch = 0
		}
	case recordTypeConsumerGroupTargetMember:
		if r.tombstone {
			delete(g.target, r.member)
		} else {
			g.target[r.member] = r.partitions
		}
	case recordTypeConsumerGroupRegex:
		if r.tombstone {
			delete(g.resolvedRegexes, r.regex)
		} else {
			g.resolvedRegexes[r.regex] = r.resolved
		}
	case recordTypeConsumerGroupMemberMetadata:
		s.applyMemberMetadata(g, r)
	case recordTypeConsumerGroupCurrentAssignment:
		applyCurrentAssignment(g, r)
	}
}

func (s *shard) applyMemberMetadata(g *consumerGroup, r *consumerRecord) {
	old := g.members[r.member]
	if r.tombstone {
		if old == nil {
			return
		}
		setPartitionEpochs(g, old, nil)
		delete(g.members, r.member)
		if old.instanceID != nil && g.staticMembers[*old.instanceID] == old.id {
			delete(g.staticMembers, *old.instanceID)
		}
		s.cancelConsumerTimers(g.id, r.member)
		return
	}
	m := newConsumerMember(r.member)
	if old != nil {
		m = old.clone()
		if old.instanceID != nil && g.staticMembers[*old.instanceID] == old.id {
			delete(g.staticMembers, *old.instanceID)
		}
	}
	md := r.metadata
	m.instanceID, m.rackID = md.instanceID, md.rackID
	m.clientID, m.clientHost = md.clientID, md.clientHost
	m.subscribedTopicNames, m.subscribedTopicRegex = md.subscribedTopicNames, md.subscribedTopicRegex
	m.rebalanceTimeoutMs, m.serverAssignor = md.rebalanceTimeoutMs, md.serverAssignor
	g.members[m.id] = m
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
}

// applyCurrentAssignment updates a member's epochs and partitions; a
// tombstone leaves the member with epoch -1 and nothing, ready to be
// removed by its metadata tombstone.
func applyCurrentAssignment(g *consumerGroup, r *consumerRecord) {
	old := g.members[r.member]
	if old == nil {
		return // the member's metadata record comes first; a bad log otherwise
	}
	m := old.clone()
	if r.tombstone {
		m.memberEpoch, m.previousMemberEpoch, m.state = leaveMemberEpoch, leaveMemberEpoch, memberStable
		m.assigned, m.pendingRevocation = nil, nil
	} else {
		a := r.assignment
		m.memberEpoch, m.previousMemberEpoch, m.state = a.memberEpoch, a.previousMemberEpoch, a.state
		m.assigned, m.pendingRevocation = a.assigned, a.pendingRevocation
	}
	setPartitionEpochs(g, old, m)
	g.members[m.id] = m
}

// setPartitionEpochs moves the partition ownership of old to updated
// (either may be nil).
func setPartitionEpochs(g *consumerGroup, old, updated *consumerMember) {
	if old != nil {
		for _, a := range []assignment{old.assigned, old.pendingRevocation} {
			for t, ps := range a {
				for _, p := range ps {
					k := partitionKey{t, p}
					if e, ok := g.partitionEpochs[k]; ok && e == old.memberEpoch {
						delete(g.partitionEpochs, k)
					}
				}
			}
		}
	}
	if updated != nil {
		for _, a := range []assignment{updated.assigned, updated.pendingRevocation} {
			for t, ps := range a {
				for _, p := range ps {
					g.partitionEpochs[partitionKey{t, p}] = updated.memberEpoch
				}
			}
		}
	}
}

// forgetGroup forgets a group but not its offsets, as replaying a group's
// tombstone does in Kafka, which keeps offsets apart from groups: a group
// with offsets left becomes a simple group holding them.
func (s *shard) forgetGroup(id string) {
	offsets := s.offsets[id]
	s.removeGroup(id)
	if len(offsets) > 0 {
		s.offsets[id] = offsets
		s.groups[id] = newClassicGroup(id, stateEmpty, -1)
	}
}

// writeConsumerRecords appends records of group g; once they are written
// they are applied, and done runs (err nil), or done gets the error and the
// group is left as it was. Without records done runs at once.
//
// The group changes only when its records are applied, so two changes of
// one group must not be computed before the first is applied: the driver
// appends a step's writes before the next step, and the consumer timers
// that fire within one step wait for writes pending on their group
// (pendingWrites).
func (s *shard) writeConsumerRecords(now time.Time, g *consumerGroup, records []*consumerRecord, done func(now time.Time, err error)) {
	if len(records) == 0 {
		done(now, nil)
		return
	}
	kvs := make([]KV, len(records))
	for i, r := range records {
		kvs[i] = r.kv()
	}
	if g != nil {
		g.pendingWrites++
	}
	s.write(kvs, func(now time.Time, err error) {
		if g != nil {
			g.pendingWrites--
		}
		if err == nil {
			for _, r := range records {
				s.applyConsumerRecord(r)
			}
		}
		done(now, err)
	})
}
