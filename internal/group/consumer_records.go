package group

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The __consumer_offsets records of consumer-protocol (KIP-848) groups, in
// Kafka 4.0's schemas. kmsg does not define them, so they are encoded here.
//
// Keys are not flexible: the int16 record type, then int16-length strings.
//
//	3  ConsumerGroupMetadataKey                 | type | group |
//	4  ConsumerGroupPartitionMetadataKey        | type | group |
//	5  ConsumerGroupMemberMetadataKey           | type | group | memberId |
//	6  ConsumerGroupTargetAssignmentMetadataKey | type | group |
//	7  ConsumerGroupTargetAssignmentMemberKey   | type | group | memberId |
//	8  ConsumerGroupCurrentMemberAssignmentKey  | type | group | memberId |
//	16 ConsumerGroupRegularExpressionKey        | type | group | regex |
//
// Values are version 0 and flexible: an int16 version, then the fields with
// compact (unsigned varint length+1, 0 for null) strings and arrays, every
// struct ending in tagged fields (written empty, skipped when read):
//
//	3  ConsumerGroupMetadataValue:  epoch int32
//	4  ConsumerGroupPartitionMetadataValue:  topics [ topicId uuid, topicName string,
//	       numPartitions int32, partitionMetadata [ partition int32, racks [string] ] ]
//	5  ConsumerGroupMemberMetadataValue:  instanceId string?, rackId string?,
//	       clientId string, clientHost string, subscribedTopicNames [string],
//	       subscribedTopicRegex string?, rebalanceTimeoutMs int32, serverAssignor string?
//	       (tag 0: classicMemberMetadata, for members of the classic protocol; ignored)
//	6  ConsumerGroupTargetAssignmentMetadataValue:  assignmentEpoch int32
//	7  ConsumerGroupTargetAssignmentMemberValue:  topicPartitions [ topicId uuid, partitions [int32] ]
//	8  ConsumerGroupCurrentMemberAssignmentValue:  memberEpoch int32,
//	       previousMemberEpoch int32, state int8, assignedPartitions [ topicId uuid,
//	       partitions [int32] ], partitionsPendingRevocation [ same ]
//	16 ConsumerGroupRegularExpressionValue:  topics [string], version int64, timestamp int64
//
// For example the epoch record of group "g" at epoch 5:
//
//	key:   00 03  00 01 67
//	value: 00 00  00 00 00 05  00
const (
	recordTypeConsumerGroupMetadata          int16 = 3
	recordTypeConsumerGroupPartitionMetadata int16 = 4
	recordTypeConsumerGroupMemberMetadata    int16 = 5
	recordTypeConsumerGroupTargetMetadata    int16 = 6
	recordTypeConsumerGroupTargetMember      int16 = 7
	recordTypeConsumerGroupCurrentAssignment int16 = 8
	recordTypeConsumerGroupRegex             int16 = 16
)

const consumerValueVersion int16 = 0

// isConsumerRecordType reports whether a key's record type is one of a
// consumer-protocol group.
func isConsumerRecordType(t int16) bool {
	switch t {
	case recordTypeConsumerGroupMetadata, recordTypeConsumerGroupPartitionMetadata,
		recordTypeConsumerGroupMemberMetadata, recordTypeConsumerGroupTargetMetadata,
		recordTypeConsumerGroupTargetMember, recordTypeConsumerGroupCurrentAssignment,
		recordTypeConsumerGroupRegex:
		return true
	}
	return false
}

// consumerRecord is one decoded record of a consumer group. Exactly the
// fields of its type are set; tombstone marks a null value.
type consumerRecord struct {
	recordType int16
	group      string
	// member is the member id of member-keyed records.
	member string
	// regex is the regular expression of a regex record.
	regex     string
	tombstone bool

	// epoch: the group epoch (3) or target assignment epoch (6).
	epoch int32
	// topics: the subscription metadata (4).
	topics map[string]topicInfo
	// metadata: the member's metadata fields (5); assignment: the member's
	// epochs, state and partitions (8). Both are partial members.
	metadata   *consumerMember
	assignment *consumerMember
	// partitions: a member's target assignment (7).
	partitions assignment
	// resolved: a resolved regular expression (16).
	resolved resolvedRegex
}

