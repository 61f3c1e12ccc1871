package group

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The __consumer_offsets records of streams groups (KIP-1071) in Kafka
// 4.4's schemas, drawn in the package doc. kmsg does not define them, so
// they are encoded here. Record type 18 (StreamsGroupPartitionMetadata)
// was retired before Kafka 4.1 in favour of the metadata hash; it is
// neither written nor read.
const (
	recordTypeStreamsGroupMetadata          int16 = 17
	recordTypeStreamsGroupMemberMetadata    int16 = 19
	recordTypeStreamsGroupTargetMetadata    int16 = 20
	recordTypeStreamsGroupTargetMember      int16 = 21
	recordTypeStreamsGroupCurrentAssignment int16 = 22
	recordTypeStreamsGroupTopology          int16 = 23
)

const streamsValueVersion int16 = 0

func isStreamsRecordType(t int16) bool {
	switch t {
	case recordTypeStreamsGroupMetadata, recordTypeStreamsGroupMemberMetadata, recordTypeStreamsGroupTargetMetadata,
		recordTypeStreamsGroupTargetMember, recordTypeStreamsGroupCurrentAssignment, recordTypeStreamsGroupTopology:
		return true
	}
	return false
}

func isStreamsMemberKeyed(t int16) bool {
	return t == recordTypeStreamsGroupMemberMetadata || t == recordTypeStreamsGroupTargetMember || t == recordTypeStreamsGroupCurrentAssignment
}

// Tags of StreamsGroupMetadataValue.
const (
	streamsMetadataTagValidatedTopologyEpoch = 0
)

// maxStreamsRecordElements bounds every array a streams record decodes,
// so that a corrupt length cannot make the decoder allocate without limit.
const maxStreamsRecordElements = 1 << 20

// streamsRecord is one decoded record of a streams group. Exactly the
// fields of its type are set; tombstone marks a null value.
type streamsRecord struct {
	recordType int16
	group      string
	member     string // member-keyed records
	tombstone  bool

	// 17: the group epoch, metadata hash and validated topology epoch;
	// 20: the target assignment epoch in epoch.
	epoch                  int32
	metadataHash           int64
	validatedTopologyEpoch int32
	// 19: the member's metadata fields; 22: its epochs, state and tasks.
	// Both are partial members.
	metadata   *streamsMember
	assignment *streamsMember
	// 21: a member's target.
	tasks streamsTasks
	// 23: the topology.
	topology *streamsTopology
	// raw, when set, is a record of another kind written with the group's
	// (the tombstone of an empty classic group a streams group replaces).
	raw *KV
}

func (r *streamsRecord) kv() KV {
	if r.raw != nil {
		return *r.raw
	}
	key := kbin.AppendInt16(nil, r.recordType)
	key = kbin.AppendString(key, r.group)
	if isStreamsMemberKeyed(r.recordType) {
		key = kbin.AppendString(key, r.member)
	}
	if r.tombstone {
		return KV{Key: key}
	}
	v := kbin.AppendInt16(nil, streamsValueVersion)
	switch r.recordType {
	case recordTypeStreamsGroupMetadata:
		v = kbin.AppendInt32(v, r.epoch)
		v = kbin.AppendInt64(v, r.metadataHash)
		if r.validatedTopologyEpoch != -1 {
			v = kbin.AppendUvarint(v, 1)
			v = kbin.AppendUvarint(v, streamsMetadataTagValidatedTopologyEpoch)
			v = kbin.AppendUvarint(v, 4)
			v = kbin.AppendInt32(v, r.validatedTopologyEpoch)
			return KV{Key: key, Value: v}
		}
	case recordTypeStreamsGroupTargetMetadata:
		v = kbin.AppendInt32(v, r.epoch)
	case recordTypeStreamsGroupMemberMetadata:
		m := r.metadata
		v = kbin.AppendCompactNullableString(v, m.instanceID)
		v = kbin.AppendCompactNullableString(v, m.rackID)
		v = kbin.AppendCompactString(v, m.clientID)
		v = kbin.AppendCompactString(v, m.clientHost)
		v = kbin.AppendInt32(v, m.rebalanceTimeoutMs)
		v = kbin.AppendInt32(v, m.topologyEpoch)
		v = kbin.AppendCompactString(v, m.processID)
		if m.userEndpoint == nil {
			v = kbin.AppendInt8(v, -1)
		} else {
			v = kbin.AppendInt8(v, 1)
			v = kbin.AppendCompactString(v, m.userEndpoint.host)
			v = kbin.AppendUint16(v, m.userEndpoint.port)
			v = appendNoTags(v)
		}
		v = kbin.AppendCompactArrayLen(v, len(m.clientTags))
		for _, kv := range m.clientTags {
			v = kbin.AppendCompactString(v, kv.key)
			v = kbin.AppendCompactString(v, kv.value)
			v = appendNoTags(v)
		}
	case recordTypeStreamsGroupTargetMember:
		v = appendTaskSet(v, r.tasks.active)
		v = appendTaskSet(v, r.tasks.standby)
		v = appendTaskSet(v, r.tasks.warmup)
	case recordTypeStreamsGroupCurrentAssignment:
		m := r.assignment
		v = kbin.AppendInt32(v, m.memberEpoch)
		v = kbin.AppendInt32(v, m.previousMemberEpoch)
		v = kbin.AppendInt8(v, int8(m.state))
		for _, s := range []taskSet{m.assigned.active, m.assigned.standby, m.assigned.warmup,
			m.pendingRevocation.active, m.pendingRevocation.standby, m.pendingRevocation.warmup} {
			v = appendTaskSet(v, s)
		}
	case recordTypeStreamsGroupTopology:
		v = appendTopology(v, r.topology)
	}
	return KV{Key: key, Value: appendNoTags(v)}
}

