package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client describes the connection a JoinGroup came in on; the member keeps
// it for DescribeGroups and the GroupMetadataValue.
type Client struct {
	// ID is the client id from the request header.
	ID string
	// Host is the client's address as Kafka prints it: "/" and the IP
	// (ClientHost formats a net.Addr so).
	Host string
}

// joinRequest is a JoinGroup with its version differences smoothed out.
type joinRequest struct {
	version            int16
	groupID            string
	memberID           string
	instanceID         *string
	protocolType       string
	protocols          []protocol
	sessionTimeoutMs   int32
	rebalanceTimeoutMs int32
}

// joinGroup handles JoinGroup. Versions: v0 has no rebalance timeout (the
// session timeout stands in); v4+ makes a new dynamic member rejoin with an
// id from MEMBER_ID_REQUIRED (KIP-394); v5+ carries group.instance.id
// (KIP-345); v7+ returns the protocol type; v9+ lets a static leader rejoining
// a stable group skip computing an assignment.
func (s *shard) joinGroup(now time.Time, client Client, req *kmsg.JoinGroupRequest, respond func(*kmsg.JoinGroupResponse)) {
	defer s.checkInvariants()
	w := &joinWaiter{version: req.Version, respond: respond}
	if req.Group == "" {
		s.replyJoin(w, joinError(req.MemberID, kerr.InvalidGroupID.Code))
		return
	}
	if req.SessionTimeoutMillis < s.config.GroupMinSessionTimeoutMs || req.SessionTimeoutMillis > s.config.GroupMaxSessionTimeoutMs {
		s.replyJoin(w, joinError(req.MemberID, kerr.InvalidSessionTimeout.Code))
		return
	}
	j := joinRequest{
		version:            req.Version,
		groupID:            req.Group,
		memberID:           req.MemberID,
		instanceID:         req.InstanceID,
		protocolType:       req.ProtocolType,
		protocols:          protocolsFromRequest(req.Protocols),
		sessionTimeoutMs:   req.SessionTimeoutMillis,
		rebalanceTimeoutMs: req.RebalanceTimeoutMillis,
	}
	if req.Version == 0 {
		j.rebalanceTimeoutMs = j.sessionTimeoutMs
	}

	existing, exists := s.groups[j.groupID]
	g, _ := existing.(*classicGroup)
	if exists && g == nil {
		if !s.replaceEmptyConsumerGroup(j.groupID) {
			s.replyJoin(w, joinError("", kerr.InconsistentGroupProtocol.Code))
			return
		}
		exists = false
	}
	isUnknownMember := j.memberID == ""
	if !exists {
		// A group is created by its first member; a known member id
		// cannot join a group that does not exist.
		if !isUnknownMember {
			s.replyJoin(w, joinError(j.memberID, kerr.UnknownMemberID.Code))
			return
		}
		g = newClassicGroup(j.groupID, stateEmpty, now.UnixMilli())
		s.groups[j.groupID] = g
	}

	writesBefore := len(s.writes)
	switch {
	case !s.acceptJoiningMember(g, j.memberID):
		if m := g.remove(j.memberID); m != nil {
			s.dropMember(g, m, kerr.GroupMaxSizeReached.Code)
		}
		s.replyJoin(w, joinError("", kerr.GroupMaxSizeReached.Code))
	case isUnknownMember:
		s.joinNewMember(now, client, j, g, w)
	default:
		s.joinExistingMember(now, client, j, g, w)
	}
	if !exists && len(s.writes) == writesBefore {
		// Persist the new group, as Kafka does, so it survives a reload.
		s.write([]KV{groupMetadataKV(g.id, emptyGroupMetadataValue(g))}, func(_ time.Time, err error) {
			if err != nil {
				s.log.Warn("failed to write metadata of new group", "group", g.id, "err", err)
			}
		})
	}
}

func emptyGroupMetadataValue(g *classicGroup) *kmsg.GroupMetadataValue {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.CurrentStateTimestamp = g.stateTimestampMs
	return v
}

// acceptJoiningMember applies group.max.size. While preparing a rebalance
// the count is of members already rejoined, so that the last to rejoin of an
// over-full group are the ones turned away.
func (s *shard) acceptJoiningMember(g *classicGroup, memberID string) bool {
	maxSize := int(s.config.GroupMaxSize)
	m := g.members[memberID]
	switch g.state {
	case statePreparingRebalance:
		return (m != nil && m.awaitingJoin()) || g.numAwaitingJoin < maxSize
	case stateCompletingRebalance, stateStable:
		return m != nil || len(g.members) < maxSize
	default:
		return true
	}
}

