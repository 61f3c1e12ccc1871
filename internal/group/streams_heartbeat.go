package group

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsOutcome is what a streams heartbeat computed: records to append,
// the response to send once they are, and the internal topics to create.
type streamsOutcome struct {
	group      *streamsGroup // nil for a group the records create
	records    []*streamsRecord
	resp       *kmsg.StreamsGroupHeartbeatResponse
	toCreate   []StreamsTopicToCreate
	afterWrite func(now time.Time)
}

// streamsGroupHeartbeat handles StreamsGroupHeartbeat.
//
// Behavior: epoch 0 joins with the application's topology, -1 leaves, -2
// has a static member leave for now; any other epoch must be the member's
// current one, or its previous one when it owns only tasks it is assigned.
// The first member's topology becomes the group's; its topics are
// configured against the metadata on every heartbeat (a change of their
// metadata bumps the group epoch), missing internal topics are returned to
// be created, and problems are reported as statuses. A new target
// assignment is computed whenever the group epoch moves past it.
func (s *shard) streamsGroupHeartbeat(now time.Time, client Client, req *kmsg.StreamsGroupHeartbeatRequest, respond func(*kmsg.StreamsGroupHeartbeatResponse, []StreamsTopicToCreate)) {
	defer s.checkInvariants()
	fail := func(e *heartbeatError) {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = e.code
		if e.message != "" {
			resp.ErrorMessage = stringPtr(e.message)
		}
		s.reply(func() { respond(resp, nil) })
	}
	if e := validateStreamsHeartbeat(req); e != nil {
		fail(e)
		return
	}
	var out *streamsOutcome
	var e *heartbeatError
	if req.MemberEpoch == leaveMemberEpoch || req.MemberEpoch == leaveStaticMemberEpoch {
		out, e = s.streamsHeartbeatLeave(req)
	} else {
		out, e = s.streamsHeartbeatMember(now, client, req)
	}
	if e != nil {
		fail(e)
		return
	}
	s.writeStreamsRecords(now, out.group, out.records, func(now time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to append streams group records", "group", req.Group, "err", err)
			fail(&heartbeatError{code: appendErrorCode(err)})
			return
		}
		if out.afterWrite != nil {
			out.afterWrite(now)
		}
		s.reply(func() { respond(out.resp, out.toCreate) })
	})
}

// validateStreamsHeartbeat checks the request as Kafka's
// GroupCoordinatorService does before it reaches a group.
func validateStreamsHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) *heartbeatError {
	invalid := func(msg string) *heartbeatError { return hbError(kerr.InvalidRequest, "%s", msg) }
	switch {
	case req.MemberID == "":
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
		case len(req.ActiveTasks) > 0:
			return invalid("ActiveTasks must be empty when (re-)joining.")
		case len(req.StandbyTasks) > 0:
			return invalid("StandbyTasks must be empty when (re-)joining.")
		case len(req.WarmupTasks) > 0:
			return invalid("WarmupTasks must be empty when (re-)joining.")
		case req.Topology == nil:
			return invalid("Topology must be non-null when (re-)joining.")
		}
		if e := validateTopologyRequest(req.Topology); e != nil {
			return e
		}
	case req.MemberEpoch == leaveStaticMemberEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < leaveStaticMemberEpoch:
		return invalid(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch))
	}
	if req.ActiveTasks != nil || req.StandbyTasks != nil || req.WarmupTasks != nil {
		if req.ActiveTasks == nil || req.StandbyTasks == nil || req.WarmupTasks == nil {
			return invalid("If one task-type is non-null, all must be non-null.")
		}
	}
	if req.MemberEpoch != joinMemberEpoch && req.Topology != nil {
		return invalid("Topology can only be provided when (re-)joining.")
	}
	return nil
}

// streamsHeartbeatGroup returns the streams group a heartbeat is for. A
// joining member creates it, replacing an empty classic group holding only
// offsets (whose GroupMetadata tombstone is written first).
func (s *shard) streamsHeartbeatGroup(id string, joining bool) (*streamsGroup, []KV, *heartbeatError) {
	switch g := s.groups[id].(type) {
	case *streamsGroup:
		return g, nil, nil
	case *classicGroup:
		if joining && len(g.members) == 0 && g.state == stateEmpty {
			return newStreamsGroup(id), []KV{groupMetadataKV(id, nil)}, nil
		}
		return nil, nil, hbError(kerr.GroupIDNotFound, "Group %s is not a streams group.", id)
	case nil:
		if !joining {
			return nil, nil, hbError(kerr.GroupIDNotFound, "Streams group %s not found.", id)
		}
		return newStreamsGroup(id), nil, nil
	}
	return nil, nil, hbError(kerr.GroupIDNotFound, "Group %s is not a streams group.", id)
}