func appendTaskSet(b []byte, s taskSet) []byte {
	ids := slices.Sorted(func(yield func(string) bool) {
		for st := range s {
			if !yield(st) {
				return
			}
		}
	})
	b = kbin.AppendCompactArrayLen(b, len(ids))
	for _, st := range ids {
		b = kbin.AppendCompactString(b, st)
		b = kbin.AppendCompactArrayLen(b, len(s[st]))
		for _, p := range s[st] {
			b = kbin.AppendInt32(b, p)
		}
		b = appendNoTags(b)
	}
	return b
}

func appendCompactStrings(b []byte, ss []string) []byte {
	b = kbin.AppendCompactArrayLen(b, len(ss))
	for _, s := range ss {
		b = kbin.AppendCompactString(b, s)
	}
	return b
}

func appendTopicInfos(b []byte, infos []streamsTopicInfo) []byte {
	b = kbin.AppendCompactArrayLen(b, len(infos))
	for _, t := range infos {
		b = kbin.AppendCompactString(b, t.name)
		b = kbin.AppendInt32(b, t.partitions)
		b = kbin.AppendInt16(b, t.replicationFactor)
		b = kbin.AppendCompactArrayLen(b, len(t.configs))
		for _, c := range t.configs {
			b = kbin.AppendCompactString(b, c.key)
			b = kbin.AppendCompactString(b, c.value)
			b = appendNoTags(b)
		}
		b = appendNoTags(b)
	}
	return b
}

func appendInt16s(b []byte, xs []int16) []byte {
	b = kbin.AppendCompactArrayLen(b, len(xs))
	for _, x := range xs {
		b = kbin.AppendInt16(b, x)
	}
	return b
}

func appendTopology(b []byte, t *streamsTopology) []byte {
	b = kbin.AppendInt32(b, t.epoch)
	b = kbin.AppendCompactArrayLen(b, len(t.subtopologies))
	for _, st := range t.subtopologies {
		b = kbin.AppendCompactString(b, st.id)
		b = appendCompactStrings(b, st.sourceTopics)
		b = appendCompactStrings(b, st.sourceTopicRegex)
		b = appendTopicInfos(b, st.stateChangelogTopics)
		b = appendCompactStrings(b, st.repartitionSinkTopics)
		b = appendTopicInfos(b, st.repartitionSourceTopics)
		b = kbin.AppendCompactArrayLen(b, len(st.copartitionGroups))
		for _, cg := range st.copartitionGroups {
			b = appendInt16s(b, cg.sourceTopics)
			b = appendInt16s(b, cg.sourceTopicRegex)
			b = appendInt16s(b, cg.repartitionSourceTopics)
			b = appendNoTags(b)
		}
		b = appendNoTags(b)
	}
	return b
}

