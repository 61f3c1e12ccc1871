package group

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerProtocolType is the protocol type of Kafka consumers; groups of
// this type have their subscriptions parsed to learn their topics.
const consumerProtocolType = "consumer"

// Group types as ListGroups v5+ reports them.
const (
	groupTypeClassic  = "classic"
	groupTypeConsumer = "consumer"
)

// group is what the shard needs of every group type: the classic group and
// the KIP-848 consumer group (consumer_group.go).
type group interface {
	groupID() string
	groupType() string
	// stateName is the state as DescribeGroups and ListGroups report it.
	stateName() string
	protocolTypeName() string
	// validateOffsetCommit returns the error for an OffsetCommit or
	// TxnOffsetCommit by the member it names, or 0 (offset_commit.go).
	validateOffsetCommit(c offsetCommitter) int16
	validateDelete() int16
	validateOffsetDelete() int16
	// isSubscribedToTopic reports whether members consume topic, so its
	// offsets must be neither deleted nor expired.
	isSubscribedToTopic(topic string) bool
	// offsetExpiryBase returns, for a group whose offsets may expire, the
	// timestamp each offset's retention counts from.
	offsetExpiryBase() (func(offsetValue) int64, bool)
	// deletable reports whether cleanup may delete the group once it has
	// no offsets left.
	deletable() bool
}

// state is a classic group's state (Kafka's ClassicGroupState).
type state uint8

const (
	stateEmpty state = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

func (s state) String() string { return stateNames[s] }

// validPreviousStates lists, for each state, the states it may be entered
// from.
var validPreviousStates = [...][]state{
	stateEmpty:               {statePreparingRebalance},
	statePreparingRebalance:  {stateStable, stateCompletingRebalance, stateEmpty},
	stateCompletingRebalance: {statePreparingRebalance},
	stateStable:              {stateCompletingRebalance},
	stateDead:                {stateStable, statePreparingRebalance, stateCompletingRebalance, stateEmpty, stateDead},
}

func canTransition(from, to state) bool {
	for _, s := range validPreviousStates[to] {
		if s == from {
			return true
		}
	}
	return false
}

// classicGroup is a group using the classic rebalance protocol, with the
// assignment computed by its leader (Kafka's ClassicGroup).
type classicGroup struct {
	id            string
	state         state
	previousState state
	// stateTimestampMs is when the group entered its state, -1 if unknown
	// (a group loaded from a GroupMetadataValue older than v2).
	stateTimestampMs int64

	protocolType    string
	hasProtocolType bool
	protocolName    string
	hasProtocolName bool
	generation      int32
	// leaderID is the leader's member id, "" when there is none.
	// Invariant: leaderID == "" || members[leaderID] != nil.
	leaderID string

	members map[string]*member
	// memberOrder holds the member ids in joining order, so that iteration,
	// leader re-election and protocol vote ties are deterministic.
	// Invariant: memberOrder holds exactly the keys of members.
	memberOrder []string
	// staticMembers maps group.instance.id to member id.
	// Invariant: staticMembers[*m.instanceID] == m.id for each static m.
	staticMembers map[string]string
	// pendingJoin holds member ids handed out with MEMBER_ID_REQUIRED whose
	// owners have not joined with them yet (KIP-394).
	pendingJoin map[string]struct{}
	// numAwaitingJoin counts members with a parked JoinGroup.
	// Invariant: numAwaitingJoin == |{m in members : m.joinWaiter != nil}|.
	numAwaitingJoin int
	// supportedProtocols counts, per protocol name, the members supporting it.
	supportedProtocols map[string]int
	// pendingSync holds the members that have not sent SyncGroup for the
	// current generation yet.
	pendingSync map[string]struct{}

	// subscribedTopics are the topics members consume, known only for
	// consumer-protocol groups whose subscriptions parsed.
	subscribedTopics map[string]bool
	subscribedKnown  bool

	// newMemberAdded marks that a member joined during an initial
	// rebalance, which extends the initial delay.
	newMemberAdded bool
}

func newClassicGroup(id string, st state, nowMs int64) *classicGroup {
	return &classicGroup{
		id:                 id,
		state:              st,
		previousState:      stateDead,
		stateTimestampMs:   nowMs,
		members:            make(map[string]*member),
		staticMembers:      make(map[string]string),
		pendingJoin:        make(map[string]struct{}),
		supportedProtocols: make(map[string]int),
		pendingSync:        make(map[string]struct{}),
	}
}

func (g *classicGroup) groupID() string          { return g.id }
func (g *classicGroup) groupType() string        { return groupTypeClassic }
func (g *classicGroup) stateName() string        { return g.state.String() }
func (g *classicGroup) protocolTypeName() string { return g.protocolType }
func (g *classicGroup) deletable() bool          { return g.state == stateEmpty }

func (g *classicGroup) transition(to state, nowMs int64) {
	if invariantsEnabled && !canTransition(g.state, to) {
		panic("group: invalid transition from " + g.state.String() + " to " + to.String())
	}
	g.previousState = g.state
	g.state = to
	g.stateTimestampMs = nowMs
}

// canRebalance reports whether the group may enter PreparingRebalance.
func (g *classicGroup) canRebalance() bool { return canTransition(g.state, statePreparingRebalance) }

func (g *classicGroup) isLeader(memberID string) bool {
	return g.leaderID != "" && g.leaderID == memberID
}

func (g *classicGroup) usesConsumerProtocol() bool {
	return g.hasProtocolType && g.protocolType == consumerProtocolType
}

func (g *classicGroup) isPendingMember(memberID string) bool {
	_, ok := g.pendingJoin[memberID]
	return ok
}

// add adds m, parking its JoinGroup in waiter when non-nil.
func (g *classicGroup) add(m *member, waiter *joinWaiter) {
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
		g.hasProtocolType = true
	}
	if g.leaderID == "" {
		g.leaderID = m.id
	}
	g.members[m.id] = m
	g.memberOrder = append(g.memberOrder, m.id)
	g.addProtocols(m, 1)
	m.joinWaiter = waiter
	if waiter != nil {
		g.numAwaitingJoin++
	}
	delete(g.pendingJoin, m.id)
}

