package group

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// consumerGroup is a group using the consumer rebalance protocol of KIP-848
// (Kafka's ConsumerGroup). The coordinator computes a target assignment with
// a server-side assignor whenever the group epoch moves past the target's
// epoch, and each member converges on its target one heartbeat at a time:
// partitions are revoked from their owner before another member gets them.
//
// Every field is the replay of records written to __consumer_offsets
// (consumer_records.go); a heartbeat computes records from the group as it
// is and the group changes only when they are applied, after the append.
type consumerGroup struct {
	id string
	// groupEpoch moves whenever membership, subscriptions or the metadata
	// of the subscribed topics change.
	// Invariant: targetAssignmentEpoch <= groupEpoch.
	groupEpoch int32
	// targetAssignmentEpoch is the group epoch target was computed at.
	targetAssignmentEpoch int32

	members map[string]*consumerMember
	// staticMembers maps group.instance.id to member id.
	// Invariant: staticMembers[*m.instanceID] == m.id for every static m.
	staticMembers map[string]string
	// target holds each member's target assignment.
	target map[string]assignment
	// partitionEpochs holds, for every partition some member is assigned or
	// still revoking, the epoch of that member.
	// Invariant: a partition is in at most one member's assigned or
	// pendingRevocation, and partitionEpochs holds exactly those partitions.
	partitionEpochs map[partitionKey]int32
	// subscriptionMetadata is the metadata of the subscribed topics that
	// exist, by name, as last persisted.
	subscriptionMetadata map[string]topicInfo
	// resolvedRegexes holds the topics each subscribed regular expression
	// matched when it was last resolved.
	resolvedRegexes map[string]resolvedRegex
	// lastRegexRefreshMs is when the regular expressions were last all
	// matched again (not persisted: a reload refreshes at once).
	lastRegexRefreshMs int64
	// pendingWrites counts the appends of this group's records not yet
	// done (see writeConsumerRecords).
	pendingWrites int
	// topicCounts caches the members' subscribed topic counts (derived,
	// nil when stale), so that a heartbeat costs O(topics), not O(members).
	topicCounts map[string]int
}

// partitionKey is one partition of a topic named by ID.
type partitionKey struct {
	topic     [16]byte
	partition int32
}

type topicInfo struct {
	id         [16]byte
	partitions int32
}

type resolvedRegex struct {
	topics      []string // sorted
	version     int64
	timestampMs int64
}

func newConsumerGroup(id string) *consumerGroup {
	return &consumerGroup{
		id:                   id,
		members:              make(map[string]*consumerMember),
		staticMembers:        make(map[string]string),
		target:               make(map[string]assignment),
		partitionEpochs:      make(map[partitionKey]int32),
		subscriptionMetadata: make(map[string]topicInfo),
		resolvedRegexes:      make(map[string]resolvedRegex),
	}
}

// consumerGroupState is the state DescribeGroups-style APIs report
// (Kafka's ConsumerGroupState); it is derived, never stored.
type consumerGroupState uint8

const (
	consumerGroupEmpty consumerGroupState = iota
	consumerGroupAssigning
	consumerGroupReconciling
	consumerGroupStable
)

var consumerGroupStateNames = [...]string{"Empty", "Assigning", "Reconciling", "Stable"}

func (s consumerGroupState) String() string { return consumerGroupStateNames[s] }

// state is Empty without members, Assigning while the target assignment is
// behind the group epoch, Reconciling while a member has not converged on
// it, and Stable otherwise.
func (g *consumerGroup) state() consumerGroupState {
	switch {
	case len(g.members) == 0:
		return consumerGroupEmpty
	case g.groupEpoch > g.targetAssignmentEpoch:
		return consumerGroupAssigning
	}
	for _, m := range g.members {
		if !m.isReconciledTo(g.targetAssignmentEpoch) {
			return consumerGroupReconciling
		}
	}
	return consumerGroupStable
}