// kv encodes the record.
func (r *consumerRecord) kv() KV {
	key := kbin.AppendInt16(nil, r.recordType)
	key = kbin.AppendString(key, r.group)
	switch r.recordType {
	case recordTypeConsumerGroupMemberMetadata, recordTypeConsumerGroupTargetMember, recordTypeConsumerGroupCurrentAssignment:
		key = kbin.AppendString(key, r.member)
	case recordTypeConsumerGroupRegex:
		key = kbin.AppendString(key, r.regex)
	}
	if r.tombstone {
		return KV{Key: key}
	}
	v := kbin.AppendInt16(nil, consumerValueVersion)
	switch r.recordType {
	case recordTypeConsumerGroupMetadata, recordTypeConsumerGroupTargetMetadata:
		v = kbin.AppendInt32(v, r.epoch)
	case recordTypeConsumerGroupPartitionMetadata:
		names := make([]string, 0, len(r.topics))
		for name := range r.topics {
			names = append(names, name)
		}
		slices.Sort(names)
		v = kbin.AppendCompactArrayLen(v, len(names))
		for _, name := range names {
			t := r.topics[name]
			v = kbin.AppendUuid(v, t.id)
			v = kbin.AppendCompactString(v, name)
			v = kbin.AppendInt32(v, t.partitions)
			v = kbin.AppendCompactArrayLen(v, 0) // no rack information
			v = appendNoTags(v)
		}
	case recordTypeConsumerGroupMemberMetadata:
		m := r.metadata
		v = kbin.AppendCompactNullableString(v, m.instanceID)
		v = kbin.AppendCompactNullableString(v, m.rackID)
		v = kbin.AppendCompactString(v, m.clientID)
		v = kbin.AppendCompactString(v, m.clientHost)
		v = kbin.AppendCompactArrayLen(v, len(m.subscribedTopicNames))
		for _, t := range m.subscribedTopicNames {
			v = kbin.AppendCompactString(v, t)
		}
		v = kbin.AppendCompactString(v, m.subscribedTopicRegex)
		v = kbin.AppendInt32(v, m.rebalanceTimeoutMs)
		v = kbin.AppendCompactNullableString(v, m.serverAssignor)
	case recordTypeConsumerGroupTargetMember:
		v = appendTopicPartitions(v, r.partitions)
	case recordTypeConsumerGroupCurrentAssignment:
		m := r.assignment
		v = kbin.AppendInt32(v, m.memberEpoch)
		v = kbin.AppendInt32(v, m.previousMemberEpoch)
		v = kbin.AppendInt8(v, int8(m.state))
		v = appendTopicPartitions(v, m.assigned)
		v = appendTopicPartitions(v, m.pendingRevocation)
	case recordTypeConsumerGroupRegex:
		v = kbin.AppendCompactArrayLen(v, len(r.resolved.topics))
		for _, t := range r.resolved.topics {
			v = kbin.AppendCompactString(v, t)
		}
		v = kbin.AppendInt64(v, r.resolved.version)
		v = kbin.AppendInt64(v, r.resolved.timestampMs)
	}
	return KV{Key: key, Value: appendNoTags(v)}
}

func appendNoTags(b []byte) []byte { return kbin.AppendUvarint(b, 0) }

func appendTopicPartitions(b []byte, a assignment) []byte {
	topics := a.sortedTopics()
	b = kbin.AppendCompactArrayLen(b, len(topics))
	for _, t := range topics {
		b = kbin.AppendUuid(b, t)
		b = kbin.AppendCompactArrayLen(b, len(a[t]))
		for _, p := range a[t] {
			b = kbin.AppendInt32(b, p)
		}
		b = appendNoTags(b)
	}
	return b
}