// remove removes the member or pending member with this id and returns the
// member, if there was one. Its parked requests are the caller's to answer.
func (g *classicGroup) remove(memberID string) *member {
	m := g.members[memberID]
	if m != nil {
		delete(g.members, memberID)
		for i, id := range g.memberOrder {
			if id == memberID {
				g.memberOrder = append(g.memberOrder[:i], g.memberOrder[i+1:]...)
				break
			}
		}
		g.addProtocols(m, -1)
		if m.awaitingJoin() {
			g.numAwaitingJoin--
		}
		if m.instanceID != nil {
			delete(g.staticMembers, *m.instanceID)
		}
	}
	if g.isLeader(memberID) {
		g.leaderID = ""
		if len(g.memberOrder) > 0 {
			g.leaderID = g.memberOrder[0]
		}
	}
	delete(g.pendingJoin, memberID)
	delete(g.pendingSync, memberID)
	return m
}

func (g *classicGroup) addProtocols(m *member, delta int) {
	for _, p := range m.protocols {
		n := g.supportedProtocols[p.name] + delta
		if n == 0 {
			delete(g.supportedProtocols, p.name)
		} else {
			g.supportedProtocols[p.name] = n
		}
	}
}

// updateMember replaces a member's protocols and timeouts and parks (or, with
// a nil waiter, unparks) its JoinGroup. A waiter it replaces is returned for
// the caller to answer.
func (g *classicGroup) updateMember(m *member, protocols []protocol, rebalanceTimeoutMs, sessionTimeoutMs int32, waiter *joinWaiter) *joinWaiter {
	g.addProtocols(m, -1)
	m.protocols = protocols
	g.addProtocols(m, 1)
	m.rebalanceTimeoutMs = rebalanceTimeoutMs
	m.sessionTimeoutMs = sessionTimeoutMs
	old := m.joinWaiter
	switch {
	case waiter != nil && old == nil:
		g.numAwaitingJoin++
	case waiter == nil && old != nil:
		g.numAwaitingJoin--
	}
	m.joinWaiter = waiter
	return old
}