// decodeStreamsRecord decodes a record whose key has a streams group
// record type. Errors wrap ErrCorrupt.
func decodeStreamsRecord(key, value []byte) (*streamsRecord, error) {
	if len(key) < 2 {
		return nil, fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(key))
	}
	k := kbin.Reader{Src: key}
	r := &streamsRecord{recordType: k.Int16(), group: k.String(), validatedTopologyEpoch: -1}
	if isStreamsMemberKeyed(r.recordType) {
		r.member = k.String()
	}
	if !k.Ok() || len(k.Src) != 0 {
		return nil, fmt.Errorf("%w: streams group record key of type %d", ErrCorrupt, r.recordType)
	}
	if !isStreamsRecordType(r.recordType) {
		return nil, fmt.Errorf("%w: %d", ErrUnknownRecordType, r.recordType)
	}
	if value == nil {
		r.tombstone = true
		return r, nil
	}
	if err := checkValueVersion(value, streamsValueVersion); err != nil {
		return nil, fmt.Errorf("streams group record value of type %d: %w", r.recordType, err)
	}
	v := kbin.Reader{Src: value[2:]}
	d := streamsDecoder{b: &v}
	switch r.recordType {
	case recordTypeStreamsGroupMetadata:
		r.epoch = v.Int32()
		r.metadataHash = v.Int64()
		d.tags(func(tag uint32, data []byte) {
			if tag == streamsMetadataTagValidatedTopologyEpoch && len(data) == 4 {
				t := kbin.Reader{Src: data}
				r.validatedTopologyEpoch = t.Int32()
			}
		})
	case recordTypeStreamsGroupTargetMetadata:
		r.epoch = v.Int32()
		d.tags(nil)
	case recordTypeStreamsGroupMemberMetadata:
		m := newStreamsMember(r.member)
		m.instanceID = v.CompactNullableString()
		m.rackID = v.CompactNullableString()
		m.clientID = v.CompactString()
		m.clientHost = v.CompactString()
		m.rebalanceTimeoutMs = v.Int32()
		m.topologyEpoch = v.Int32()
		m.processID = v.CompactString()
		if present := v.Int8(); present >= 0 {
			m.userEndpoint = &streamsEndpoint{host: v.CompactString(), port: v.Uint16()}
			d.tags(nil)
		}
		m.clientTags = d.keyValues()
		d.tags(nil)
		r.metadata = m
	case recordTypeStreamsGroupTargetMember:
		r.tasks = streamsTasks{active: d.taskSet(), standby: d.taskSet(), warmup: d.taskSet()}
		d.tags(nil)
	case recordTypeStreamsGroupCurrentAssignment:
		m := newStreamsMember(r.member)
		m.memberEpoch = v.Int32()
		m.previousMemberEpoch = v.Int32()
		m.state = memberStateFromValue(v.Int8())
		m.assigned = streamsTasks{active: d.taskSet(), standby: d.taskSet(), warmup: d.taskSet()}
		m.pendingRevocation = streamsTasks{active: d.taskSet(), standby: d.taskSet(), warmup: d.taskSet()}
		d.tags(nil)
		r.assignment = m
	case recordTypeStreamsGroupTopology:
		r.topology = d.topology()
		d.tags(nil)
	}
	if !v.Ok() || len(v.Src) != 0 {
		return nil, fmt.Errorf("%w: streams group record value of type %d", ErrCorrupt, r.recordType)
	}
	return r, nil
}

// streamsDecoder reads the structures of streams records, marking the
// reader bad on a length out of bounds.
type streamsDecoder struct{ b *kbin.Reader }

// arrayLen reads a compact array length, bounded by the bytes left (every
// element takes at least min bytes) and maxStreamsRecordElements.
func (d streamsDecoder) arrayLen(minElementBytes int) int {
	n := d.b.CompactArrayLen()
	if n < 0 {
		return 0
	}
	if int(n) > maxStreamsRecordElements || int(n)*minElementBytes > len(d.b.Src) {
		d.b.Span(-1) // marks the reader bad
		return 0
	}
	return int(n)
}

// tags reads a tagged-field section, handing each field to fn (nil: skip).
func (d streamsDecoder) tags(fn func(tag uint32, data []byte)) {
	n := d.b.Uvarint()
	for i := uint32(0); i < n && d.b.Ok(); i++ {
		tag := d.b.Uvarint()
		data := d.b.Span(int(d.b.Uvarint()))
		if fn != nil && d.b.Ok() {
			fn(tag, data)
		}
	}
}

func (d streamsDecoder) strings() []string {
	n := d.arrayLen(1)
	out := make([]string, 0, n)
	for range n {
		out = append(out, d.b.CompactString())
	}
	return out
}

func (d streamsDecoder) int16s() []int16 {
	n := d.arrayLen(2)
	out := make([]int16, 0, n)
	for range n {
		out = append(out, d.b.Int16())
	}
	return out
}

func (d streamsDecoder) keyValues() []keyValue {
	n := d.arrayLen(3)
	out := make([]keyValue, 0, n)
	for range n {
		kv := keyValue{key: d.b.CompactString(), value: d.b.CompactString()}
		d.tags(nil)
		out = append(out, kv)
	}
	return out
}

func (d streamsDecoder) taskSet() taskSet {
	n := d.arrayLen(3)
	raw := make(map[string][]int32, n)
	for range n {
		st := d.b.CompactString()
		np := d.arrayLen(4)
		ps := make([]int32, 0, np)
		for range np {
			ps = append(ps, d.b.Int32())
		}
		raw[st] = append(raw[st], ps...)
		d.tags(nil) // AssignmentEpochs (tag 0) are not kept
		if !d.b.Ok() {
			break
		}
	}
	return newTaskSet(raw)
}

