package group

import (
	"hash/fnv"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	groupTypeShare    = "share"
	shareProtocolType = "share"
	// timerShareSession removes a share group member that stopped
	// heartbeating for group.share.session.timeout.ms.
	timerShareSession timerKind = 40
)

// shareGroup is a share group (KIP-932): members heartbeat with epochs as
// in KIP-848, but partitions may be shared by members, so a new target
// assignment is handed out at once, without revocation.
//
// States (Kafka's ShareGroupState), derived: Empty without members, Stable
// with.
type shareGroup struct {
	id string
	// groupEpoch moves with every change of membership, subscriptions or
	// subscribed topics' partitions.
	// Invariant: every member's memberEpoch <= groupEpoch.
	groupEpoch int32
	// metadataHash summarizes the subscribed topics' ids and partition
	// counts when the target assignment was computed.
	metadataHash int64
	members      map[string]*shareMember
	// statePartitions are the topic-partitions whose durable share state
	// the group initialized (its ShareGroupStatePartitionMetadata record):
	// those assigned to members and those an admin set offsets of.
	statePartitions shareStatePartitions
	// pendingWrites counts appends of this group not yet done.
	pendingWrites int
}

// shareMember is one member of a share group.
type shareMember struct {
	id         string
	rackID     *string
	clientID   string
	clientHost string
	subscribed []string
	// memberEpoch is the group epoch of the member's assignment, and
	// previousEpoch the one before: a heartbeat may carry either (the
	// response that moved it may have been lost).
	memberEpoch   int32
	previousEpoch int32
	assigned      assignment
	// target is the member's assignment at the group epoch; the member
	// takes it on its next heartbeat.
	target assignment
	// sentEpoch is the member epoch of the assignment last sent to the
	// member; a heartbeat carries the assignment only when it moved.
	sentEpoch int32
}

func newShareGroup(id string) *shareGroup {
	return &shareGroup{id: id, members: make(map[string]*shareMember)}
}

func (g *shareGroup) groupID() string          { return g.id }
func (g *shareGroup) groupType() string        { return groupTypeShare }
func (g *shareGroup) protocolTypeName() string { return shareProtocolType }
func (g *shareGroup) stateName() string {
	if len(g.members) == 0 {
		return "Empty"
	}
	return "Stable"
}
func (g *shareGroup) deletable() bool { return false }
func (g *shareGroup) validateDelete() int16 {
	if len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	return 0
}

// Share groups keep no committed offsets in __consumer_offsets: their
// progress is the share-partition state.
func (g *shareGroup) validateOffsetDelete() int16                       { return kerr.GroupIDNotFound.Code }
func (g *shareGroup) validateOffsetCommit(offsetCommitter) int16        { return kerr.GroupIDNotFound.Code }
func (g *shareGroup) offsetExpiryBase() (func(offsetValue) int64, bool) { return nil, false }
func (g *shareGroup) isSubscribedToTopic(topic string) bool {
	for _, m := range g.members {
		if slices.Contains(m.subscribed, topic) {
			return true
		}
	}
	return false
}

func (g *shareGroup) sortedMemberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (g *shareGroup) checkInvariants() {
	for id, m := range g.members {
		if m.id != id || m.memberEpoch > g.groupEpoch {
			panic("share group " + g.id + ": member " + id + " inconsistent")
		}
	}
}