// decodeConsumerRecord decodes a record whose key has a consumer group
// record type. Errors wrap ErrCorrupt.
func decodeConsumerRecord(key, value []byte) (*consumerRecord, error) {
	if len(key) < 2 {
		return nil, fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(key))
	}
	k := kbin.Reader{Src: key}
	r := &consumerRecord{recordType: k.Int16(), group: k.String()}
	switch r.recordType {
	case recordTypeConsumerGroupMemberMetadata, recordTypeConsumerGroupTargetMember, recordTypeConsumerGroupCurrentAssignment:
		r.member = k.String()
	case recordTypeConsumerGroupRegex:
		r.regex = k.String()
	}
	if !k.Ok() || len(k.Src) != 0 {
		return nil, fmt.Errorf("%w: consumer group record key of type %d", ErrCorrupt, r.recordType)
	}
	if value == nil {
		r.tombstone = true
		return r, nil
	}
	if err := checkValueVersion(value, consumerValueVersion); err != nil {
		return nil, fmt.Errorf("consumer group record value of type %d: %w", r.recordType, err)
	}
	v := kbin.Reader{Src: value[2:]}
	switch r.recordType {
	case recordTypeConsumerGroupMetadata, recordTypeConsumerGroupTargetMetadata:
		r.epoch = v.Int32()
	case recordTypeConsumerGroupPartitionMetadata:
		r.topics = readTopicMetadata(&v)
	case recordTypeConsumerGroupMemberMetadata:
		m := newConsumerMember(r.member)
		m.instanceID = v.CompactNullableString()
		m.rackID = v.CompactNullableString()
		m.clientID = v.CompactString()
		m.clientHost = v.CompactString()
		m.subscribedTopicNames = sortedUnique(readCompactStrings(&v))
		if regex := v.CompactNullableString(); regex != nil {
			m.subscribedTopicRegex = *regex
		}
		m.rebalanceTimeoutMs = v.Int32()
		m.serverAssignor = v.CompactNullableString()
		r.metadata = m
	case recordTypeConsumerGroupTargetMember:
		r.partitions = readTopicPartitions(&v)
	case recordTypeConsumerGroupCurrentAssignment:
		m := newConsumerMember(r.member)
		m.memberEpoch = v.Int32()
		m.previousMemberEpoch = v.Int32()
		m.state = memberStateFromValue(v.Int8())
		m.assigned = readTopicPartitions(&v)
		m.pendingRevocation = readTopicPartitions(&v)
		r.assignment = m
	case recordTypeConsumerGroupRegex:
		r.resolved.topics = sortedUnique(readCompactStrings(&v))
		r.resolved.version = v.Int64()
		r.resolved.timestampMs = v.Int64()
	default:
		return nil, fmt.Errorf("%w: %d", ErrUnknownRecordType, r.recordType)
	}
	skipTags(&v)
	if !v.Ok() || len(v.Src) != 0 {
		return nil, fmt.Errorf("%w: consumer group record value of type %d", ErrCorrupt, r.recordType)
	}
	return r, nil
}

// skipTags reads past a tagged-field section.
func skipTags(b *kbin.Reader) {
	n := b.Uvarint()
	for i := uint32(0); i < n && b.Ok(); i++ {
		b.Uvarint()
		b.Span(int(b.Uvarint()))
	}
}

func readCompactStrings(b *kbin.Reader) []string {
	n := b.CompactArrayLen()
	if n <= 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := int32(0); i < n && b.Ok(); i++ {
		out = append(out, b.CompactString())
	}
	return out
}

func readTopicPartitions(b *kbin.Reader) assignment {
	n := b.CompactArrayLen()
	raw := make(map[[16]byte][]int32)
	for i := int32(0); i < n && b.Ok(); i++ {
		topic := b.Uuid()
		np := b.CompactArrayLen()
		if np < 0 || int(np)*4 > len(b.Src) {
			b.Span(-1) // marks the reader bad
			break
		}
		ps := make([]int32, 0, np)
		for range np {
			ps = append(ps, b.Int32())
		}
		raw[topic] = append(raw[topic], ps...)
		skipTags(b)
	}
	return newAssignment(raw)
}