func (g *consumerGroup) groupID() string          { return g.id }
func (g *consumerGroup) groupType() string        { return groupTypeConsumer }
func (g *consumerGroup) stateName() string        { return g.state().String() }
func (g *consumerGroup) protocolTypeName() string { return consumerProtocolType }
func (g *consumerGroup) deletable() bool          { return len(g.members) == 0 }
func (g *consumerGroup) validateOffsetDelete() int16 {
	return 0 // offsets of topics the group consumes are refused one by one
}

func (g *consumerGroup) validateDelete() int16 {
	if len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	return 0
}

// validateOffsetCommit is Kafka's ConsumerGroup.validateOffsetCommit: a
// commit without a member epoch is accepted while the group has no members,
// and a transactional one naming no member, epoch or instance at any time
// (TxnOffsetCommit before v3 cannot name them). Otherwise the member must
// exist, commit with OffsetCommit v9+ unless transactional, and carry its
// current epoch (STALE_MEMBER_EPOCH). The epoch arrives in the generation
// field.
func (g *consumerGroup) validateOffsetCommit(c offsetCommitter) int16 {
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
		return kerr.UnsupportedVersion.Code // members of the consumer protocol commit with v9+
	}
	if c.generation != m.memberEpoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// validateOffsetFetch applies to OffsetFetch v9+, which may name the member
// and its epoch; a fetch naming neither is accepted.
func (g *consumerGroup) validateOffsetFetch(memberID *string, memberEpoch int32) int16 {
	if memberID == nil && memberEpoch < 0 {
		return 0
	}
	var m *consumerMember
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

func (g *consumerGroup) isSubscribedToTopic(topic string) bool {
	return g.subscribedTopicCounts(nil, nil)[topic] > 0
}

// offsetExpiryBase: a consumer group's offsets expire counting from their
// commit, unless the group consumes the topic.
func (g *consumerGroup) offsetExpiryBase() (func(offsetValue) int64, bool) {
	return func(o offsetValue) int64 { return o.commitTimestampMs }, true
}

// memberChanges overlays a heartbeat's changes on a group's members: a
// member id maps to the member's new version, or to nil for a member
// removed.
type memberChanges map[string]*consumerMember

// eachMemberUnordered calls fn for every member, in no particular order,
// as if changes were applied: cheaper than eachMember where order does not
// matter, as in the counts a heartbeat takes of every member.
func (g *consumerGroup) eachMemberUnordered(changes memberChanges, fn func(*consumerMember)) {
	for id, m := range g.members {
		if _, changed := changes[id]; !changed {
			fn(m)
		}
	}
	for _, m := range changes {
		if m != nil {
			fn(m)
		}
	}
}

// eachMember calls fn for every member, in member id order, as if changes
// were applied.
func (g *consumerGroup) eachMember(changes memberChanges, fn func(*consumerMember)) {
	ids := make([]string, 0, len(g.members)+len(changes))
	for id := range g.members {
		if _, changed := changes[id]; !changed {
			ids = append(ids, id)
		}
	}
	for id, m := range changes {
		if m != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if m, changed := changes[id]; changed {
			fn(m)
		} else {
			fn(g.members[id])
		}
	}
}

// subscribedTopicCounts counts, per topic name, the members subscribed to
// it by name or through a regular expression resolved in regexes, as if
// changes were applied. With regexes nil, the group's own resolved regexes
// count and the cached counts of the group are adjusted for changes.
func (g *consumerGroup) subscribedTopicCounts(changes memberChanges, regexes map[string]resolvedRegex) map[string]int {
	var counts map[string]int
	add := func(m *consumerMember, delta int) {
		for _, t := range m.subscribedTopicNames {
			counts[t] += delta
		}
		if m.subscribedTopicRegex != "" {
			for _, t := range regexes[m.subscribedTopicRegex].topics {
				counts[t] += delta
			}
		}
	}
	if regexes != nil {
		counts = make(map[string]int)
		g.eachMemberUnordered(changes, func(m *consumerMember) { add(m, 1) })
		return counts
	}
	regexes = g.resolvedRegexes
	if g.topicCounts == nil {
		counts = make(map[string]int)
		g.eachMemberUnordered(nil, func(m *consumerMember) { add(m, 1) })
		g.topicCounts = counts
	}
	counts = maps.Clone(g.topicCounts)
	for id, m := range changes {
		if old := g.members[id]; old != nil {
			add(old, -1)
		}
		if m != nil {
			add(m, 1)
		}
	}
	for t, n := range counts {
		if n <= 0 {
			delete(counts, t)
		}
	}
	return counts
}

// numRegexSubscribers counts the members subscribed to regex.
func (g *consumerGroup) numRegexSubscribers(regex string) int {
	n := 0
	for _, m := range g.members {
		if m.subscribedTopicRegex == regex && regex != "" {
			n++
		}
	}
	return n
}

// staticMember returns the member holding instanceID, or nil.
func (g *consumerGroup) staticMember(instanceID string) *consumerMember {
	if id, ok := g.staticMembers[instanceID]; ok {
		return g.members[id]
	}
	return nil
}

// targetFor returns the target assignment of memberID; a static member
// replacing another inherits the replaced member's target.
func (g *consumerGroup) targetFor(memberID string, instanceID *string) assignment {
	if instanceID != nil {
		if previous, ok := g.staticMembers[*instanceID]; ok && previous != memberID {
			return g.target[previous]
		}
	}
	return g.target[memberID]
}

// partitionEpoch returns the epoch of the member owning the partition, or
// -1 when no member owns it.
func (g *consumerGroup) partitionEpoch(topic [16]byte, partition int32) int32 {
	if e, ok := g.partitionEpochs[partitionKey{topic, partition}]; ok {
		return e
	}
	return -1
}

// preferredAssignor is the server assignor most members chose (ties to the
// first by name) as if changes were applied, or "" if none chose one.
func (g *consumerGroup) preferredAssignor(changes memberChanges) string {
	counts := make(map[string]int)
	g.eachMemberUnordered(changes, func(m *consumerMember) {
		if m.serverAssignor != nil {
			counts[*m.serverAssignor]++
		}
	})
	best := ""
	for name, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && name < best) {
			best = name
		}
	}
	return best
}