func (s *shard) joinNewMember(now time.Time, client Client, j joinRequest, g *classicGroup, w *joinWaiter) {
	switch {
	case g.state == stateDead:
		s.replyJoin(w, joinError("", kerr.CoordinatorNotAvailable.Code))
	case !g.supportsProtocols(j.protocolType, j.protocols):
		s.replyJoin(w, joinError("", kerr.InconsistentGroupProtocol.Code))
	case j.instanceID != nil:
		newID := s.newMemberID(client.ID, j.instanceID)
		if oldID, ok := g.staticMembers[*j.instanceID]; ok {
			s.log.Info("static member rejoins with unknown member id, replacing", "group", g.id, "instance", *j.instanceID, "old", oldID, "new", newID)
			s.updateStaticMember(now, j, g, oldID, newID, w)
			return
		}
		s.addMember(now, client, j, g, newID, w)
	case j.version >= 4:
		// KIP-394: hand out the id and have the member join again with it,
		// so a client retrying after a lost response does not leave
		// orphans behind.
		newID := s.newMemberID(client.ID, nil)
		g.pendingJoin[newID] = struct{}{}
		s.scheduleHeartbeat(now, g, newID, j.sessionTimeoutMs)
		s.replyJoin(w, joinError(newID, kerr.MemberIDRequired.Code))
	default:
		s.addMember(now, client, j, g, s.newMemberID(client.ID, nil), w)
	}
}

func (s *shard) joinExistingMember(now time.Time, client Client, j joinRequest, g *classicGroup, w *joinWaiter) {
	switch {
	case g.state == stateDead:
		s.replyJoin(w, joinError(j.memberID, kerr.CoordinatorNotAvailable.Code))
		return
	case !g.supportsProtocols(j.protocolType, j.protocols):
		s.replyJoin(w, joinError(j.memberID, kerr.InconsistentGroupProtocol.Code))
		return
	case g.isPendingMember(j.memberID):
		if j.instanceID != nil {
			// Pending member ids are only handed to dynamic members.
			s.replyJoin(w, joinError(j.memberID, kerr.UnknownMemberID.Code))
			return
		}
		s.addMember(now, client, j, g, j.memberID, w)
		return
	}
	if code := g.validateMember(j.memberID, j.instanceID); code != 0 {
		s.replyJoin(w, joinError(j.memberID, code))
		return
	}
	m := g.members[j.memberID]
	switch g.state {
	case statePreparingRebalance:
		s.updateMember(now, j, g, m, w)
	case stateCompletingRebalance:
		if !m.matches(j.protocols) {
			s.updateMember(now, j, g, m, w)
			return
		}
		// The member lost its JoinGroup response: send the current
		// generation again, with the members if it leads.
		r := s.currentGeneration(g, m.id)
		if g.isLeader(m.id) {
			r.members = g.joinMembers()
		}
		s.replyJoin(w, r)
	case stateStable:
		// A leader's JoinGroup always rebalances: it is how the leader asks
		// for a new assignment when topic metadata changes.
		if g.isLeader(m.id) || !m.matches(j.protocols) {
			s.updateMember(now, j, g, m, w)
			return
		}
		s.replyJoin(w, s.currentGeneration(g, m.id))
	default:
		s.replyJoin(w, joinError(j.memberID, kerr.UnknownMemberID.Code))
	}
}

// currentGeneration is a successful JoinGroup response for the current
// generation, without the member list.
func (s *shard) currentGeneration(g *classicGroup, memberID string) joinResult {
	return joinResult{
		memberID:     memberID,
		generation:   g.generation,
		protocolType: optionalString(g.protocolType, g.hasProtocolType),
		protocolName: optionalString(g.protocolName, g.hasProtocolName),
		leaderID:     g.leaderID,
	}
}

// addMember adds a new member with a parked JoinGroup and rebalances.
func (s *shard) addMember(now time.Time, client Client, j joinRequest, g *classicGroup, memberID string, w *joinWaiter) {
	m := &member{
		id:                 memberID,
		instanceID:         j.instanceID,
		clientID:           client.ID,
		clientHost:         client.Host,
		rebalanceTimeoutMs: j.rebalanceTimeoutMs,
		sessionTimeoutMs:   j.sessionTimeoutMs,
		protocolType:       j.protocolType,
		protocols:          j.protocols,
		isNew:              true,
	}
	if g.state == statePreparingRebalance && g.previousState == stateEmpty {
		g.newMemberAdded = true
	}
	g.add(m, w)
	// A new member cannot heartbeat while its JoinGroup is parked, and a
	// client that gave up on a long rebalance retries with a new member.
	// Bound how long such a member can linger.
	s.scheduleHeartbeat(now, g, memberID, s.config.NewMemberJoinTimeoutMs)
	s.maybePrepareRebalanceOrCompleteJoin(now, g)
}

