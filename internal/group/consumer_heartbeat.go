package group

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeatError is why a heartbeat failed: the Kafka error code and the
// message that goes with it in the response.
type heartbeatError struct {
	code    int16
	message string
}

var fencedMemberEpochCode = kerr.FencedMemberEpoch.Code

func hbError(e *kerr.Error, format string, args ...any) *heartbeatError {
	return &heartbeatError{code: e.Code, message: fmt.Sprintf(format, args...)}
}

// heartbeatOutcome is what a heartbeat computed: records to append and the
// response to send once they are, plus timers to set then.
type heartbeatOutcome struct {
	// group is the group the records change; nil for a group they create.
	group   *consumerGroup
	records []*consumerRecord
	resp    *kmsg.ConsumerGroupHeartbeatResponse
	// afterWrite runs once the records are applied.
	afterWrite func(now time.Time)
}

// consumerGroupHeartbeat handles ConsumerGroupHeartbeat. Versions: v0 lets
// a joining member leave its id empty for the coordinator to choose; v1
// requires the member to choose it (KIP-1082) and adds SubscribedTopicRegex.
//
// Behavior: epoch 0 joins (or rejoins), -1 leaves, -2 has a static member
// leave for now, keeping its partitions for the session timeout; any other
// epoch must be the member's current one, or its previous one when it still
// owns only partitions it is assigned (the response bumping it was lost).
// Each heartbeat may update the member's subscription, bump the group epoch,
// compute a new target assignment and move the member toward its target;
// the records doing so are appended before the response is sent.
func (s *shard) consumerGroupHeartbeat(now time.Time, client Client, req *kmsg.ConsumerGroupHeartbeatRequest, respond func(*kmsg.ConsumerGroupHeartbeatResponse)) {
	defer s.checkInvariants()
	fail := func(e *heartbeatError) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = e.code
		if e.message != "" {
			resp.ErrorMessage = stringPtr(e.message)
		}
		s.reply(func() { respond(resp) })
	}
	if e := s.validateHeartbeat(req); e != nil {
		fail(e)
		return
	}
	var out *heartbeatOutcome
	var e *heartbeatError
	if req.MemberEpoch == leaveMemberEpoch || req.MemberEpoch == leaveStaticMemberEpoch {
		out, e = s.heartbeatLeave(req)
	} else {
		out, e = s.heartbeatMember(now, client, req)
	}
	if e != nil {
		fail(e)
		return
	}
	s.writeConsumerRecords(now, out.group, out.records, func(now time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to append consumer group records", "group", req.Group, "err", err)
			fail(&heartbeatError{code: appendErrorCode(err)})
			return
		}
		if out.afterWrite != nil {
			out.afterWrite(now)
		}
		s.reply(func() { respond(out.resp) })
	})
}