func readTopicMetadata(b *kbin.Reader) map[string]topicInfo {
	n := b.CompactArrayLen()
	out := make(map[string]topicInfo)
	for i := int32(0); i < n && b.Ok(); i++ {
		id := b.Uuid()
		name := b.CompactString()
		partitions := b.Int32()
		racks := b.CompactArrayLen()
		for j := int32(0); j < racks && b.Ok(); j++ {
			b.Int32()
			readCompactStrings(b)
			skipTags(b)
		}
		skipTags(b)
		out[name] = topicInfo{id: id, partitions: partitions}
	}
	return out
}

func sortedUnique(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// consumerRecordKind returns the record type of a key, or -1.
func consumerRecordKind(key []byte) int16 {
	if len(key) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(key))
}

// replayConsumerRecord applies a consumer group record read back while
// loading. It reports false for records of other types.
func (s *shard) replayConsumerRecord(key, value []byte) (bool, error) {
	if !isConsumerRecordType(consumerRecordKind(key)) {
		return false, nil
	}
	r, err := decodeConsumerRecord(key, value)
	if err != nil {
		return true, err
	}
	s.applyConsumerRecord(r)
	return true, nil
}

// persistedConsumerGroup returns the consumer group id, creating it when
// create is set. An empty classic group under that id (one holding only
// offsets, or emptied before it became a consumer group) is replaced, its
// offsets kept. It returns nil if no consumer group can be had.
func (s *shard) persistedConsumerGroup(id string, create bool) *consumerGroup {
	switch g := s.groups[id].(type) {
	case *consumerGroup:
		return g
	case *classicGroup:
		if len(g.members) > 0 {
			s.log.Warn("consumer group record for a classic group with members; ignoring it", "group", id)
			return nil
		}
		if !create {
			return nil
		}
	case nil:
		if !create {
			return nil
		}
	}
	g := newConsumerGroup(id)
	s.groups[id] = g
	return g
}

// applyConsumerRecord applies one record to the shard: the only way a
// consumer group changes, whether the record was just written or is being
// replayed.
func (s *shard) applyConsumerRecord(r *consumerRecord) {
	if r.recordType == recordTypeGroupMetadata {
		// A classic group emptied and replaced by a consumer group.
		if _, ok := s.groups[r.group].(*classicGroup); ok {
			s.forgetGroup(r.group)
		}
		return
	}
	if r.recordType == recordTypeConsumerGroupMetadata && r.tombstone {
		if g, ok := s.groups[r.group].(*consumerGroup); ok {
			for id := range g.members {
				s.cancelConsumerTimers(g.id, id)
			}
			s.forgetGroup(r.group)
		}
		return
	}
	create := !r.tombstone && r.recordType != recordTypeConsumerGroupCurrentAssignment
	g := s.persistedConsumerGroup(r.group, create)
	if g == nil {
		return
	}
	switch r.recordType {
	case recordTypeConsumerGroupMetadata:
		g.groupEpoch = r.epoch
	case recordTypeConsumerGroupPartitionMetadata:
		g.subscriptionMetadata = r.topics
		if r.tombstone || g.subscriptionMetadata == nil {
			g.subscriptionMetadata = make(map[string]topicInfo)
		}
	case recordTypeConsumerGroupTargetMetadata:
		g.targetAssignmentEpoch = r.epoch
		if r.tombstone {
			g.targetAssignmentEpoch = 0
		}
	case recordTypeConsumerGroupTargetMember:
		if r.tombstone {
			delete(g.target, r.member)
		} else {
			g.target[r.member] = r.partitions
		}
	case recordTypeConsumerGroupRegex:
		if r.tombstone {
			delete(g.resolvedRegexes, r.regex)
		} else {
			g.resolvedRegexes[r.regex] = r.resolved
		}
	case recordTypeConsumerGroupMemberMetadata:
		s.applyMemberMetadata(g, r)
	case recordTypeConsumerGroupCurrentAssignment:
		applyCurrentAssignment(g, r)
	}
}