// updateMember takes a known member's new protocols and timeouts, parks its
// JoinGroup and rebalances.
func (s *shard) updateMember(now time.Time, j joinRequest, g *classicGroup, m *member, w *joinWaiter) {
	if old := g.updateMember(m, j.protocols, j.rebalanceTimeoutMs, j.sessionTimeoutMs, w); old != nil {
		// A JoinGroup superseded by a newer one from the same member must
		// still be answered; a client still waiting on it rejoins.
		s.replyJoin(old, joinError(m.id, kerr.RebalanceInProgress.Code))
	}
	s.maybePrepareRebalanceOrCompleteJoin(now, g)
}

// updateStaticMember gives a rejoining static member a new member id,
// fencing the old one. In a stable group whose protocol does not change, no
// rebalance happens: the new id is persisted and the member gets the current
// generation back.
func (s *shard) updateStaticMember(now time.Time, j joinRequest, g *classicGroup, oldID, newID string, w *joinWaiter) {
	instanceID := *j.instanceID
	previousLeader := g.leaderID
	m, fencedJoin, fencedSync := g.replaceStaticMember(instanceID, oldID, newID)
	s.replyJoin(fencedJoin, joinError(oldID, kerr.FencedInstanceID.Code))
	s.replySync(fencedSync, kerr.FencedInstanceID.Code, nil, nil)
	s.cancelHeartbeat(g, oldID)
	s.scheduleHeartbeat(now, g, newID, m.sessionTimeoutMs)

	oldProtocols, oldRebalanceMs, oldSessionMs := m.protocols, m.rebalanceTimeoutMs, m.sessionTimeoutMs
	g.updateMember(m, j.protocols, j.rebalanceTimeoutMs, j.sessionTimeoutMs, w)

	switch g.state {
	case stateStable:
		if !g.hasProtocolName || g.selectProtocol() != g.protocolName {
			s.maybePrepareRebalanceOrCompleteJoin(now, g)
			return
		}
		generation := g.generation
		s.write([]KV{groupMetadataKV(g.id, g.metadataValue(g.assignments()))}, func(now time.Time, err error) {
			if g.members[newID] != m || g.generation != generation {
				return // the group moved on; m's JoinGroup was answered there
			}
			if err != nil {
				s.log.Warn("failed to persist replaced static member, reverting", "group", g.id, "instance", instanceID, "err", err)
				waiter := g.updateMember(m, oldProtocols, oldRebalanceMs, oldSessionMs, nil)
				s.cancelHeartbeat(g, newID)
				old, _, _ := g.replaceStaticMember(instanceID, newID, oldID)
				s.scheduleHeartbeat(now, g, oldID, old.sessionTimeoutMs)
				r := s.currentGeneration(g, "")
				r.errorCode, r.leaderID = appendErrorCode(err), previousLeader
				s.replyJoin(waiter, r)
				return
			}
			waiter := g.updateMember(m, m.protocols, m.rebalanceTimeoutMs, m.sessionTimeoutMs, nil)
			r := s.currentGeneration(g, newID)
			if j.version >= 9 {
				// The leader gets the members but need not assign again.
				if g.isLeader(newID) {
					r.members, r.skipAssignment = g.joinMembers(), true
				}
			} else {
				// Older leaders would compute a new assignment the others
				// never ask for; name the old id as leader so it does not.
				r.leaderID = previousLeader
			}
			s.replyJoin(waiter, r)
		})
	case stateCompletingRebalance:
		// The leader may already be assigning to the old member id; only a
		// new rebalance gets the new id an assignment.
		s.prepareRebalance(now, g)
	default:
		s.maybeCompleteJoinPhase(now, g)
	}
}

func (s *shard) maybePrepareRebalanceOrCompleteJoin(now time.Time, g *classicGroup) {
	if g.canRebalance() {
		s.prepareRebalance(now, g)
		return
	}
	s.maybeCompleteJoinPhase(now, g)
}

// prepareRebalance starts a rebalance: members must rejoin within the
// rebalance timeout. The first rebalance of an empty group waits
// group.initial.rebalance.delay.ms for more members instead.
func (s *shard) prepareRebalance(now time.Time, g *classicGroup) {
	if g.state == stateCompletingRebalance {
		s.resetAndPropagateAssignment(now, g, kerr.RebalanceInProgress.Code)
	}
	clear(g.pendingSync)
	s.timers.cancel(timerKey{kind: timerSync, group: g.id})

	initial := g.state == stateEmpty
	if initial {
		delayMs := s.config.GroupInitialRebalanceDelayMs
		s.timers.schedule(&timer{
			key:                timerKey{kind: timerJoin, group: g.id},
			deadline:           now.Add(time.Duration(delayMs) * time.Millisecond),
			initial:            true,
			initialDelayMs:     delayMs,
			initialRemainingMs: max(g.rebalanceTimeoutMs()-delayMs, 0),
		})
	}
	g.transition(statePreparingRebalance, now.UnixMilli())
	s.log.Info("preparing to rebalance group", "group", g.id, "generation", g.generation)
	if !initial {
		s.maybeCompleteJoinElseSchedule(now, g)
	}
}

