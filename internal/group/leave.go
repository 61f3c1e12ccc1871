package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaveGroup handles LeaveGroup. Versions: v0-v2 name one member and answer
// with a single error code; v3+ batch members, each identified by member id
// and/or group.instance.id (an admin may remove a static member by instance
// id alone, KIP-345), with an error per member; v5+ adds a reason.
func (s *shard) leaveGroup(now time.Time, req *kmsg.LeaveGroupRequest, respond func(*kmsg.LeaveGroupResponse)) {
	defer s.checkInvariants()
	identities := req.Members
	if req.Version < 3 {
		identities = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	topCode, results := s.leave(now, req.Group, identities)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	resp.ErrorCode = topCode
	if req.Version >= 3 {
		resp.Members = results
	} else if topCode == 0 {
		// Versions without per-member results carry the member's error.
		for _, r := range results {
			if r.ErrorCode != 0 {
				resp.ErrorCode = r.ErrorCode
				break
			}
		}
	}
	s.reply(func() { respond(resp) })
}

func (s *shard) leave(now time.Time, groupID string, identities []kmsg.LeaveGroupRequestMember) (int16, []kmsg.LeaveGroupResponseMember) {
	if groupID == "" {
		return kerr.InvalidGroupID.Code, nil
	}
	results := make([]kmsg.LeaveGroupResponseMember, len(identities))
	for i, id := range identities {
		results[i] = kmsg.NewLeaveGroupResponseMember()
		results[i].MemberID = id.MemberID
		results[i].InstanceID = id.InstanceID
	}
	g := s.classic(groupID)
	if g == nil {
		for i := range results {
			results[i].ErrorCode = kerr.UnknownMemberID.Code
		}
		return 0, results
	}
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	left := 0
	for i, id := range identities {
		switch {
		case id.MemberID == "":
			// Removal by instance id alone.
			if id.InstanceID == nil {
				results[i].ErrorCode = kerr.UnknownMemberID.Code
				continue
			}
			memberID, ok := g.staticMembers[*id.InstanceID]
			if !ok {
				results[i].ErrorCode = kerr.UnknownMemberID.Code
				continue
			}
			s.removeLeavingMember(g, memberID)
		case g.isPendingMember(id.MemberID):
			g.remove(id.MemberID)
			s.cancelHeartbeat(g, id.MemberID)
		default:
			if code := g.validateMember(id.MemberID, id.InstanceID); code != 0 {
				results[i].ErrorCode = code
				continue
			}
			s.removeLeavingMember(g, id.MemberID)
		}
		left++
	}
	if left > 0 {
		switch g.state {
		case stateStable, stateCompletingRebalance:
			s.maybePrepareRebalanceOrCompleteJoin(now, g)
		case statePreparingRebalance:
			s.maybeCompleteJoinPhase(now, g)
		}
	}
	return 0, results
}

func (s *shard) removeLeavingMember(g *classicGroup, memberID string) {
	s.log.Info("member left group", "group", g.id, "member", memberID)
	m := g.remove(memberID)
	s.dropMember(g, m, kerr.UnknownMemberID.Code)
}

// expireHeartbeat handles a session timeout: a pending member is forgotten,
// a member that is not parked in a rebalance is removed.
func (s *shard) expireHeartbeat(now time.Time, g *classicGroup, memberID string) {
	if g.state == stateDead {
		return
	}
	if g.isPendingMember(memberID) {
		s.log.Info("pending member removed after session timeout", "group", g.id, "member", memberID)
		g.remove(memberID)
		if g.state == statePreparingRebalance && g.hasAllMembersJoined() {
			s.completeJoin(now, g)
		}
		return
	}
	m := g.members[memberID]
	if m == nil || m.hasSatisfiedHeartbeat() {
		return
	}
	s.log.Info("member failed, removing it from the group", "group", g.id, "member", memberID)
	g.remove(memberID)
	s.dropMember(g, m, kerr.UnknownMemberID.Code)
	switch g.state {
	case stateStable, stateCompletingRebalance:
		s.maybePrepareRebalanceOrCompleteJoin(now, g)
	case statePreparingRebalance:
		if g.hasAllMembersJoined() {
			s.completeJoin(now, g)
		}
	}
}
