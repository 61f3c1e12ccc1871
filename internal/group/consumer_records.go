package group

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The __consumer_offsets records of consumer-protocol (KIP-848) groups, in
// Kafka 4.0's schemas, drawn in the package doc. kmsg does not define them,
// so they are encoded here.
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
	if sg, ok := s.groups[id].(*streamsGroup); ok {
		var out []KV
		for _, r := range sg.groupTombstones() {
			out = append(out, r.kv())
		}
		return out
	}
	if _, ok := s.groups[id].(*shareGroup); ok {
		return s.shareGroupTombstoneKVs(id)
	}
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
