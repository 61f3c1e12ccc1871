package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// syncGroup handles SyncGroup. Versions: v3+ carries group.instance.id;
// v5+ names the protocol type and name, checked against the group's
// (INCONSISTENT_GROUP_PROTOCOL) and returned on success.
//
// Behavior: a follower's SyncGroup is parked until the leader's arrives; the
// leader's assignment is persisted in a GroupMetadataValue, and once written
// every parked member gets its assignment and the group is Stable. If the
// write fails, everyone parked gets the error and the group rebalances.
func (s *shard) syncGroup(now time.Time, req *kmsg.SyncGroupRequest, respond func(*kmsg.SyncGroupResponse)) {
	defer s.checkInvariants()
	w := &syncWaiter{version: req.Version, respond: respond}
	if req.Group == "" {
		s.replySync(w, kerr.InvalidGroupID.Code, nil, nil)
		return
	}
	g := s.classic(req.Group)
	if g == nil || g.state == stateEmpty {
		s.replySync(w, kerr.UnknownMemberID.Code, nil, nil)
		return
	}
	if code := validateSync(g, req); code != 0 {
		s.replySync(w, code, nil, nil)
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case statePreparingRebalance:
		s.replySync(w, kerr.RebalanceInProgress.Code, nil, nil)
	case stateStable:
		delete(g.pendingSync, m.id)
		s.cancelSyncTimerIfDone(g)
		s.replySync(w, 0, g, m.assignment)
	case stateCompletingRebalance:
		if m.syncWaiter != nil {
			// Superseded by this one; the old request still gets an answer.
			s.replySync(m.syncWaiter, kerr.RebalanceInProgress.Code, nil, nil)
		}
		m.syncWaiter = w
		delete(g.pendingSync, m.id)
		s.cancelSyncTimerIfDone(g)
		if g.isLeader(m.id) {
			s.persistAssignment(g, req)
		}
	}
}

func validateSync(g *classicGroup, req *kmsg.SyncGroupRequest) int16 {
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if protocolInconsistent(req.ProtocolType, g.protocolType, g.hasProtocolType) ||
		protocolInconsistent(req.Protocol, g.protocolName, g.hasProtocolName) {
		return kerr.InconsistentGroupProtocol.Code
	}
	return 0
}

func protocolInconsistent(requested *string, have string, known bool) bool {
	return requested != nil && known && *requested != have
}

func (s *shard) cancelSyncTimerIfDone(g *classicGroup) {
	if len(g.pendingSync) == 0 {
		s.timers.cancel(timerKey{kind: timerSync, group: g.id})
	}
}

// persistAssignment writes the leader's assignment and, once written, hands
// it out. Members the leader left out get an empty assignment.
func (s *shard) persistAssignment(g *classicGroup, req *kmsg.SyncGroupRequest) {
	assignment := make(map[string][]byte, len(g.members))
	for _, a := range req.GroupAssignment {
		if g.members[a.MemberID] != nil {
			assignment[a.MemberID] = a.MemberAssignment
		}
	}
	for id := range g.members {
		if _, ok := assignment[id]; !ok {
			assignment[id] = []byte{}
		}
	}
	generation := req.Generation
	s.write([]KV{groupMetadataKV(g.id, g.metadataValue(assignment))}, func(now time.Time, err error) {
		// The group may have moved on while the write was in flight.
		if s.classic(g.id) != g || g.state != stateCompletingRebalance || g.generation != generation {
			return
		}
		if err != nil {
			code := appendErrorCode(err)
			s.log.Warn("failed to persist group assignment", "group", g.id, "generation", generation, "err", err)
			s.resetAndPropagateAssignment(now, g, code)
			s.maybePrepareRebalanceOrCompleteJoin(now, g)
			return
		}
		for id, m := range g.members {
			m.assignment = assignment[id]
		}
		s.propagateAssignment(now, g, 0)
		g.transition(stateStable, now.UnixMilli())
	})
}

// resetAndPropagateAssignment clears every assignment and answers the parked
// SyncGroups with code.
func (s *shard) resetAndPropagateAssignment(now time.Time, g *classicGroup, code int16) {
	for _, m := range g.members {
		m.assignment = []byte{}
	}
	s.propagateAssignment(now, g, code)
}

// propagateAssignment answers every parked SyncGroup and restarts those
// members' sessions: their sessions may have expired, unheeded, while they
// waited.
func (s *shard) propagateAssignment(now time.Time, g *classicGroup, code int16) {
	for _, id := range g.memberOrder {
		m := g.members[id]
		if m.syncWaiter == nil {
			continue
		}
		s.replySync(m.syncWaiter, code, g, m.assignment)
		m.syncWaiter = nil
		s.scheduleHeartbeat(now, g, id, m.sessionTimeoutMs)
	}
}

// expirePendingSync ends a sync phase: members of that generation that never
// sent SyncGroup are removed and the group rebalances.
func (s *shard) expirePendingSync(now time.Time, g *classicGroup, generation int32) {
	if generation != g.generation || (g.state != stateCompletingRebalance && g.state != stateStable) || len(g.pendingSync) == 0 {
		return
	}
	var late []string
	for _, id := range g.memberOrder {
		if _, ok := g.pendingSync[id]; ok {
			late = append(late, id)
		}
	}
	for _, id := range late {
		m := g.remove(id)
		s.dropMember(g, m, kerr.UnknownMemberID.Code)
	}
	s.log.Info("removed members that did not sync in time", "group", g.id, "members", late)
	s.prepareRebalance(now, g)
}

// heartbeat handles Heartbeat. Versions: v3+ carries group.instance.id.
// Behavior: a heartbeat restarts the member's session; during a rebalance the
// answer is REBALANCE_IN_PROGRESS, telling the member to rejoin.
func (s *shard) heartbeat(now time.Time, req *kmsg.HeartbeatRequest, respond func(*kmsg.HeartbeatResponse)) {
	defer s.checkInvariants()
	code := s.heartbeatCode(now, req)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = code
	s.reply(func() { respond(resp) })
}

func (s *shard) heartbeatCode(now time.Time, req *kmsg.HeartbeatRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	g := s.classic(req.Group)
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	m := g.members[req.MemberID]
	switch g.state {
	case statePreparingRebalance:
		s.scheduleHeartbeat(now, g, m.id, m.sessionTimeoutMs)
		return kerr.RebalanceInProgress.Code
	case stateCompletingRebalance, stateStable:
		// Members heartbeat from their JoinGroup response on, while the
		// group still awaits the leader's assignment too.
		s.scheduleHeartbeat(now, g, m.id, m.sessionTimeoutMs)
		return 0
	default:
		return kerr.UnknownMemberID.Code
	}
}
