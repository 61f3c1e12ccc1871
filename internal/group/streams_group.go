package group

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsGroup is a group of Kafka Streams clients using the streams
// rebalance protocol of KIP-1071 (Kafka's StreamsGroup). The coordinator
// holds the application's topology, as the first member to join sent it,
// creates its internal topics, assigns tasks (a subtopology and a
// partition) with the sticky task assignor (streams_assignor.go) and moves
// each member toward its target one heartbeat at a time, as a consumer
// group does with partitions: an active task is given to a member only once
// its previous owner has revoked it.
//
// Every persisted field is the replay of records written to
// __consumer_offsets (streams_records.go); a heartbeat computes records
// from the group as it is, and the group changes only when they are
// applied, after the append.
type streamsGroup struct {
	id string
	// groupEpoch moves whenever membership, the topology or the metadata of
	// the topology's topics change.
	// Invariant: targetAssignmentEpoch <= groupEpoch.
	groupEpoch int32
	// metadataHash digests the metadata of every topic the topology names
	// as of the last group epoch (streamsMetadataHash).
	metadataHash int64
	// validatedTopologyEpoch is the topology epoch whose topics were last
	// found in a valid configuration, -1 for none.
	validatedTopologyEpoch int32
	// targetAssignmentEpoch is the group epoch target was computed at.
	targetAssignmentEpoch int32
	// topology is nil until the first member joins with one.
	topology *streamsTopology

	members map[string]*streamsMember
	// staticMembers maps group.instance.id to member id.
	// Invariant: staticMembers[*m.instanceID] == m.id for every static m.
	staticMembers map[string]string
	// target holds each member's target tasks.
	target map[string]streamsTasks
	// activeOwners holds, for every active task some member is assigned or
	// still revoking, that member's id.
	// Invariant: an active task is in at most one member's assigned or
	// pending-revocation active tasks, and activeOwners holds exactly those.
	activeOwners map[taskID]string

	// The fields below are soft state, not persisted.

	// configured is the topology as configured against the metadata at
	// the last group epoch bump (nil: not computed since load).
	configured *configuredTopology
	// endpointEpoch moves whenever a member's assignment changes or a
	// member leaves, so that members learn the partitions of every
	// endpoint again.
	endpointEpoch int32
	// assignmentDelayedUntil is when a new group's first assignment may be
	// computed (group.streams.initial.rebalance.delay.ms); zero when not
	// delayed. A reload forgets it: the group was not new then.
	assignmentDelayedUntil time.Time
	// shutdownRequested is set when a member asked every client of the
	// application to shut down (KIP-1071's SHUTDOWN_APPLICATION).
	shutdownRequested bool
	// taskOffsets and taskEndOffsets hold, by member, the changelog
	// offsets of the tasks it has state for and the changelog end offsets
	// of its active tasks, as its heartbeats last reported them.
	taskOffsets    map[string]map[taskID]int64
	taskEndOffsets map[string]map[taskID]int64
	// pendingWrites counts the appends of this group's records not yet
	// done (see writeStreamsRecords).
	pendingWrites int
}

// taskID is one task: a subtopology and a partition of its input.
type taskID struct {
	subtopology string
	partition   int32
}

func newStreamsGroup(id string) *streamsGroup {
	return &streamsGroup{
		id:                     id,
		validatedTopologyEpoch: -1,
		members:                make(map[string]*streamsMember),
		staticMembers:          make(map[string]string),
		target:                 make(map[string]streamsTasks),
		activeOwners:           make(map[taskID]string),
		taskOffsets:            make(map[string]map[taskID]int64),
		taskEndOffsets:         make(map[string]map[taskID]int64),
	}
}