func (d streamsDecoder) topicInfos() []streamsTopicInfo {
	n := d.arrayLen(9)
	out := make([]streamsTopicInfo, 0, n)
	for range n {
		t := streamsTopicInfo{name: d.b.CompactString(), partitions: d.b.Int32(), replicationFactor: d.b.Int16()}
		t.configs = d.keyValues()
		d.tags(nil)
		out = append(out, t)
		if !d.b.Ok() {
			break
		}
	}
	return out
}

func (d streamsDecoder) topology() *streamsTopology {
	t := &streamsTopology{epoch: d.b.Int32()}
	n := d.arrayLen(8)
	for range n {
		st := streamsSubtopology{id: d.b.CompactString()}
		st.sourceTopics = d.strings()
		st.sourceTopicRegex = d.strings()
		st.stateChangelogTopics = d.topicInfos()
		st.repartitionSinkTopics = d.strings()
		st.repartitionSourceTopics = d.topicInfos()
		ng := d.arrayLen(4)
		for range ng {
			cg := copartitionGroup{sourceTopics: d.int16s(), sourceTopicRegex: d.int16s(), repartitionSourceTopics: d.int16s()}
			d.tags(nil)
			st.copartitionGroups = append(st.copartitionGroups, cg)
		}
		d.tags(nil)
		t.subtopologies = append(t.subtopologies, st)
		if !d.b.Ok() {
			break
		}
	}
	return t
}

// Record constructors, named after Kafka's StreamsCoordinatorRecordHelpers.

func streamsGroupMetadataRecord(group string, epoch int32, metadataHash int64, validatedTopologyEpoch int32) *streamsRecord {
	return &streamsRecord{recordType: recordTypeStreamsGroupMetadata, group: group, epoch: epoch, metadataHash: metadataHash, validatedTopologyEpoch: validatedTopologyEpoch}
}

func streamsMemberRecord(group string, m *streamsMember) *streamsRecord {
	return &streamsRecord{recordType: recordTypeStreamsGroupMemberMetadata, group: group, member: m.id, metadata: m}
}

func streamsTargetEpochRecord(group string, epoch int32) *streamsRecord {
	return &streamsRecord{recordType: recordTypeStreamsGroupTargetMetadata, group: group, epoch: epoch}
}

func streamsTargetRecord(group, member string, tasks streamsTasks) *streamsRecord {
	return &streamsRecord{recordType: recordTypeStreamsGroupTargetMember, group: group, member: member, tasks: tasks}
}

func streamsCurrentAssignmentRecord(group string, m *streamsMember) *streamsRecord {
	return &streamsRecord{recordType: recordTypeStreamsGroupCurrentAssignment, group: group, member: m.id, assignment: m}
}

func streamsTopologyRecord(group string, t *streamsTopology) *streamsRecord {
	return &streamsRecord{recordType: recordTypeStreamsGroupTopology, group: group, topology: t}
}

func streamsTombstone(recordType int16, group, member string) *streamsRecord {
	return &streamsRecord{recordType: recordType, group: group, member: member, tombstone: true}
}

// streamsMemberTombstones removes a member, in the order Kafka writes
// them: its current assignment, its target, then its metadata.
func streamsMemberTombstones(group, member string) []*streamsRecord {
	return []*streamsRecord{
		streamsTombstone(recordTypeStreamsGroupCurrentAssignment, group, member),
		streamsTombstone(recordTypeStreamsGroupTargetMember, group, member),
		streamsTombstone(recordTypeStreamsGroupMemberMetadata, group, member),
	}
}

// groupTombstones are the records deleting a whole streams group (Kafka's
// StreamsGroup.createGroupTombstoneRecords): members' assignments, targets,
// the target epoch, members' metadata, the topology, last the epoch.
func (g *streamsGroup) groupTombstones() []*streamsRecord {
	var out []*streamsRecord
	ids := g.sortedMemberIDs()
	for _, id := range ids {
		out = append(out, streamsTombstone(recordTypeStreamsGroupCurrentAssignment, g.id, id))
	}
	for _, id := range ids {
		out = append(out, streamsTombstone(recordTypeStreamsGroupTargetMember, g.id, id))
	}
	out = append(out, streamsTombstone(recordTypeStreamsGroupTargetMetadata, g.id, ""))
	for _, id := range ids {
		out = append(out, streamsTombstone(recordTypeStreamsGroupMemberMetadata, g.id, id))
	}
	out = append(out, streamsTombstone(recordTypeStreamsGroupTopology, g.id, ""))
	return append(out, streamsTombstone(recordTypeStreamsGroupMetadata, g.id, ""))
}
