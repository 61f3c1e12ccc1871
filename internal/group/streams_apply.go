package group

// Applying streams group records: the only way a streams group changes,
// whether its records were just appended or are replayed on load.

import "time"

// replayStreamsRecord applies a streams group record read back while
// loading. It reports false for records of other types.
func (s *shard) replayStreamsRecord(key, value []byte) (bool, error) {
	if !isStreamsRecordType(consumerRecordKind(key)) {
		return false, nil
	}
	r, err := decodeStreamsRecord(key, value)
	if err != nil {
		return true, err
	}
	s.applyStreamsRecord(r)
	return true, nil
}

// persistedStreamsGroup returns the streams group id, creating it when
// create is set; an empty classic group holding only offsets is replaced,
// its offsets kept. It returns nil if no streams group can be had.
func (s *shard) persistedStreamsGroup(id string, create bool) *streamsGroup {
	switch g := s.groups[id].(type) {
	case *streamsGroup:
		return g
	case *classicGroup:
		if len(g.members) > 0 || !create {
			return nil
		}
	case nil:
		if !create {
			return nil
		}
	default:
		return nil // a consumer group holds the id
	}
	g := newStreamsGroup(id)
	s.groups[id] = g
	return g
}

func (s *shard) applyStreamsRecord(r *streamsRecord) {
	if r.raw != nil {
		return // the classic group it removes is replaced by the next record
	}
	if r.recordType == recordTypeStreamsGroupMetadata && r.tombstone {
		if g, ok := s.groups[r.group].(*streamsGroup); ok {
			for id := range g.members {
				s.cancelStreamsTimers(g.id, id)
			}
			s.forgetGroup(r.group)
		}
		return
	}
	create := !r.tombstone && r.recordType != recordTypeStreamsGroupCurrentAssignment
	g := s.persistedStreamsGroup(r.group, create)
	if g == nil {
		return
	}
	switch r.recordType {
	case recordTypeStreamsGroupMetadata:
		g.groupEpoch, g.metadataHash, g.validatedTopologyEpoch = r.epoch, r.metadataHash, r.validatedTopologyEpoch
	case recordTypeStreamsGroupTopology:
		if r.tombstone {
			g.topology = nil
		} else {
			g.topology = r.topology
		}
		g.configured = nil
	case recordTypeStreamsGroupTargetMetadata:
		g.targetAssignmentEpoch = r.epoch
		if r.tombstone {
			g.targetAssignmentEpoch = 0
		}
	case recordTypeStreamsGroupTargetMember:
		if r.tombstone {
			delete(g.target, r.member)
		} else {
			g.target[r.member] = r.tasks
		}
	case recordTypeStreamsGroupMemberMetadata:
		s.applyStreamsMemberMetadata(g, r)
	case recordTypeStreamsGroupCurrentAssignment:
		applyStreamsCurrentAssignment(g, r)
	}
}

func (s *shard) applyStreamsMemberMetadata(g *streamsGroup, r *streamsRecord) {
	old := g.members[r.member]
	if r.tombstone {
		if old == nil {
			return
		}
		setActiveOwners(g, old, nil)
		delete(g.members, r.member)
		delete(g.taskOffsets, r.member)
		delete(g.taskEndOffsets, r.member)
		if old.instanceID != nil && g.staticMembers[*old.instanceID] == old.id {
			delete(g.staticMembers, *old.instanceID)
		}
		s.cancelStreamsTimers(g.id, r.member)
		return
	}
	m := newStreamsMember(r.member)
	if old != nil {
		m = old.clone()
		if old.instanceID != nil && g.staticMembers[*old.instanceID] == old.id {
			delete(g.staticMembers, *old.instanceID)
		}
	}
	md := r.metadata
	m.instanceID, m.rackID = md.instanceID, md.rackID
	m.clientID, m.clientHost = md.clientID, md.clientHost
	m.rebalanceTimeoutMs, m.topologyEpoch = md.rebalanceTimeoutMs, md.topologyEpoch
	m.processID, m.userEndpoint, m.clientTags = md.processID, md.userEndpoint, md.clientTags
	g.members[m.id] = m
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
}

// applyStreamsCurrentAssignment updates a member's epochs and tasks; a
// tombstone leaves it with epoch -1 and nothing, to be removed by its
// metadata tombstone.
func applyStreamsCurrentAssignment(g *streamsGroup, r *streamsRecord) {
	old := g.members[r.member]
	if old == nil {
		return // the member's metadata record comes first; a bad log otherwise
	}
	m := old.clone()
	if r.tombstone {
		m.memberEpoch, m.previousMemberEpoch, m.state = leaveMemberEpoch, leaveMemberEpoch, memberStable
		m.assigned, m.pendingRevocation = streamsTasks{}, streamsTasks{}
	} else {
		a := r.assignment
		m.memberEpoch, m.previousMemberEpoch, m.state = a.memberEpoch, a.previousMemberEpoch, a.state
		m.assigned, m.pendingRevocation = a.assigned, a.pendingRevocation
	}
	setActiveOwners(g, old, m)
	g.members[m.id] = m
}

// setActiveOwners moves the active task ownership of old to updated
// (either may be nil).
func setActiveOwners(g *streamsGroup, old, updated *streamsMember) {
	if old != nil {
		for _, tasks := range []taskSet{old.assigned.active, old.pendingRevocation.active} {
			for t := range tasks.each() {
				if g.activeOwners[t] == old.id {
					delete(g.activeOwners, t)
				}
			}
		}
	}
	if updated != nil {
		for _, tasks := range []taskSet{updated.assigned.active, updated.pendingRevocation.active} {
			for t := range tasks.each() {
				g.activeOwners[t] = updated.id
			}
		}
	}
}

// writeStreamsRecords appends records of group g (nil for a group they
// create); once written they are applied and done runs, or done gets the
// error and the group is left as it was. See writeConsumerRecords.
func (s *shard) writeStreamsRecords(now time.Time, g *streamsGroup, records []*streamsRecord, done func(now time.Time, err error)) {
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
				s.applyStreamsRecord(r)
			}
		}
		done(now, err)
	})
}