// caughtUpFunc returns the assignor's test of whether a process's state of
// a task is caught up: the process running it now is; another is when its
// members reported a changelog offset for it within acceptableLag of the
// end offset its active owner reported. Without any reported offset in
// the group it returns nil: nothing is known, and no warm-ups are made.
func (g *streamsGroup) caughtUpFunc(members []streamsAssignee, acceptableLag int64) func(process string, t taskID) bool {
	if len(g.taskOffsets) == 0 {
		return nil
	}
	processOf := make(map[string]string, len(members))
	for _, m := range members {
		processOf[m.id] = m.processID
	}
	for id, m := range g.members {
		if _, ok := processOf[id]; !ok {
			processOf[id] = m.processID
		}
	}
	return func(process string, t taskID) bool {
		if owner, ok := g.activeOwners[t]; ok && processOf[owner] == process {
			return true
		}
		end, endKnown := int64(0), false
		for _, offsets := range g.taskEndOffsets {
			if o, ok := offsets[t]; ok {
				end, endKnown = max(end, o), true
			}
		}
		offset, known := int64(0), false
		for id, offsets := range g.taskOffsets {
			if o, ok := offsets[t]; ok && processOf[id] == process {
				offset, known = max(offset, o), true
			}
		}
		return known && (!endKnown || end-offset <= acceptableLag)
	}
}

// taskOffsetsOf converts reported task offsets; nil stays nil (unchanged).
func taskOffsetsOf(in []kmsg.TaskOffset) map[taskID]int64 {
	if in == nil {
		return nil
	}
	out := make(map[taskID]int64, len(in))
	for _, o := range in {
		out[taskID{o.SubtopologyID, o.Partition}] = o.Offset
	}
	return out
}

// streamsGroupState is Kafka's StreamsGroupState; derived, never stored.
type streamsGroupState uint8

const (
	streamsGroupEmpty streamsGroupState = iota
	streamsGroupNotReady
	streamsGroupAssigning
	streamsGroupReconciling
	streamsGroupStable
)

var streamsGroupStateNames = [...]string{"Empty", "NotReady", "Assigning", "Reconciling", "Stable"}

func (s streamsGroupState) String() string { return streamsGroupStateNames[s] }

// state is Empty without members, NotReady while the topology is missing
// or its topics are not configured correctly, Assigning while the target
// assignment is behind the group epoch, Reconciling while a member has not
// converged on it, and Stable otherwise.
func (g *streamsGroup) state() streamsGroupState {
	switch {
	case len(g.members) == 0:
		return streamsGroupEmpty
	case g.topology == nil || g.validatedTopologyEpoch != g.topology.epoch:
		return streamsGroupNotReady
	case g.groupEpoch > g.targetAssignmentEpoch:
		return streamsGroupAssigning
	}
	for _, m := range g.members {
		if m.state != memberStable || m.memberEpoch != g.targetAssignmentEpoch {
			return streamsGroupReconciling
		}
	}
	return streamsGroupStable
}

// Group type and protocol type of streams groups, as ListGroups reports them.
const (
	groupTypeStreams    = "streams"
	streamsProtocolType = "streams"
)

func (g *streamsGroup) groupID() string          { return g.id }
func (g *streamsGroup) groupType() string        { return groupTypeStreams }
func (g *streamsGroup) stateName() string        { return g.state().String() }
func (g *streamsGroup) protocolTypeName() string { return streamsProtocolType }
func (g *streamsGroup) deletable() bool          { return len(g.members) == 0 }
func (g *streamsGroup) validateOffsetDelete() int16 {
	return 0 // offsets of topics the group consumes are refused one by one
}

func (g *streamsGroup) validateDelete() int16 {
	if len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	return 0
}