// validateHeartbeat checks the request as Kafka's GroupCoordinatorService
// does before it reaches a group.
func (s *shard) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) *heartbeatError {
	invalid := func(msg string) *heartbeatError { return hbError(kerr.InvalidRequest, "%s", msg) }
	switch {
	case (req.Version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == leaveMemberEpoch) && req.MemberID == "":
		return invalid("MemberId can't be empty.")
	case req.Group == "":
		return invalid("GroupId can't be empty.")
	case req.InstanceID != nil && *req.InstanceID == "":
		return invalid("InstanceId can't be empty.")
	case req.RackID != nil && *req.RackID == "":
		return invalid("RackId can't be empty.")
	}
	switch {
	case req.MemberEpoch == joinMemberEpoch:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case req.Topics == nil || len(req.Topics) > 0:
			return invalid("TopicPartitions must be empty when (re-)joining.")
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case req.MemberEpoch == leaveStaticMemberEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < leaveStaticMemberEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	if req.ServerAssignor != nil {
		supported := s.config.ConsumerGroup.assignorNames()
		if !slices.Contains(supported, *req.ServerAssignor) {
			return hbError(kerr.UnsupportedAssignor, "ServerAssignor %s is not supported. Supported assignors: %s.", *req.ServerAssignor, strings.Join(supported, ", "))
		}
	}
	return nil
}

// heartbeatGroup returns the consumer group a heartbeat is for. A joining
// member creates it, replacing an empty classic group of the same id (whose
// tombstone is added to records); a classic group with members cannot be
// joined, as in Kafka without an online upgrade.
func (s *shard) heartbeatGroup(id string, joining bool, records *[]*consumerRecord) (*consumerGroup, *heartbeatError) {
	switch g := s.groups[id].(type) {
	case *consumerGroup:
		return g, nil
	case *classicGroup:
		if joining && len(g.members) == 0 && g.state == stateEmpty {
			*records = append(*records, classicGroupTombstone(id))
			return newConsumerGroup(id), nil
		}
		return nil, hbError(kerr.GroupIDNotFound, "Group %s is not a consumer group.", id)
	case *streamsGroup:
		return nil, hbError(kerr.GroupIDNotFound, "Group %s is not a consumer group.", id)
	}
	if !joining {
		return nil, hbError(kerr.GroupIDNotFound, "Consumer group %s not found.", id)
	}
	return newConsumerGroup(id), nil
}

// validateMemberEpoch accepts the member's epoch, epoch 0 (a fenced member
// rejoining, KAFKA-19233), or its previous epoch if what it owns is a subset
// of what it is assigned.
func validateMemberEpoch(m *consumerMember, epoch int32, owned []kmsg.ConsumerGroupHeartbeatRequestTopic) *heartbeatError {
	switch {
	case epoch == joinMemberEpoch:
		return nil
	case epoch > m.memberEpoch:
		return hbError(kerr.FencedMemberEpoch, "The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", epoch, m.memberEpoch)
	case epoch < m.memberEpoch && (epoch != m.previousMemberEpoch || !ownedSubset(owned, m.assigned)):
		return hbError(kerr.FencedMemberEpoch, "The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", epoch, m.memberEpoch)
	}
	return nil
}

func ownedSubset(owned []kmsg.ConsumerGroupHeartbeatRequestTopic, a assignment) bool {
	if owned == nil {
		return false
	}
	for _, t := range owned {
		for _, p := range t.Partitions {
			if !a.contains(t.TopicID, p) {
				return false
			}
		}
	}
	return true
}

// heartbeatMember handles a joining or heartbeating member in three steps,
// as Kafka's GroupMetadataManager: update the member, bumping the group
// epoch if its subscription (or the metadata of the subscribed topics)
// changed; compute a new target assignment if the group epoch is past the
// target's; move the member toward its target.
func (s *shard) heartbeatMember(now time.Time, client Client, req *kmsg.ConsumerGroupHeartbeatRequest) (*heartbeatOutcome, *heartbeatError) {
	cfg := s.config.ConsumerGroup
	joining := req.MemberEpoch == joinMemberEpoch
	var records []*consumerRecord
	g, e := s.heartbeatGroup(req.Group, joining, &records)
	if e != nil {
		return nil, e
	}
	memberID := req.MemberID
	if len(g.members) >= int(cfg.MaxSize) && (memberID == "" || g.members[memberID] == nil) {
		return nil, hbError(kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of %d members.", cfg.MaxSize)
	}
	if memberID == "" {
		memberID = s.config.uuid() // v0: the coordinator names the member
	}
	changes := make(memberChanges)
	member, isNew, e := s.heartbeatingMember(g, req, memberID, changes, &records)
	if e != nil {
		return nil, e
	}

	// 1. Update the member.
	updated := member.clone()
	if req.InstanceID != nil {
		updated.instanceID = req.InstanceID
	}
	if req.RackID != nil {
		updated.rackID = req.RackID
	}
	if req.RebalanceTimeoutMillis != -1 {
		updated.rebalanceTimeoutMs = req.RebalanceTimeoutMillis
	}
	if req.ServerAssignor != nil {
		updated.serverAssignor = req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		updated.subscribedTopicNames = sortedUnique(req.SubscribedTopicNames)
	}
	if req.SubscribedTopicRegex != nil {
		updated.subscribedTopicRegex = *req.SubscribedTopicRegex
	}
	updated.clientID, updated.clientHost = client.ID, client.Host
	changes[updated.id] = updated
	if isNew || !updated.sameMetadata(member) {
		records = append(records, memberMetadataRecord(g.id, updated))
	}
	namesChanged := !slices.Equal(updated.subscribedTopicNames, member.subscribedTopicNames)
	regexChanged := updated.subscribedTopicRegex != member.subscribedTopicRegex
	regexes, regexRecords, regexesMoved, e := s.updateRegexes(now, g, member, updated)
	if e != nil {
		return nil, e
	}
	records = append(records, regexRecords...)

	bump := g.groupEpoch == 0 || namesChanged || regexChanged || regexesMoved
	metadata := s.subscriptionMetadata(g.subscribedTopicCounts(changes, regexes))
	if regexes == nil {
		regexes = g.resolvedRegexes
	}
	if !equalTopicInfos(metadata, g.subscriptionMetadata) {
		records = append(records, subscriptionMetadataRecord(g.id, metadata))
		bump = true
	}
	groupEpoch := g.groupEpoch
	if bump {
		groupEpoch++
		records = append(records, groupEpochRecord(g.id, groupEpoch))
	}

	// 2. Compute the target assignment if the group epoch moved past it.
	targetEpoch := g.targetAssignmentEpoch
	target := g.targetFor(updated.id, updated.instanceID)
	if groupEpoch > targetEpoch {
		targets, targetRecords := s.computeTargetAssignment(g, groupEpoch, changes, metadata, regexes)
		records = append(records, targetRecords...)
		targetEpoch, target = groupEpoch, targets[updated.id]
	}

	// 3. Reconcile the member with its target.
	next := updated
	subscriptionChanged := namesChanged || regexChanged
	if !updated.isReconciledTo(targetEpoch) || subscriptionChanged {
		r := reconciliation{
			targetEpoch:         targetEpoch,
			target:              target,
			ownerEpoch:          g.partitionEpoch,
			owned:               req.Topics,
			subscribed:          subscribedTopicIDs(updated, metadata, regexes),
			enforceSubscription: subscriptionChanged,
		}
		if next, e = r.next(updated); e != nil {
			return nil, e
		}
	}
	assignmentChanged := isNew || !next.sameAssignment(updated)
	if assignmentChanged {
		records = append(records, currentAssignmentRecord(g.id, next))
	}

	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.MemberID = stringPtr(next.id)
	resp.MemberEpoch = next.memberEpoch
	resp.HeartbeatIntervalMillis = cfg.HeartbeatIntervalMs
	// The assignment goes out when the member joins, sends a full request
	// (after an error it sends every field), or when it changed.
	isFull := req.RebalanceTimeoutMillis != -1 && (req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil
	if joining || isFull || !next.assigned.equal(member.assigned) {
		resp.Assignment = heartbeatAssignment(next.assigned)
	}
	out := &heartbeatOutcome{records: records, resp: resp}
	if _, stored := s.groups[g.id].(*consumerGroup); stored {
		out.group = g
	}
	out.afterWrite = func(now time.Time) {
		s.scheduleConsumerSession(now, g.id, next.id)
		if assignmentChanged {
			if next.state == memberUnrevokedPartitions {
				s.scheduleConsumerRebalance(now, g.id, next)
			} else {
				s.timers.cancel(timerKey{kind: timerConsumerRebalance, group: g.id, member: next.id})
			}
		}
	}
	return out, nil
}

// heartbeatingMember finds or creates the member a heartbeat is from. A
// static member joining under a new id replaces the member holding its
// instance id, provided that one left with epoch -2: the records replacing
// it are added and the replaced member marked removed in changes.
func (s *shard) heartbeatingMember(g *consumerGroup, req *kmsg.ConsumerGroupHeartbeatRequest, memberID string, changes memberChanges, records *[]*consumerRecord) (m *consumerMember, isNew bool, e *heartbeatError) {
	joining := req.MemberEpoch == joinMemberEpoch
	if req.InstanceID == nil {
		m = g.members[memberID]
		if m == nil {
			if !joining {
				return nil, false, hbError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
			}
			return newConsumerMember(memberID), true, nil
		}
		return m, false, validateMemberEpoch(m, req.MemberEpoch, req.Topics)
	}
	instanceID := *req.InstanceID
	existing := g.staticMember(instanceID)
	if !joining {
		switch {
		case existing == nil:
			return nil, false, hbError(kerr.UnknownMemberID, "Instance id %s is unknown.", instanceID)
		case existing.id != memberID:
			return nil, false, hbError(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, instanceID, existing.id)
		}
		return existing, false, validateMemberEpoch(existing, req.MemberEpoch, req.Topics)
	}
	if existing == nil {
		if m = g.members[memberID]; m != nil {
			return m, false, nil
		}
		return newConsumerMember(memberID), true, nil
	}
	if existing.memberEpoch != leaveStaticMemberEpoch {
		return nil, false, hbError(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, instanceID, existing.id)
	}
	replacement := existing.clone()
	replacement.id = memberID
	replacement.memberEpoch, replacement.previousMemberEpoch = 0, 0
	*records = append(*records, memberTombstones(g.id, existing.id)...)
	*records = append(*records,
		memberMetadataRecord(g.id, replacement),
		targetMemberRecord(g.id, replacement.id, g.target[existing.id]),
		currentAssignmentRecord(g.id, replacement))
	changes[existing.id] = nil
	s.log.Info("static member rejoins the consumer group, replacing its previous member", "group", g.id, "instance", instanceID, "member", memberID, "replaced", existing.id)
	return replacement, false, nil
}

// updateRegexes handles a member's change of regular expression and the
// periodic refresh of the group's: it returns the resolved regexes as they
// will be (nil when they do not change), the records persisting them, and
// whether any subscribed regex now matches other topics.
func (s *shard) updateRegexes(now time.Time, g *consumerGroup, member, updated *consumerMember) (map[string]resolvedRegex, []*consumerRecord, bool, *heartbeatError) {
	nowMs := now.UnixMilli()
	var records []*consumerRecord
	var regexes map[string]resolvedRegex
	set := func(regex string, r *resolvedRegex) {
		if regexes == nil {
			regexes = maps.Clone(g.resolvedRegexes)
		}
		if r == nil {
			delete(regexes, regex)
			records = append(records, tombstone(recordTypeConsumerGroupRegex, g.id, regex))
			return
		}
		regexes[regex] = *r
		records = append(records, regexRecord(g.id, regex, *r))
	}
	oldRegex, newRegex := member.subscribedTopicRegex, updated.subscribedTopicRegex
	justResolved := ""
	if oldRegex != newRegex {
		if oldRegex != "" && g.numRegexSubscribers(oldRegex) == 1 {
			set(oldRegex, nil)
		}
		if _, resolved := g.resolvedRegexes[newRegex]; newRegex != "" && !resolved && (regexes == nil || regexes[newRegex].timestampMs == 0) {
			r, e := s.resolveRegex(newRegex, nowMs)
			if e != nil {
				return nil, nil, false, e
			}
			set(newRegex, &r)
			justResolved = newRegex
		}
	}
	moved := false
	if nowMs-g.lastRegexRefreshMs >= regexRefreshIntervalMs {
		// Every regex a member subscribes to is resolved, and a resolved
		// regex is dropped with its last subscriber: the keys are the
		// subscribed regexes.
		current := g.resolvedRegexes
		if regexes != nil {
			current = regexes
		}
		subscribed := make(map[string]bool, len(current))
		for regex := range current {
			if regex != justResolved {
				subscribed[regex] = true
			}
		}
		if len(subscribed) > 0 {
			g.lastRegexRefreshMs = nowMs // soft state: not persisted, not undone
		}
		for _, regex := range sortedKeys(subscribed) {
			r, e := s.resolveRegex(regex, nowMs)
			if e != nil {
				continue // validated when subscribed; a config change cannot break it
			}
			if !slices.Equal(r.topics, g.resolvedRegexes[regex].topics) {
				set(regex, &r)
				moved = true
			}
		}
	}
	return regexes, records, moved, nil
}

// resolveRegex matches a regular expression against every topic name; it
// must match the whole name, as Java's Matcher.matches. Go's regexp is RE2,
// the syntax Kafka's RE2/J accepts.
func (s *shard) resolveRegex(regex string, nowMs int64) (resolvedRegex, *heartbeatError) {
	if len(regex) > maxRegexBytes {
		return resolvedRegex{}, hbError(kerr.InvalidRegularExpression, "SubscribedTopicRegex is longer than %d bytes.", maxRegexBytes)
	}
	re, err := compileAnchored(regex)
	if err != nil {
		return resolvedRegex{}, hbError(kerr.InvalidRegularExpression, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", regex, err)
	}
	r := resolvedRegex{version: -1, timestampMs: nowMs}
	if tm := s.config.topicMetadata(); tm != nil {
		for _, name := range tm.TopicNames() {
			if re.MatchString(name) {
				r.topics = append(r.topics, name)
			}
		}
	}
	return r, nil
}

// compileAnchored compiles regex to match whole strings only.
func compileAnchored(regex string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(regex); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + regex + ")$")
}

// subscriptionMetadata returns the ID and partition count of every topic in
// counts that exists.
func (s *shard) subscriptionMetadata(counts map[string]int) map[string]topicInfo {
	out := make(map[string]topicInfo, len(counts))
	tm := s.config.topicMetadata()
	if tm == nil {
		return out
	}
	for name := range counts {
		if id, partitions, ok := tm.TopicInfo(name); ok && partitions > 0 {
			out[name] = topicInfo{id: id, partitions: partitions}
		}
	}
	return out
}

func equalTopicInfos(a, b map[string]topicInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for name, t := range a {
		if u, ok := b[name]; !ok || u != t {
			return false
		}
	}
	return true
}

// subscribedTopicIDs returns the IDs of the existing topics m subscribes to
// by name or regex.
func subscribedTopicIDs(m *consumerMember, metadata map[string]topicInfo, regexes map[string]resolvedRegex) map[[16]byte]bool {
	out := make(map[[16]byte]bool)
	add := func(name string) {
		if t, ok := metadata[name]; ok {
			out[t.id] = true
		}
	}
	for _, name := range m.subscribedTopicNames {
		add(name)
	}
	if m.subscribedTopicRegex != "" {
		for _, name := range regexes[m.subscribedTopicRegex].topics {
			add(name)
		}
	}
	return out
}

// computeTargetAssignment runs the group's assignor over the members as
// changes leave them, returning every member's target and the records of
// the targets that changed, then the new target epoch.
func (s *shard) computeTargetAssignment(g *consumerGroup, epoch int32, changes memberChanges, metadata map[string]topicInfo, regexes map[string]resolvedRegex) (map[string]assignment, []*consumerRecord) {
	spec := assignmentSpec{topics: make(map[[16]byte]int32, len(metadata))}
	for _, t := range metadata {
		spec.topics[t.id] = t.partitions
	}
	g.eachMember(changes, func(m *consumerMember) {
		ids := subscribedTopicIDs(m, metadata, regexes)
		subscribed := make([][16]byte, 0, len(ids))
		for id := range ids {
			subscribed = append(subscribed, id)
		}
		sortTopicIDs(subscribed)
		spec.members = append(spec.members, assignmentMember{
			id:         m.id,
			instanceID: m.instanceID,
			subscribed: subscribed,
			current:    g.targetFor(m.id, m.instanceID),
		})
	})
	name := g.preferredAssignor(changes)
	supported := s.config.ConsumerGroup.assignorNames()
	if !slices.Contains(supported, name) {
		name = supported[0]
	}
	targets := assignorByName(name).assign(spec)
	var records []*consumerRecord
	for _, m := range spec.members {
		a := targets[m.id]
		if old, ok := g.target[m.id]; !ok || !old.equal(a) {
			records = append(records, targetMemberRecord(g.id, m.id, a))
		}
	}
	records = append(records, targetEpochRecord(g.id, epoch))
	s.log.Info("computed a new target assignment", "group", g.id, "epoch", epoch, "assignor", name, "members", len(spec.members))
	return targets, records
}

func heartbeatAssignment(a assignment) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	out := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
	out.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
	for _, t := range a.sortedTopics() {
		rt := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
		rt.TopicID, rt.Partitions = t, slices.Clone(a[t])
		out.Topics = append(out.Topics, rt)
	}
	return &out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