func (s *shard) maybeCompleteJoinElseSchedule(now time.Time, g *classicGroup) {
	if g.hasAllMembersJoined() {
		s.completeJoin(now, g)
		return
	}
	s.scheduleJoin(now, g)
}

func (s *shard) scheduleJoin(now time.Time, g *classicGroup) {
	s.timers.schedule(&timer{
		key:      timerKey{kind: timerJoin, group: g.id},
		deadline: now.Add(time.Duration(g.rebalanceTimeoutMs()) * time.Millisecond),
	})
}

// tryCompleteInitialRebalance ends the initial delay, or waits another
// delay (up to the rebalance timeout in all) when members joined meanwhile.
func (s *shard) tryCompleteInitialRebalance(now time.Time, g *classicGroup, delayMs, remainingMs int32) {
	if g.newMemberAdded && remainingMs != 0 {
		g.newMemberAdded = false
		newDelayMs := min(s.config.GroupInitialRebalanceDelayMs, remainingMs)
		s.timers.schedule(&timer{
			key:                timerKey{kind: timerJoin, group: g.id},
			deadline:           now.Add(time.Duration(newDelayMs) * time.Millisecond),
			initial:            true,
			initialDelayMs:     newDelayMs,
			initialRemainingMs: max(remainingMs-delayMs, 0),
		})
		return
	}
	s.completeJoin(now, g)
}

// maybeCompleteJoinPhase completes the join phase once every member rejoined,
// except during an initial rebalance, which always waits out its delay.
func (s *shard) maybeCompleteJoinPhase(now time.Time, g *classicGroup) {
	if g.state == statePreparingRebalance && g.previousState != stateEmpty && g.hasAllMembersJoined() {
		s.completeJoin(now, g)
	}
}

// completeJoin ends the join phase: dynamic members that did not rejoin are
// removed, and the next generation starts with the rest (answering their
// JoinGroups, the leader's with the member list) or, with none, the group
// becomes Empty.
func (s *shard) completeJoin(now time.Time, g *classicGroup) {
	if g.state != statePreparingRebalance {
		return
	}
	s.timers.cancel(timerKey{kind: timerJoin, group: g.id})
	for _, id := range slicesClone(g.memberOrder) {
		if m := g.members[id]; !m.awaitingJoin() && !m.isStatic() {
			g.remove(id)
			s.dropMember(g, m, kerr.UnknownMemberID.Code)
		}
	}
	if !g.maybeElectNewJoinedLeader() && len(g.members) > 0 {
		// No member rejoined: wait another rebalance timeout for the
		// sessions of the static members to expire.
		s.log.Warn("group could not complete rebalance because no members rejoined", "group", g.id)
		s.scheduleJoin(now, g)
		return
	}
	g.initNextGeneration(now.UnixMilli())
	if g.state == stateEmpty {
		s.log.Info("group is now empty", "group", g.id, "generation", g.generation)
		s.write([]KV{groupMetadataKV(g.id, g.metadataValue(nil))}, func(_ time.Time, err error) {
			if err != nil {
				s.log.Warn("failed to write metadata of empty group", "group", g.id, "err", err)
			}
		})
		return
	}
	s.log.Info("stabilized group", "group", g.id, "generation", g.generation, "members", len(g.members))
	for _, id := range g.memberOrder {
		m := g.members[id]
		r := s.currentGeneration(g, id)
		if g.isLeader(id) {
			r.members = g.joinMembers()
		}
		if m.joinWaiter != nil {
			s.replyJoin(m.joinWaiter, r)
			m.joinWaiter = nil
			g.numAwaitingJoin--
		}
		s.scheduleHeartbeat(now, g, id, m.sessionTimeoutMs)
		m.isNew = false
		g.pendingSync[id] = struct{}{}
	}
	s.timers.schedule(&timer{
		key:        timerKey{kind: timerSync, group: g.id},
		deadline:   now.Add(time.Duration(g.rebalanceTimeoutMs()) * time.Millisecond),
		generation: g.generation,
	})
}

// dropMember answers the parked requests of a member just removed from g
// and stops its session timer.
func (s *shard) dropMember(g *classicGroup, m *member, code int16) {
	s.cancelHeartbeat(g, m.id)
	s.replyJoin(m.joinWaiter, joinError("", code))
	s.replySync(m.syncWaiter, code, nil, nil)
	m.joinWaiter, m.syncWaiter = nil, nil
}

func slicesClone(in []string) []string { return append([]string(nil), in...) }