// replaceStaticMember gives the static member oldID the id newID, keeping
// everything else. The old member's parked requests are returned for the
// caller to fence.
func (g *classicGroup) replaceStaticMember(instanceID, oldID, newID string) (replaced *member, fencedJoin *joinWaiter, fencedSync *syncWaiter) {
	old := g.members[oldID]
	fencedJoin, fencedSync = old.joinWaiter, old.syncWaiter
	if old.joinWaiter != nil {
		g.numAwaitingJoin--
	}
	m := &member{
		id:                 newID,
		instanceID:         old.instanceID,
		clientID:           old.clientID,
		clientHost:         old.clientHost,
		rebalanceTimeoutMs: old.rebalanceTimeoutMs,
		sessionTimeoutMs:   old.sessionTimeoutMs,
		protocolType:       old.protocolType,
		protocols:          old.protocols,
		assignment:         old.assignment,
	}
	delete(g.members, oldID)
	g.members[newID] = m
	for i, id := range g.memberOrder {
		if id == oldID {
			g.memberOrder[i] = newID
		}
	}
	if g.isLeader(oldID) {
		g.leaderID = newID
	}
	// The replacement owes the SyncGroup the old member owed; carrying it
	// over keeps the sync timeout from removing a member id that no longer
	// exists and rebalancing for nothing.
	if _, ok := g.pendingSync[oldID]; ok {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = struct{}{}
	}
	g.staticMembers[instanceID] = newID
	return m, fencedJoin, fencedSync
}

// maybeElectNewJoinedLeader keeps the leader if it rejoined, else picks the
// first member that did. It reports false when no member rejoined (or the
// group has no leader).
func (g *classicGroup) maybeElectNewJoinedLeader() bool {
	if g.leaderID == "" {
		return false
	}
	if g.members[g.leaderID].awaitingJoin() {
		return true
	}
	for _, id := range g.memberOrder {
		if g.members[id].awaitingJoin() {
			g.leaderID = id
			return true
		}
	}
	return false
}

func (g *classicGroup) hasAllMembersJoined() bool {
	return len(g.members) == g.numAwaitingJoin && len(g.pendingJoin) == 0
}

// rebalanceTimeoutMs is the largest rebalance timeout of the members.
func (g *classicGroup) rebalanceTimeoutMs() int32 {
	var max int32
	for _, m := range g.members {
		if m.rebalanceTimeoutMs > max {
			max = m.rebalanceTimeoutMs
		}
	}
	return max
}