func (g *consumerGroup) sortedMemberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (g *consumerGroup) checkInvariants() {
	fail := func(what string) { panic(fmt.Sprintf("consumer group %q: %s", g.id, what)) }
	if g.targetAssignmentEpoch > g.groupEpoch {
		fail("target assignment epoch ahead of the group epoch")
	}
	owned := make(map[partitionKey]int32)
	for id, m := range g.members {
		if m.id != id {
			fail("member stored under another id")
		}
		if m.instanceID != nil && g.staticMembers[*m.instanceID] != id {
			fail("static member not mapped")
		}
		for _, a := range []assignment{m.assigned, m.pendingRevocation} {
			for topic, partitions := range a {
				for _, p := range partitions {
					k := partitionKey{topic, p}
					if _, dup := owned[k]; dup {
						fail(fmt.Sprintf("partition %x-%d owned twice", topic, p))
					}
					owned[k] = m.memberEpoch
				}
			}
		}
	}
	if len(owned) != len(g.partitionEpochs) {
		fail("partition epochs out of step with the members")
	}
	for k, e := range owned {
		if g.partitionEpochs[k] != e {
			fail("partition epoch differs from its owner's")
		}
	}
	for instanceID, id := range g.staticMembers {
		if m := g.members[id]; m == nil || m.instanceID == nil || *m.instanceID != instanceID {
			fail("staticMembers names a missing member")
		}
	}
}

// memberState is a member's reconciliation state (Kafka's MemberState); the
// values are the ones ConsumerGroupCurrentMemberAssignmentValue stores.
type memberState int8

const (
	memberStable               memberState = 0
	memberUnrevokedPartitions  memberState = 1
	memberUnreleasedPartitions memberState = 2
	memberUnknownState         memberState = 127
)