func (s *shard) applyMemberMetadata(g *consumerGroup, r *consumerRecord) {
	old := g.members[r.member]
	if r.tombstone {
		if old == nil {
			return
		}
		setPartitionEpochs(g, old, nil)
		delete(g.members, r.member)
		if old.instanceID != nil && g.staticMembers[*old.instanceID] == old.id {
			delete(g.staticMembers, *old.instanceID)
		}
		s.cancelConsumerTimers(g.id, r.member)
		return
	}
	m := newConsumerMember(r.member)
	if old != nil {
		m = old.clone()
		if old.instanceID != nil && g.staticMembers[*old.instanceID] == old.id {
			delete(g.staticMembers, *old.instanceID)
		}
	}
	md := r.metadata
	m.instanceID, m.rackID = md.instanceID, md.rackID
	m.clientID, m.clientHost = md.clientID, md.clientHost
	m.subscribedTopicNames, m.subscribedTopicRegex = md.subscribedTopicNames, md.subscribedTopicRegex
	m.rebalanceTimeoutMs, m.serverAssignor = md.rebalanceTimeoutMs, md.serverAssignor
	g.members[m.id] = m
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
}

// applyCurrentAssignment updates a member's epochs and partitions; a
// tombstone leaves the member with epoch -1 and nothing, ready to be
// removed by its metadata tombstone.
func applyCurrentAssignment(g *consumerGroup, r *consumerRecord) {
	old := g.members[r.member]
	if old == nil {
		return // the member's metadata record comes first; a bad log otherwise
	}
	m := old.clone()
	if r.tombstone {
		m.memberEpoch, m.previousMemberEpoch, m.state = leaveMemberEpoch, leaveMemberEpoch, memberStable
		m.assigned, m.pendingRevocation = nil, nil
	} else {
		a := r.assignment
		m.memberEpoch, m.previousMemberEpoch, m.state = a.memberEpoch, a.previousMemberEpoch, a.state
		m.assigned, m.pendingRevocation = a.assigned, a.pendingRevocation
	}
	setPartitionEpochs(g, old, m)
	g.members[m.id] = m
}

// setPartitionEpochs moves the partition ownership of old to updated
// (either may be nil).
func setPartitionEpochs(g *consumerGroup, old, updated *consumerMember) {
	if old != nil {
		for _, a := range []assignment{old.assigned, old.pendingRevocation} {
			for t, ps := range a {
				for _, p := range ps {
					k := partitionKey{t, p}
					if e, ok := g.partitionEpochs[k]; ok && e == old.memberEpoch {
						delete(g.partitionEpochs, k)
					}
				}
			}
		}
	}
	if updated != nil {
		for _, a := range []assignment{updated.assigned, updated.pendingRevocation} {
			for t, ps := range a {
				for _, p := range ps {
					g.partitionEpochs[partitionKey{t, p}] = updated.memberEpoch
				}
			}
		}
	}
}

// forgetGroup forgets a group but not its offsets, as replaying a group's
// tombstone does in Kafka, which keeps offsets apart from groups: a group
// with offsets left becomes a simple group holding them.
func (s *shard) forgetGroup(id string) {
	offsets := s.offsets[id]
	s.removeGroup(id)
	if len(offsets) > 0 {
		s.offsets[id] = offsets
		s.groups[id] = newClassicGroup(id, stateEmpty, -1)
	}
}

// Record constructors, named after Kafka's GroupCoordinatorRecordHelpers.

func groupEpochRecord(group string, epoch int32) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupMetadata, group: group, epoch: epoch}
}

func subscriptionMetadataRecord(group string, topics map[string]topicInfo) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupPartitionMetadata, group: group, topics: topics}
}

func memberMetadataRecord(group string, m *consumerMember) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupMemberMetadata, group: group, member: m.id, metadata: m}
}