// shareGroupHeartbeat handles ShareGroupHeartbeat (v1).
//
// Behavior: the member id is the client's (required); epoch 0 joins or
// rejoins, -1 leaves, any other epoch must be the member's current one
// (FENCED_MEMBER_EPOCH otherwise, UNKNOWN_MEMBER_ID for a member the
// group does not have). A change of membership, subscriptions or
// subscribed partition counts bumps the group epoch and recomputes every
// member's assignment with the simple assignor; the member gets its new
// assignment in this response.
func (s *shard) shareGroupHeartbeat(now time.Time, client Client, req *kmsg.ShareGroupHeartbeatRequest, respond func(*kmsg.ShareGroupHeartbeatResponse)) {
	defer s.checkInvariants()
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	fail := func(code int16, message string) {
		resp.ErrorCode = code
		if message != "" {
			resp.ErrorMessage = stringPtr(message)
		}
		s.reply(func() { respond(resp) })
	}
	switch {
	case req.MemberID == "":
		fail(kerr.InvalidRequest.Code, "MemberId can't be empty.")
		return
	case req.MemberEpoch < -1:
		fail(kerr.InvalidRequest.Code, "MemberEpoch is invalid.")
		return
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		fail(kerr.InvalidRequest.Code, "SubscribedTopicNames must be set in first request.")
		return
	case req.RackID != nil && *req.RackID == "":
		fail(kerr.InvalidRequest.Code, "RackId can't be empty.")
		return
	}
	existing := s.groups[req.GroupID]
	g, isShare := existing.(*shareGroup)
	if existing != nil && !isShare {
		if c, ok := existing.(*classicGroup); !ok || len(c.members) > 0 || len(s.offsets[req.GroupID]) > 0 || req.MemberEpoch != 0 {
			fail(kerr.GroupIDNotFound.Code, "Group "+req.GroupID+" is not a share group.")
			return
		}
		// An empty classic group without offsets gives way, as Kafka
		// converts it.
		s.removeGroup(req.GroupID)
		existing = nil
	}
	if req.MemberEpoch == -1 {
		if g == nil || g.members[req.MemberID] == nil {
			fail(kerr.UnknownMemberID.Code, "")
			return
		}
		s.removeShareMember(now, g, req.MemberID, func(err error) {
			if err != nil {
				fail(appendErrorCode(err), "")
				return
			}
			resp.MemberID, resp.MemberEpoch = stringPtr(req.MemberID), -1
			resp.HeartbeatIntervalMillis = s.config.ShareGroup.HeartbeatIntervalMs
			s.reply(func() { respond(resp) })
		})
		return
	}
	if g == nil {
		g = newShareGroup(req.GroupID)
	}
	m := g.members[req.MemberID]
	switch {
	case req.MemberEpoch > 0 && m == nil:
		fail(kerr.UnknownMemberID.Code, "")
		return
	case req.MemberEpoch > 0 && req.MemberEpoch != m.memberEpoch && req.MemberEpoch != m.previousEpoch:
		fail(kerr.FencedMemberEpoch.Code, "The share group member has a smaller member epoch than expected.")
		return
	case m == nil && int32(len(g.members)) >= s.config.ShareGroup.MaxSize:
		fail(kerr.GroupMaxSizeReached.Code, "The share group has reached its maximum capacity.")
		return
	}
	changed := false
	if m == nil {
		m = &shareMember{id: req.MemberID, sentEpoch: -1}
		changed = true
	} else if req.MemberEpoch == 0 {
		m.sentEpoch = -1 // a rejoining member gets its assignment again
	}
	m.clientID, m.clientHost = client.ID, client.Host
	if req.RackID != nil {
		m.rackID = req.RackID
	}
	if req.SubscribedTopicNames != nil {
		topics := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(topics)
		topics = slices.Compact(topics)
		if !slices.Equal(topics, m.subscribed) {
			m.subscribed, changed = topics, true
		}
	}
	if existing == nil {
		s.groups[g.id] = g
	}
	g.members[m.id] = m
	hash := s.shareMetadataHash(g)
	if changed || hash != g.metadataHash {
		s.assignShareGroup(g, g.groupEpoch+1, hash)
	}
	initialized := s.initializeAssignedShareState(g, now.UnixMilli())
	if m.memberEpoch != g.groupEpoch {
		m.previousEpoch, m.memberEpoch, m.assigned = m.memberEpoch, g.groupEpoch, m.target
	}
	s.scheduleShareSession(now, g.id, m.id)
	answer := func() {
		resp.MemberID, resp.MemberEpoch = stringPtr(m.id), m.memberEpoch
		resp.HeartbeatIntervalMillis = s.config.ShareGroup.HeartbeatIntervalMs
		if m.sentEpoch != m.memberEpoch {
			resp.Assignment = s.shareHeartbeatAssignment(m.assigned)
			m.sentEpoch = m.memberEpoch
		}
		s.reply(func() { respond(resp) })
	}
	if g.groupEpoch == m.memberEpoch && !changed && !initialized && hash == g.metadataHash && existing != nil && g.pendingWrites == 0 {
		answer()
		return
	}
	s.writeShareGroupEpoch(g, initialized, func(err error) {
		if err != nil {
			fail(appendErrorCode(err), "")
			return
		}
		answer()
	})
}