func memberStateFromValue(v int8) memberState {
	switch s := memberState(v); s {
	case memberStable, memberUnrevokedPartitions, memberUnreleasedPartitions:
		return s
	}
	return memberUnknownState
}

// Member epochs with a meaning of their own in a heartbeat.
const (
	joinMemberEpoch        = 0
	leaveMemberEpoch       = -1
	leaveStaticMemberEpoch = -2
)

// consumerMember is one member of a consumer group (Kafka's
// ConsumerGroupMember). Members are values: an update builds a new one, so a
// heartbeat can compare the member before and after.
type consumerMember struct {
	id         string
	instanceID *string
	rackID     *string
	clientID   string
	clientHost string
	// subscribedTopicNames is sorted and free of duplicates.
	subscribedTopicNames []string
	// subscribedTopicRegex is "" when the member subscribes by name only.
	subscribedTopicRegex string
	rebalanceTimeoutMs   int32
	serverAssignor       *string

	memberEpoch         int32
	previousMemberEpoch int32
	state               memberState
	// assigned are the partitions the member may consume.
	assigned assignment
	// pendingRevocation are the partitions it must give up before it moves
	// to the next epoch.
	pendingRevocation assignment
}

func newConsumerMember(id string) *consumerMember {
	return &consumerMember{id: id, previousMemberEpoch: -1, rebalanceTimeoutMs: -1}
}

func (m *consumerMember) clone() *consumerMember {
	c := *m
	return &c
}

func (m *consumerMember) isReconciledTo(targetEpoch int32) bool {
	return m.state == memberStable && m.memberEpoch == targetEpoch
}

// sameMetadata reports whether the fields ConsumerGroupMemberMetadataValue
// stores are equal.
func (m *consumerMember) sameMetadata(o *consumerMember) bool {
	return m.id == o.id && equalStringPtr(m.instanceID, o.instanceID) && equalStringPtr(m.rackID, o.rackID) &&
		m.clientID == o.clientID && m.clientHost == o.clientHost &&
		slices.Equal(m.subscribedTopicNames, o.subscribedTopicNames) &&
		m.subscribedTopicRegex == o.subscribedTopicRegex && m.rebalanceTimeoutMs == o.rebalanceTimeoutMs &&
		equalStringPtr(m.serverAssignor, o.serverAssignor)
}

// sameAssignment reports whether the fields
// ConsumerGroupCurrentMemberAssignmentValue stores are equal.
func (m *consumerMember) sameAssignment(o *consumerMember) bool {
	return m.memberEpoch == o.memberEpoch && m.previousMemberEpoch == o.previousMemberEpoch && m.state == o.state &&
		m.assigned.equal(o.assigned) && m.pendingRevocation.equal(o.pendingRevocation)
}

func equalStringPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// assignment maps topic IDs to partitions. Each partition list is sorted,
// free of duplicates and non-empty. Assignments are never modified once
// built; every change builds a new one.
type assignment map[[16]byte][]int32

func (a assignment) equal(b assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		if !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

func (a assignment) contains(topic [16]byte, partition int32) bool {
	_, found := slices.BinarySearch(a[topic], partition)
	return found
}

func (a assignment) numPartitions() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// sortedTopics returns the topic IDs in byte order.
func (a assignment) sortedTopics() [][16]byte {
	out := make([][16]byte, 0, len(a))
	for t := range a {
		out = append(out, t)
	}
	slices.SortFunc(out, func(x, y [16]byte) int { return bytes.Compare(x[:], y[:]) })
	return out
}

// newAssignment builds an assignment from unsorted partition lists,
// dropping empty topics and duplicates.
func newAssignment(in map[[16]byte][]int32) assignment {
	out := make(assignment, len(in))
	for t, ps := range in {
		if len(ps) == 0 {
			continue
		}
		c := slices.Clone(ps)
		slices.Sort(c)
		out[t] = slices.Compact(c)
	}
	return out
}