func validateStreamsMemberEpoch(m *streamsMember, epoch int32, owned streamsTasks, known bool) *heartbeatError {
	switch {
	case epoch == joinMemberEpoch:
		return nil
	case epoch > m.memberEpoch:
		return hbError(kerr.FencedMemberEpoch, "The streams group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its tasks and rejoin.", epoch, m.memberEpoch)
	case epoch < m.memberEpoch:
		subset := known && len(owned.active.minus(m.assigned.active)) == 0 && len(owned.standby.minus(m.assigned.standby)) == 0 &&
			len(owned.warmup.minus(m.assigned.warmup)) == 0
		if epoch != m.previousMemberEpoch || !subset {
			return hbError(kerr.FencedMemberEpoch, "The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its tasks and rejoin.", epoch, m.memberEpoch)
		}
	}
	return nil
}

// streamsHeartbeatMember handles a joining or heartbeating member: update
// the member and the group's topology, configure the topology's topics,
// bump the group epoch if anything the assignment depends on changed,
// compute a new target assignment if the group epoch moved past it, and
// move the member toward its target.
func (s *shard) streamsHeartbeatMember(now time.Time, client Client, req *kmsg.StreamsGroupHeartbeatRequest) (*streamsOutcome, *heartbeatError) {
	cfg := s.config.StreamsGroup
	joining := req.MemberEpoch == joinMemberEpoch
	g, prefix, e := s.streamsHeartbeatGroup(req.Group, joining)
	if e != nil {
		return nil, e
	}
	var records []*streamsRecord
	for _, kv := range prefix {
		records = append(records, &streamsRecord{raw: &kv})
	}
	owned, known := ownedTasksOf(req)
	member, isNew, replaced, e := s.streamsHeartbeatingMember(g, req, owned, known, cfg, &records)
	if e != nil {
		return nil, e
	}

	// 1. Update the member and the topology.
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
	if req.ProcessID != nil {
		updated.processID = *req.ProcessID
	}
	if req.UserEndpoint != nil {
		updated.userEndpoint = &streamsEndpoint{host: req.UserEndpoint.Host, port: req.UserEndpoint.Port}
	}
	if req.ClientTags != nil {
		updated.clientTags = make([]keyValue, 0, len(req.ClientTags))
		for _, t := range req.ClientTags {
			updated.clientTags = append(updated.clientTags, keyValue{t.Key, t.Value})
		}
		slices.SortFunc(updated.clientTags, func(a, b keyValue) int { return strings.Compare(a.key, b.key) })
	}
	updated.clientID, updated.clientHost = client.ID, client.Host

	topology := g.topology
	topologyChanged := false
	if req.Topology != nil {
		requested := topologyFromRequest(req.Topology)
		updated.topologyEpoch = requested.epoch
		switch {
		case topology == nil:
			topology, topologyChanged = requested, true
		case requested.epoch > topology.epoch || (requested.epoch == topology.epoch && !requested.equal(topology)):
			if !onlyMember(g, updated.id, replaced) {
				return nil, hbError(kerr.InvalidRequest, "Topology updates are not supported yet.")
			}
			topology, topologyChanged = requested, true
		}
		if topologyChanged {
			records = append(records, streamsTopologyRecord(g.id, topology))
		}
	}
	if isNew || !updated.sameMetadata(member) {
		records = append(records, streamsMemberRecord(g.id, updated))
	}

	// 2. Configure the topology's topics; bump the group epoch if the
	// members, the topology or the topics' metadata changed.
	tm := s.config.topicMetadata()
	hash := streamsMetadataHash(topology, tm)
	configured := g.configured
	if topologyChanged || configured == nil || hash != g.metadataHash || configured.topologyEpoch != topology.epoch {
		configured = configureStreamsTopology(topology, tm)
	}
	// Task offsets are soft state, kept as reported; a warm-up task of the
	// member that has caught up triggers a rebalance so that it can move.
	warmedUp := false
	if offsets := taskOffsetsOf(req.TaskOffsets); offsets != nil {
		g.taskOffsets[updated.id] = offsets
		if caughtUp := g.caughtUpFunc(nil, cfg.AcceptableRecoveryLag); caughtUp != nil {
			for t := range g.targetFor(updated.id, updated.instanceID).warmup.each() {
				if caughtUp(updated.processID, t) {
					warmedUp = true
				}
			}
		}
	}
	if offsets := taskOffsetsOf(req.TaskEndOffsets); offsets != nil {
		g.taskEndOffsets[updated.id] = offsets
	}
	validated := int32(-1)
	if configured.ready() {
		validated = topology.epoch
	}
	bump := g.groupEpoch == 0 || isNew || warmedUp || topologyChanged || hash != g.metadataHash || updated.processID != member.processID ||
		!equalStringPtr(updated.rackID, member.rackID) || !slices.Equal(updated.clientTags, member.clientTags) || validated != g.validatedTopologyEpoch
	groupEpoch := g.groupEpoch
	if bump {
		groupEpoch++
		records = append(records, streamsGroupMetadataRecord(g.id, groupEpoch, hash, validated))
	}

	// 3. Compute the target assignment if the group epoch moved past it.
	// A new group's first one waits for more members: until then every
	// member is assigned nothing, and a timer bumps the group epoch.
	_, stored := s.groups[g.id].(*streamsGroup)
	delayedUntil := g.assignmentDelayedUntil
	if !stored && cfg.InitialRebalanceDelayMs > 0 {
		delayedUntil = now.Add(time.Duration(cfg.InitialRebalanceDelayMs) * time.Millisecond)
	}
	delayed := now.Before(delayedUntil)
	targetEpoch := g.targetAssignmentEpoch
	target := g.targetFor(updated.id, updated.instanceID)
	if groupEpoch > targetEpoch {
		var targets map[string]streamsTasks
		var targetRecords []*streamsRecord
		targets, targetRecords = s.computeStreamsTarget(g, groupEpoch, updated, replaced, configured, delayed)
		records = append(records, targetRecords...)
		targetEpoch, target = groupEpoch, targets[updated.id]
	}

	// The tasks the member says it owns must exist in a ready topology.
	if known && configured.ready() {
		if e := validateOwnedTasks(owned, configured); e != nil {
			return nil, e
		}
	}

	// 4. Reconcile the member with its target.
	next := updated
	if !(updated.state == memberStable && updated.memberEpoch == targetEpoch) {
		r := streamsReconciliation{
			targetEpoch: targetEpoch,
			target:      target,
			activeOwner: func(t taskID) string { return g.activeOwners[t] },
			owned:       owned,
			known:       known,
		}
		if next, e = r.next(updated); e != nil {
			return nil, e
		}
	}
	assignmentChanged := isNew || !next.sameAssignment(updated)
	if assignmentChanged {
		records = append(records, streamsCurrentAssignmentRecord(g.id, next))
	}

	if req.ShutdownApplication && !g.shutdownRequested {
		s.log.Info("a streams group member requested the shutdown of the application", "group", g.id, "member", next.id)
		g.shutdownRequested = true // soft state, as in Kafka
	}
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	resp.MemberID = next.id
	resp.MemberEpoch = next.memberEpoch
	resp.HeartbeatIntervalMillis = cfg.HeartbeatIntervalMs
	resp.AcceptableRecoveryLag = cfg.AcceptableRecoveryLag
	resp.AcceptableRecoveryLagLegacy = int32(min(cfg.AcceptableRecoveryLag, 1<<31-1))
	resp.TaskOffsetIntervalMillis = cfg.TaskOffsetIntervalMs
	resp.Status = streamsStatuses(g, next, topology, configured)
	if delayed {
		resp.Status = append(resp.Status, kmsg.StreamsGroupHeartbeatResponseStatus{StatusCode: streamsStatusAssignmentDelayed,
			StatusDetail: "Assignment delayed due to the configured initial rebalance delay."})
	}
	if joining || !next.assigned.equal(member.assigned) || (known && !owned.equal(next.assigned)) {
		resp.ActiveTasks = taskSetToWire(next.assigned.active)
		resp.StandbyTasks = taskSetToWire(next.assigned.standby)
		resp.WarmupTasks = taskSetToWire(next.assigned.warmup)
	}
	// The endpoint epoch moves with every member's assignment, so that
	// members learn where the partitions are for interactive queries.
	endpointEpoch := g.endpointEpoch
	if assignmentChanged {
		endpointEpoch++
	}
	resp.EndpointInformationEpoch = endpointEpoch
	if req.EndpointInformationEpoch != endpointEpoch {
		resp.PartitionsByUserEndpoint = s.partitionsByUserEndpoint(g, next, topology, configured)
	}

	// The caller owns the list it gets (the API layer filters it in place);
	// configured, kept by the group, keeps its own.
	out := &streamsOutcome{records: records, resp: resp, toCreate: slices.Clone(configured.toCreate)}
	if stored {
		out.group = g
	}
	out.afterWrite = func(now time.Time) {
		if stored, ok := s.groups[g.id].(*streamsGroup); ok {
			stored.configured = configured
			stored.endpointEpoch = endpointEpoch
			if delayed && stored.assignmentDelayedUntil.IsZero() {
				stored.assignmentDelayedUntil = delayedUntil
				s.timers.schedule(&timer{key: timerKey{kind: timerStreamsAssignmentDelay, group: g.id}, deadline: delayedUntil})
			}
		}
		s.scheduleStreamsSession(now, g.id, next.id)
		if assignmentChanged {
			if next.state == memberUnrevokedPartitions {
				s.scheduleStreamsRebalance(now, g.id, next)
			} else {
				s.timers.cancel(timerKey{kind: timerStreamsRebalance, group: g.id, member: next.id})
			}
		}
	}
	return out, nil
}