func targetEpochRecord(group string, epoch int32) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupTargetMetadata, group: group, epoch: epoch}
}

func targetMemberRecord(group, member string, a assignment) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupTargetMember, group: group, member: member, partitions: a}
}

func currentAssignmentRecord(group string, m *consumerMember) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupCurrentAssignment, group: group, member: m.id, assignment: m}
}

func regexRecord(group, regex string, resolved resolvedRegex) *consumerRecord {
	return &consumerRecord{recordType: recordTypeConsumerGroupRegex, group: group, regex: regex, resolved: resolved}
}

func tombstone(recordType int16, group, member string) *consumerRecord {
	r := &consumerRecord{recordType: recordType, group: group, member: member, tombstone: true}
	if recordType == recordTypeConsumerGroupRegex {
		r.regex, r.member = member, ""
	}
	return r
}

// classicGroupTombstone removes the empty classic group a consumer group
// replaces.
func classicGroupTombstone(group string) *consumerRecord {
	return &consumerRecord{recordType: recordTypeGroupMetadata, group: group, tombstone: true}
}

// memberTombstones removes a member, in the order Kafka writes and needs on
// replay: its current assignment, its target, then its metadata.
func memberTombstones(group, member string) []*consumerRecord {
	return []*consumerRecord{
		tombstone(recordTypeConsumerGroupCurrentAssignment, group, member),
		tombstone(recordTypeConsumerGroupTargetMember, group, member),
		tombstone(recordTypeConsumerGroupMemberMetadata, group, member),
	}
}

// groupTombstones are the records deleting a whole consumer group (Kafka's
// ConsumerGroup.createGroupTombstoneRecords).
func (g *consumerGroup) groupTombstones() []*consumerRecord {
	var out []*consumerRecord
	ids := g.sortedMemberIDs()
	for _, id := range ids {
		out = append(out, tombstone(recordTypeConsumerGroupCurrentAssignment, g.id, id))
	}
	for _, id := range ids {
		out = append(out, tombstone(recordTypeConsumerGroupTargetMember, g.id, id))
	}
	out = append(out, tombstone(recordTypeConsumerGroupTargetMetadata, g.id, ""))
	for _, id := range ids {
		out = append(out, tombstone(recordTypeConsumerGroupMemberMetadata, g.id, id))
	}
	regexes := make([]string, 0, len(g.resolvedRegexes))
	for regex := range g.resolvedRegexes {
		regexes = append(regexes, regex)
	}
	slices.Sort(regexes)
	for _, regex := range regexes {
		out = append(out, tombstone(recordTypeConsumerGroupRegex, g.id, regex))
	}
	out = append(out, tombstone(recordTypeConsumerGroupPartitionMetadata, g.id, ""))
	out = append(out, tombstone(recordTypeConsumerGroupMetadata, g.id, ""))
	return out
}

// groupTombstoneKVs returns the records deleting group id, whatever its
// type: a GroupMetadata tombstone for a classic group, the consumer group
// tombstones for a consumer group.
func (s *shard) groupTombstoneKVs(id string) []KV {
	g, ok := s.groups[id].(*consumerGroup)
	if !ok {
		return []KV{groupMetadataKV(id, nil)}
	}
	var out []KV
	for _, r := range g.groupTombstones() {
		out = append(out, r.kv())
	}
	return out
}

// writeConsumerRecords appends records of group g; once they are written
// they are applied, and done runs (err nil), or done gets the error and the
// group is left as it was. Without records done runs at once.
//
// The group changes only when its records are applied, so two changes of
// one group must not be computed before the first is applied: the driver
// appends a step's writes before the next step, and the consumer timers
// that fire within one step wait for writes pending on their group
// (pendingWrites).
func (s *shard) writeConsumerRecords(now time.Time, g *consumerGroup, records []*consumerRecord, done func(now time.Time, err error)) {
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
				s.applyConsumerRecord(r)
			}
		}
		done(now, err)
	})
}