// writeShareGroupEpoch appends the group's epoch record, with its
// ShareGroupStatePartitionMetadata record when withStatePartitions, then
// runs done.
func (s *shard) writeShareGroupEpoch(g *shareGroup, withStatePartitions bool, done func(err error)) {
	g.pendingWrites++
	records := []KV{shareGroupMetadataKV(g.id, g.groupEpoch, g.metadataHash, false)}
	if withStatePartitions {
		records = append(records, shareGroupStatePartitionsKV(g.id, &g.statePartitions))
	}
	s.write(records, func(_ time.Time, err error) {
		g.pendingWrites--
		if err != nil {
			s.log.Warn("failed to append share group epoch", "group", g.id, "err", err)
		}
		done(err)
	})
}

// removeShareMember removes a member, reassigns the rest and appends the
// new epoch; done gets the append's outcome.
func (s *shard) removeShareMember(now time.Time, g *shareGroup, memberID string, done func(err error)) {
	delete(g.members, memberID)
	s.timers.cancel(timerKey{kind: timerShareSession, group: g.id, member: memberID})
	if f := s.config.ShareGroup.OnMemberLeft; f != nil {
		group := g.id
		s.reply(func() { f(group, memberID) })
	}
	s.assignShareGroup(g, g.groupEpoch+1, s.shareMetadataHash(g))
	s.writeShareGroupEpoch(g, false, done)
}

// initializeAssignedShareState adds the partitions assigned to the
// members to the group's initialized share-partitions and reports whether
// that changed them. Kafka's coordinator initializes their durable state
// through the persister first (start offset -1, resolved by the
// share-partition leader); here the leader initializes it on its first
// fetch, so the partitions are initialized once assigned, and a
// DescribeShareGroupOffsets answers start offset -1 until then, as Kafka's
// does.
func (s *shard) initializeAssignedShareState(g *shareGroup, nowMs int64) bool {
	names := map[[16]byte]string{}
	assigned := map[[16]byte][]int32{}
	for _, m := range g.members {
		for _, t := range m.subscribed {
			if info, ok := s.shareTopicInfo(t); ok {
				names[info.id] = t
			}
		}
		for id, ps := range m.target {
			assigned[id] = append(assigned[id], ps...)
		}
	}
	changed := false
	for id, ps := range assigned {
		name, ok := names[id]
		if !ok {
			continue
		}
		have := g.statePartitions.initialized[id]
		if have.name == name && !slices.ContainsFunc(ps, func(p int32) bool { return !slices.Contains(have.partitions, p) }) {
			continue
		}
		if g.statePartitions.addInitialized(id, name, ps, nowMs) {
			changed = true
		}
	}
	return changed
}

// assignShareGroup computes every member's assignment at epoch.
func (s *shard) assignShareGroup(g *shareGroup, epoch int32, hash int64) {
	g.groupEpoch, g.metadataHash = epoch, hash
	members := g.sortedMemberIDs()
	subscriptions := make(map[string][]string, len(members))
	previous := make(map[string]assignment, len(members))
	for _, id := range members {
		subscriptions[id] = g.members[id].subscribed
		previous[id] = g.members[id].target
	}
	target := simpleAssign(members, subscriptions, previous, s.shareTopicInfo)
	for _, id := range members {
		g.members[id].target = target[id]
	}
}

// shareTopicInfo returns a topic's id and partition count.
func (s *shard) shareTopicInfo(name string) (topicInfo, bool) {
	tm := s.config.topicMetadata()
	if tm == nil {
		return topicInfo{}, false
	}
	id, n, ok := tm.TopicInfo(name)
	return topicInfo{id: id, partitions: n}, ok
}