// onlyMember reports whether memberID is (or replaces) the group's only
// member, so that it may change the group's topology.
func onlyMember(g *streamsGroup, memberID, replaced string) bool {
	for id := range g.members {
		if id != memberID && id != replaced {
			return false
		}
	}
	return true
}

// streamsHeartbeatingMember finds or creates the member a heartbeat is
// from. A static member joining under a new id replaces the member that
// held its instance id and left with epoch -2; replaced names that member.
func (s *shard) streamsHeartbeatingMember(g *streamsGroup, req *kmsg.StreamsGroupHeartbeatRequest, owned streamsTasks, known bool, cfg StreamsGroupConfig, records *[]*streamsRecord) (m *streamsMember, isNew bool, replaced string, e *heartbeatError) {
	joining := req.MemberEpoch == joinMemberEpoch
	full := func() *heartbeatError {
		if len(g.members) >= int(cfg.MaxSize) {
			return hbError(kerr.GroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", cfg.MaxSize)
		}
		return nil
	}
	if req.InstanceID == nil {
		if m = g.members[req.MemberID]; m == nil {
			if !joining {
				return nil, false, "", hbError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.id)
			}
			if e := full(); e != nil {
				return nil, false, "", e
			}
			return newStreamsMember(req.MemberID), true, "", nil
		}
		return m, false, "", validateStreamsMemberEpoch(m, req.MemberEpoch, owned, known)
	}
	instanceID := *req.InstanceID
	existing := g.staticMember(instanceID)
	if !joining {
		switch {
		case existing == nil:
			return nil, false, "", hbError(kerr.UnknownMemberID, "Instance id %s is unknown.", instanceID)
		case existing.id != req.MemberID:
			return nil, false, "", hbError(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, instanceID, existing.id)
		}
		return existing, false, "", validateStreamsMemberEpoch(existing, req.MemberEpoch, owned, known)
	}
	if existing == nil {
		if m = g.members[req.MemberID]; m != nil {
			return m, false, "", nil
		}
		if e := full(); e != nil {
			return nil, false, "", e
		}
		return newStreamsMember(req.MemberID), true, "", nil
	}
	if existing.id == req.MemberID {
		return existing, false, "", nil
	}
	if existing.memberEpoch != leaveStaticMemberEpoch {
		return nil, false, "", hbError(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", req.MemberID, instanceID, existing.id)
	}
	replacement := existing.clone()
	replacement.id = req.MemberID
	replacement.memberEpoch, replacement.previousMemberEpoch = 0, 0
	*records = append(*records, streamsMemberTombstones(g.id, existing.id)...)
	*records = append(*records,
		streamsMemberRecord(g.id, replacement),
		streamsTargetRecord(g.id, replacement.id, g.target[existing.id]),
		streamsCurrentAssignmentRecord(g.id, replacement))
	s.log.Info("static member rejoins the streams group, replacing its previous member", "group", g.id, "instance", instanceID, "member", req.MemberID, "replaced", existing.id)
	return replacement, false, existing.id, nil
}

// computeStreamsTarget runs the sticky task assignor over the members as
// the heartbeat leaves them (updated in, replaced out) when the topology
// is ready and the first assignment is not delayed, and gives every member
// nothing otherwise. It returns every
// member's target and the records of those that changed, then the epoch.
func (s *shard) computeStreamsTarget(g *streamsGroup, epoch int32, updated *streamsMember, replaced string, configured *configuredTopology, delayed bool) (map[string]streamsTasks, []*streamsRecord) {
	var assignees []streamsAssignee
	add := func(m *streamsMember) {
		assignees = append(assignees, streamsAssignee{id: m.id, processID: m.processID, previous: g.targetFor(m.id, m.instanceID)})
	}
	for id, m := range g.members {
		if id != updated.id && id != replaced {
			add(m)
		}
	}
	add(updated)
	sortAssignees(assignees)
	var targets map[string]streamsTasks
	if configured.ready() && !delayed {
		cfg := s.config.StreamsGroup
		targets = assignStreamsTasks(streamsAssignmentSpec{
			members:     assignees,
			numTasks:    configured.numTasks,
			stateful:    configured.stateful,
			numStandbys: int(cfg.NumStandbyReplicas),
			numWarmups:  int(cfg.NumWarmupReplicas),
			caughtUp:    g.caughtUpFunc(assignees, cfg.AcceptableRecoveryLag),
		})
	} else {
		targets = make(map[string]streamsTasks, len(assignees))
		for _, a := range assignees {
			targets[a.id] = streamsTasks{active: taskSet{}, standby: taskSet{}, warmup: taskSet{}}
		}
	}
	var records []*streamsRecord
	for _, a := range assignees {
		if old, ok := g.target[a.id]; !ok || !old.equal(targets[a.id]) {
			records = append(records, streamsTargetRecord(g.id, a.id, targets[a.id]))
		}
	}
	records = append(records, streamsTargetEpochRecord(g.id, epoch))
	s.log.Info("computed a new streams target assignment", "group", g.id, "epoch", epoch, "members", len(assignees), "ready", configured.ready(), "delayed", delayed)
	return targets, records
}

// validateOwnedTasks is Kafka's throwIfRequestContainsInvalidTasks.
func validateOwnedTasks(owned streamsTasks, c *configuredTopology) *heartbeatError {
	for _, s := range []taskSet{owned.active, owned.standby, owned.warmup} {
		for t := range s.each() {
			n, ok := c.numTasks[t.subtopology]
			if !ok {
				return hbError(kerr.InvalidRequest, "Subtopology %s does not exist in the topology.", t.subtopology)
			}
			if t.partition < 0 || t.partition >= n {
				return hbError(kerr.InvalidRequest, "Task %d for subtopology %s is invalid. Number of tasks for this subtopology: %d", t.partition, t.subtopology, n)
			}
		}
	}
	return nil
}

// streamsStatuses are the statuses a member is told: its topology is
// older than the group's, the topology cannot run (missing or wrongly
// partitioned topics, internal topics still being created), or a member
// asked the application to shut down.
func streamsStatuses(g *streamsGroup, m *streamsMember, topology *streamsTopology, c *configuredTopology) []kmsg.StreamsGroupHeartbeatResponseStatus {
	out := []kmsg.StreamsGroupHeartbeatResponseStatus{}
	add := func(code int8, detail string) {
		out = append(out, kmsg.StreamsGroupHeartbeatResponseStatus{StatusCode: code, StatusDetail: detail})
	}
	if topology != nil && m.topologyEpoch != topology.epoch {
		add(streamsStatusStaleTopology, fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", m.topologyEpoch, topology.epoch))
	}
	if c != nil && c.status != -1 {
		add(c.status, c.statusDetail)
	}
	if g.shutdownRequested {
		add(streamsStatusShutdownApplication, "A KafkaStreams instance encountered a fatal error and requested a shutdown for the entire application.")
	}
	return out
}

// partitionsByUserEndpoint lists, for every member with an endpoint for
// interactive queries, the input partitions its active and standby tasks
// process.
func (s *shard) partitionsByUserEndpoint(g *streamsGroup, updated *streamsMember, topology *streamsTopology, c *configuredTopology) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	if c == nil || c.inputTopics == nil {
		return out
	}
	members := make(map[string]*streamsMember, len(g.members)+1)
	for id, m := range g.members {
		members[id] = m
	}
	members[updated.id] = updated
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range members {
			if !yield(id) {
				return
			}
		}
	}) {
		m := members[id]
		if m.userEndpoint == nil {
			continue
		}
		e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
		e.UserEndpoint = kmsg.Endpoint{Host: m.userEndpoint.host, Port: m.userEndpoint.port}
		partitions := func(tasks taskSet) map[string][]int32 {
			byTopic := make(map[string][]int32)
			for t := range tasks.each() {
				for _, topic := range c.inputTopics[t.subtopology] {
					byTopic[topic] = append(byTopic[topic], t.partition)
				}
			}
			return byTopic
		}
		active, standby := partitions(m.assigned.active), partitions(m.assigned.standby)
		for _, topic := range sortedKeys(active) {
			e.ActivePartitions = append(e.ActivePartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{Topic: topic, Partitions: active[topic]})
		}
		for _, topic := range sortedKeys(standby) {
			e.StandbyPartitions = append(e.StandbyPartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{Topic: topic, Partitions: standby[topic]})
		}
		out = append(out, e)
	}
	return out
}