// supportsProtocols reports whether a member with this protocol type and
// these protocols may join: an empty group takes any non-empty type and
// list; otherwise the type must match and one protocol be supported by all.
func (g *classicGroup) supportsProtocols(protocolType string, protocols []protocol) bool {
	if g.state == stateEmpty {
		return protocolType != "" && len(protocols) > 0
	}
	if !g.hasProtocolType || g.protocolType != protocolType {
		return false
	}
	for _, p := range protocols {
		if g.supportedProtocols[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol picks, among the protocols all members support, the one
// most members prefer (Kafka's rule). Ties go to the protocol whose first
// vote came earliest in joining order.
func (g *classicGroup) selectProtocol() string {
	candidates := make(map[string]bool)
	for name, n := range g.supportedProtocols {
		if n == len(g.members) {
			candidates[name] = true
		}
	}
	votes := make(map[string]int)
	var order []string
	for _, id := range g.memberOrder {
		v := g.members[id].vote(candidates)
		if votes[v] == 0 {
			order = append(order, v)
		}
		votes[v]++
	}
	best := ""
	for _, name := range order {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

// validateMember checks a member id and, for a static member, that the
// instance id maps to it.
func (g *classicGroup) validateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		existing, ok := g.staticMembers[*instanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if existing != memberID {
			return kerr.FencedInstanceID.Code
		}
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// validateOffsetCommit is Kafka's ClassicGroup.validateOffsetCommit. A
// commit without generation is accepted while the group is empty (simple
// consumers, the admin client); a member, generation or instance id that is
// given must match the group. A transactional commit naming no member is
// accepted whatever the state, since TxnOffsetCommit before v3 cannot name
// one, and a transactional commit is not refused during a rebalance.
func (g *classicGroup) validateOffsetCommit(c offsetCommitter) int16 {
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if c.generation < 0 && g.state == stateEmpty {
		return 0
	}
	if c.generation >= 0 || c.memberID != "" || c.instanceID != nil {
		if code := g.validateMember(c.memberID, c.instanceID); code != 0 {
			return code
		}
		if c.generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	} else if !c.transactional && g.state != stateEmpty {
		return kerr.UnknownMemberID.Code
	}
	if !c.transactional && g.state == stateCompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

func (g *classicGroup) validateDelete() int16 {
	switch g.state {
	case stateDead:
		return kerr.GroupIDNotFound.Code
	case stateEmpty:
		return 0
	default:
		return kerr.NonEmptyGroup.Code
	}
}

func (g *classicGroup) validateOffsetDelete() int16 {
	switch g.state {
	case stateDead:
		return kerr.GroupIDNotFound.Code
	case stateEmpty:
		return 0
	default:
		if !g.usesConsumerProtocol() {
			return kerr.NonEmptyGroup.Code
		}
		return 0
	}
}

func (g *classicGroup) isSubscribedToTopic(topic string) bool {
	if g.subscribedKnown {
		return g.subscribedTopics[topic]
	}
	return g.usesConsumerProtocol()
}

// offsetExpiryBase follows Kafka's ClassicGroup: an empty group's offsets
// expire counting from when it became empty; a stable consumer group's
// offsets of topics it no longer consumes count from their commit; a group
// without protocol type (simple consumers) counts from each commit.
func (g *classicGroup) offsetExpiryBase() (func(offsetValue) int64, bool) {
	if !g.hasProtocolType || g.protocolType == "" {
		return func(o offsetValue) int64 { return o.commitTimestampMs }, true
	}
	if g.state == stateEmpty {
		if g.stateTimestampMs >= 0 {
			ts := g.stateTimestampMs
			return func(offsetValue) int64 { return ts }, true
		}
		return func(o offsetValue) int64 { return o.commitTimestampMs }, true
	}
	if g.usesConsumerProtocol() && g.subscribedKnown && g.state == stateStable {
		return func(o offsetValue) int64 { return o.commitTimestampMs }, true
	}
	return nil, false
}

// initNextGeneration starts the next generation: with members, it picks the
// protocol and awaits the leader's assignment; without, the group is empty.
func (g *classicGroup) initNextGeneration(nowMs int64) {
	g.generation++
	if len(g.members) > 0 {
		g.protocolName, g.hasProtocolName = g.selectProtocol(), true
		g.computeSubscribedTopics()
		g.transition(stateCompletingRebalance, nowMs)
	} else {
		g.protocolName, g.hasProtocolName = "", false
		g.computeSubscribedTopics()
		g.transition(stateEmpty, nowMs)
	}
	clear(g.pendingSync)
}

// computeSubscribedTopics learns the topics of a consumer-protocol group by
// parsing the version-0 prefix every consumer subscription starts with
// (int16 version, then an array of topic names), as Kafka does so that
// future subscription versions still parse.
func (g *classicGroup) computeSubscribedTopics() {
	g.subscribedTopics, g.subscribedKnown = nil, false
	if !g.usesConsumerProtocol() {
		return
	}
	topics := make(map[string]bool)
	if len(g.members) > 0 {
		if !g.hasProtocolName {
			return
		}
		for _, m := range g.members {
			if !parseSubscriptionTopics(m.metadata(g.protocolName), topics) {
				return
			}
		}
	}
	g.subscribedTopics, g.subscribedKnown = topics, true
}

func parseSubscriptionTopics(metadata []byte, into map[string]bool) bool {
	b := kbin.Reader{Src: metadata}
	b.Int16()
	n := b.ArrayLen()
	if !b.Ok() || n < 0 || int(n) > len(b.Src) {
		return false
	}
	for range n {
		topic := b.String()
		if !b.Ok() {
			return false
		}
		into[topic] = true
	}
	return true
}

// joinMembers lists the members for the leader's JoinGroup response.
func (g *classicGroup) joinMembers() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.members))
	for _, id := range g.memberOrder {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = nonNilBytes(m.metadata(g.protocolName))
		out = append(out, jm)
	}
	return out
}

func (g *classicGroup) assignments() map[string][]byte {
	out := make(map[string][]byte, len(g.members))
	for id, m := range g.members {
		out[id] = m.assignment
	}
	return out
}

// metadataValue is the GroupMetadataValue that persists the group with the
// given assignment.
func (g *classicGroup) metadataValue(assignment map[string][]byte) *kmsg.GroupMetadataValue {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	v.Protocol = optionalString(g.protocolName, g.hasProtocolName)
	v.Leader = optionalString(g.leaderID, g.leaderID != "")
	v.CurrentStateTimestamp = g.stateTimestampMs
	for _, id := range g.memberOrder {
		m := g.members[id]
		mm := kmsg.NewGroupMetadataValueMember()
		mm.MemberID = m.id
		mm.InstanceID = m.instanceID
		mm.ClientID = m.clientID
		mm.ClientHost = m.clientHost
		mm.RebalanceTimeoutMillis = m.rebalanceTimeoutMs
		mm.SessionTimeoutMillis = m.sessionTimeoutMs
		mm.Subscription = nonNilBytes(m.metadata(g.protocolName))
		mm.Assignment = nonNilBytes(assignment[id])
		v.Members = append(v.Members, mm)
	}
	return v
}

// classicGroupFromRecord rebuilds a group from its GroupMetadataValue: Stable
// with the recorded members, each supporting just the recorded protocol, or
// Empty without members.
func classicGroupFromRecord(id string, v *kmsg.GroupMetadataValue) *classicGroup {
	st := stateStable
	if len(v.Members) == 0 {
		st = stateEmpty
	}
	ts := int64(-1)
	if v.Version >= 2 {
		ts = v.CurrentStateTimestamp
	}
	g := newClassicGroup(id, st, ts)
	g.generation = v.Generation
	g.protocolType, g.hasProtocolType = v.ProtocolType, v.ProtocolType != ""
	if v.Protocol != nil {
		g.protocolName, g.hasProtocolName = *v.Protocol, true
	}
	if v.Leader != nil {
		g.leaderID = *v.Leader
	}
	for _, mm := range v.Members {
		if mm.MemberID == "" || g.members[mm.MemberID] != nil {
			continue // not a member Kafka could have written
		}
		rebalanceTimeoutMs := mm.RebalanceTimeoutMillis
		if v.Version < 1 || rebalanceTimeoutMs == -1 {
			rebalanceTimeoutMs = mm.SessionTimeoutMillis
		}
		m := &member{
			id:                 mm.MemberID,
			instanceID:         mm.InstanceID,
			clientID:           mm.ClientID,
			clientHost:         mm.ClientHost,
			rebalanceTimeoutMs: rebalanceTimeoutMs,
			sessionTimeoutMs:   mm.SessionTimeoutMillis,
			protocolType:       v.ProtocolType,
			protocols:          []protocol{{name: g.protocolName, metadata: mm.Subscription}},
			assignment:         mm.Assignment,
		}
		if m.instanceID != nil && g.staticMembers[*m.instanceID] != "" {
			m.instanceID = nil // a duplicate instance id in a bad record
		}
		g.add(m, nil)
	}
	g.protocolType, g.hasProtocolType = v.ProtocolType, v.ProtocolType != ""
	if g.leaderID != "" && g.members[g.leaderID] == nil {
		g.leaderID = ""
		if len(g.memberOrder) > 0 {
			g.leaderID = g.memberOrder[0]
		}
	}
	g.computeSubscribedTopics()
	return g
}