// shareMetadataHash hashes the ids and partition counts of the topics the
// members subscribe to, so a heartbeat notices created, deleted or grown
// topics.
func (s *shard) shareMetadataHash(g *shareGroup) int64 {
	var topics []string
	for _, m := range g.members {
		topics = append(topics, m.subscribed...)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	h := fnv.New64a()
	for _, t := range topics {
		info, ok := s.shareTopicInfo(t)
		if !ok {
			continue
		}
		h.Write([]byte(t))
		h.Write(info.id[:])
		h.Write([]byte{byte(info.partitions >> 24), byte(info.partitions >> 16), byte(info.partitions >> 8), byte(info.partitions)})
	}
	return int64(h.Sum64())
}

func (s *shard) shareHeartbeatAssignment(a assignment) *kmsg.ShareGroupHeartbeatResponseAssignment {
	out := kmsg.NewShareGroupHeartbeatResponseAssignment()
	out.TopicPartitions = []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
	for _, t := range a.sortedTopics() {
		tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
		tp.TopicID, tp.Partitions = t, slices.Clone(a[t])
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return &out
}

func (s *shard) scheduleShareSession(now time.Time, groupID, memberID string) {
	s.timers.schedule(&timer{
		key:      timerKey{kind: timerShareSession, group: groupID, member: memberID},
		deadline: now.Add(time.Duration(s.config.ShareGroup.SessionTimeoutMs) * time.Millisecond),
	})
}

// fireShareTimer expires a share member's session; it reports false for a
// timer of another kind.
func (s *shard) fireShareTimer(now time.Time, t *timer) bool {
	if t.key.kind != timerShareSession {
		return false
	}
	g, ok := s.groups[t.key.group].(*shareGroup)
	if !ok || g.members[t.key.member] == nil {
		return true
	}
	s.log.Info("removing share group member", "group", g.id, "member", t.key.member, "reason", "its session expired")
	s.removeShareMember(now, g, t.key.member, func(error) {})
	return true
}

// shareGroupTombstoneKVs deletes a share group.
func (s *shard) shareGroupTombstoneKVs(id string) []KV {
	if f := s.config.ShareGroup.OnDeleted; f != nil {
		s.reply(func() { f(id) })
	}
	return []KV{shareGroupStatePartitionsKV(id, nil), shareGroupMetadataKV(id, 0, 0, true)}
}

// describeShareGroup answers one group of ShareGroupDescribe.
func (s *shard) describeShareGroup(id string) kmsg.ShareGroupDescribeResponseGroup {
	d := kmsg.NewShareGroupDescribeResponseGroup()
	d.GroupID = id
	d.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
	g, ok := s.groups[id].(*shareGroup)
	if !ok {
		d.ErrorCode = kerr.GroupIDNotFound.Code
		if s.groups[id] == nil {
			d.ErrorMessage = stringPtr("Group " + id + " not found.")
		} else {
			d.ErrorMessage = stringPtr("Group " + id + " is not a share group.")
		}
		return d
	}
	d.GroupState = g.stateName()
	d.GroupEpoch = g.groupEpoch
	d.AssignmentEpoch = g.groupEpoch
	d.Assignor = "simple"
	for _, memberID := range g.sortedMemberIDs() {
		m := g.members[memberID]
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID, dm.RackID, dm.MemberEpoch = m.id, m.rackID, m.memberEpoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopicNames = slices.Clone(m.subscribed)
		a := s.describeAssignment(m.assigned)
		dm.Assignment.TopicPartitions = nil
		for _, tp := range a.TopicPartitions {
			out := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			out.TopicID, out.Topic, out.Partitions = tp.TopicID, tp.Topic, tp.Partitions
			dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, out)
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

func (s *shard) checkShareInvariants() {
	for _, gr := range s.groups {
		if g, ok := gr.(*shareGroup); ok {
			g.checkInvariants()
		}
	}
}