// validateOffsetCommit is Kafka's StreamsGroup.validateOffsetCommit, the
// consumer group's rule: a commit naming no member epoch is accepted while
// the group is empty (admin tools), a transactional one naming no member
// at any time; otherwise the member must exist and commit at its current
// epoch (STALE_MEMBER_EPOCH) with OffsetCommit v9+ unless transactional.
func (g *streamsGroup) validateOffsetCommit(c offsetCommitter) int16 {
	if c.generation < 0 && len(g.members) == 0 {
		return 0
	}
	if c.transactional && c.generation == -1 && c.memberID == "" && c.instanceID == nil {
		return 0
	}
	m := g.members[c.memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if !c.transactional && c.version < 9 {
		return kerr.UnsupportedVersion.Code
	}
	if c.generation != m.memberEpoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// validateOffsetFetch is Kafka's StreamsGroup.validateOffsetFetch, the
// consumer group's rule: a fetch naming neither member nor epoch is
// accepted; otherwise the member must exist at that epoch.
func (g *streamsGroup) validateOffsetFetch(memberID *string, memberEpoch int32) int16 {
	if memberID == nil && memberEpoch < 0 {
		return 0
	}
	var m *streamsMember
	if memberID != nil {
		m = g.members[*memberID]
	}
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if memberEpoch != m.memberEpoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// isSubscribedToTopic: a streams group consumes the source and repartition
// topics of its topology.
func (g *streamsGroup) isSubscribedToTopic(topic string) bool {
	if g.topology == nil || len(g.members) == 0 {
		return false
	}
	for _, st := range g.topology.subtopologies {
		if slices.Contains(st.sourceTopics, topic) {
			return true
		}
		for _, t := range st.repartitionSourceTopics {
			if t.name == topic {
				return true
			}
		}
	}
	return false
}

func (g *streamsGroup) offsetExpiryBase() (func(offsetValue) int64, bool) {
	return func(o offsetValue) int64 { return o.commitTimestampMs }, true
}

func (g *streamsGroup) staticMember(instanceID string) *streamsMember {
	if id, ok := g.staticMembers[instanceID]; ok {
		return g.members[id]
	}
	return nil
}

func (g *streamsGroup) sortedMemberIDs() []string {
	return slices.Sorted(maps.Keys(g.members))
}

// targetFor returns the target tasks of memberID; a static member replacing
// another inherits the replaced member's target.
func (g *streamsGroup) targetFor(memberID string, instanceID *string) streamsTasks {
	if instanceID != nil {
		if previous, ok := g.staticMembers[*instanceID]; ok && previous != memberID {
			return g.target[previous]
		}
	}
	return g.target[memberID]
}

func (g *streamsGroup) checkInvariants() {
	fail := func(what string) { panic(fmt.Sprintf("streams group %q: %s", g.id, what)) }
	if g.targetAssignmentEpoch > g.groupEpoch {
		fail("target assignment epoch ahead of the group epoch")
	}
	owned := make(map[taskID]string)
	for id, m := range g.members {
		if m.id != id {
			fail("member stored under another id")
		}
		if m.instanceID != nil && g.staticMembers[*m.instanceID] != id {
			fail("static member not mapped")
		}
		for _, tasks := range []taskSet{m.assigned.active, m.pendingRevocation.active} {
			for t := range tasks.each() {
				if _, dup := owned[t]; dup {
					fail(fmt.Sprintf("active task %s_%d owned twice", t.subtopology, t.partition))
				}
				owned[t] = id
			}
		}
	}
	if !maps.Equal(owned, g.activeOwners) {
		fail("active task owners out of step with the members")
	}
	for instanceID, id := range g.staticMembers {
		if m := g.members[id]; m == nil || m.instanceID == nil || *m.instanceID != instanceID {
			fail("staticMembers names a missing member")
		}
	}
}

// streamsMember is one member of a streams group, one consumer of a Kafka
// Streams client (Kafka's StreamsGroupMember): a client runs one member
// per stream thread, all with its process id. Members are values: an
// update builds a new one.
type streamsMember struct {
	id                 string
	instanceID         *string
	rackID             *string
	clientID           string
	clientHost         string
	rebalanceTimeoutMs int32
	// topologyEpoch is the epoch of the topology the member runs.
	topologyEpoch int32
	processID     string
	userEndpoint  *streamsEndpoint
	// clientTags is sorted by key.
	clientTags []keyValue

	memberEpoch         int32
	previousMemberEpoch int32
	state               memberState
	// assigned are the tasks the member may run.
	assigned streamsTasks
	// pendingRevocation are the tasks it must give up before it moves to
	// the next epoch.
	pendingRevocation streamsTasks
}

type streamsEndpoint struct {
	host string
	port uint16
}

type keyValue struct{ key, value string }

func newStreamsMember(id string) *streamsMember {
	return &streamsMember{id: id, previousMemberEpoch: -1, rebalanceTimeoutMs: -1}
}

func (m *streamsMember) clone() *streamsMember {
	c := *m
	return &c
}

// sameMetadata reports whether the fields StreamsGroupMemberMetadataValue
// stores are equal.
func (m *streamsMember) sameMetadata(o *streamsMember) bool {
	return m.id == o.id && equalStringPtr(m.instanceID, o.instanceID) && equalStringPtr(m.rackID, o.rackID) &&
		m.clientID == o.clientID && m.clientHost == o.clientHost && m.rebalanceTimeoutMs == o.rebalanceTimeoutMs &&
		m.topologyEpoch == o.topologyEpoch && m.processID == o.processID &&
		equalEndpoint(m.userEndpoint, o.userEndpoint) && slices.Equal(m.clientTags, o.clientTags)
}

// sameAssignment reports whether the fields
// StreamsGroupCurrentMemberAssignmentValue stores are equal.
func (m *streamsMember) sameAssignment(o *streamsMember) bool {
	return m.memberEpoch == o.memberEpoch && m.previousMemberEpoch == o.previousMemberEpoch && m.state == o.state &&
		m.assigned.equal(o.assigned) && m.pendingRevocation.equal(o.pendingRevocation)
}

func equalEndpoint(a, b *streamsEndpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// taskSet maps subtopology ids to partitions. Each partition list is
// sorted, free of duplicates and non-empty. Sets are never modified once
// built; every change builds a new one.
type taskSet map[string][]int32

// newTaskSet builds a set from unsorted partition lists, dropping empty
// subtopologies and duplicates.
func newTaskSet(in map[string][]int32) taskSet {
	out := make(taskSet, len(in))
	for st, ps := range in {
		if len(ps) == 0 {
			continue
		}
		c := slices.Clone(ps)
		slices.Sort(c)
		out[st] = slices.Compact(c)
	}
	return out
}

func taskSetOf(tasks []taskID) taskSet {
	raw := make(map[string][]int32)
	for _, t := range tasks {
		raw[t.subtopology] = append(raw[t.subtopology], t.partition)
	}
	return newTaskSet(raw)
}

func (s taskSet) equal(o taskSet) bool {
	if len(s) != len(o) {
		return false
	}
	for st, ps := range s {
		if !slices.Equal(ps, o[st]) {
			return false
		}
	}
	return true
}

func (s taskSet) contains(t taskID) bool {
	_, found := slices.BinarySearch(s[t.subtopology], t.partition)
	return found
}

func (s taskSet) size() int {
	n := 0
	for _, ps := range s {
		n += len(ps)
	}
	return n
}

// each yields the tasks in subtopology, then partition order.
func (s taskSet) each() func(yield func(taskID) bool) {
	return func(yield func(taskID) bool) {
		for _, st := range slices.Sorted(maps.Keys(s)) {
			for _, p := range s[st] {
				if !yield(taskID{st, p}) {
					return
				}
			}
		}
	}
}

// minus returns the tasks of s not in o.
func (s taskSet) minus(o taskSet) taskSet {
	var out []taskID
	for t := range s.each() {
		if !o.contains(t) {
			out = append(out, t)
		}
	}
	return taskSetOf(out)
}

// intersect returns the tasks in both s and o.
func (s taskSet) intersect(o taskSet) taskSet {
	var out []taskID
	for t := range s.each() {
		if o.contains(t) {
			out = append(out, t)
		}
	}
	return taskSetOf(out)
}

// streamsTasks are a member's tasks of each kind (Kafka's TasksTuple).
type streamsTasks struct {
	active  taskSet
	standby taskSet
	warmup  taskSet
}

func (t streamsTasks) equal(o streamsTasks) bool {
	return t.active.equal(o.active) && t.standby.equal(o.standby) && t.warmup.equal(o.warmup)
}

func (t streamsTasks) isEmpty() bool {
	return len(t.active) == 0 && len(t.standby) == 0 && len(t.warmup) == 0
}
