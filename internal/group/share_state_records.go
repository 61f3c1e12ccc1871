package group

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The ShareGroupStatePartitionMetadata record (type 15 of
// __consumer_offsets, Kafka 4.4's schema): the topic-partitions of a share
// group whose durable share state is being initialized, is initialized, or
// is being deleted. DescribeShareGroupOffsets without topics answers the
// initialized ones, so they outlive a coordinator failover.
//
//	key:   type int16 = 15 | group int16 len + UTF-8
//	value: version int16 = 0 (flexible: compact arrays and strings are
//	       uvarint length + 1, each struct ends with tagged fields)
//	       InitializingTopics []TopicPartitionsInfo
//	       InitializedTopics  []TopicPartitionsInfo
//	       DeletingTopics     []TopicInfo
//	       tags uvarint
//	TopicPartitionsInfo: TopicId uuid | TopicName string |
//	       Partitions []int32 | CreateTimestamp int64 | tags
//	TopicInfo: TopicId uuid | TopicName string | tags
//
// For example group "g" with partitions 0 and 1 of topic "t" (id 01 00 ..
// 00) initialized at time 5:
//
//	key:   00 0f  00 01 67
//	value: 00 00  01  02  01 00..00  02 74  03 00 00 00 00 00 00 00 01
//	       00 00 00 00 00 00 00 05  00  01  00
//
// The whole value is written whenever one of the sets changes, and its
// tombstone deletes the group with the other share records.

// shareStateTopic is one topic of the record: its name and partitions.
type shareStateTopic struct {
	name string
	// partitions are sorted and distinct; empty for a deleting topic.
	partitions []int32
	// createTimestampMs is when the topic was added to its set.
	createTimestampMs int64
}

// shareStatePartitions is a share group's ShareGroupStatePartitionMetadata.
type shareStatePartitions struct {
	initializing map[[16]byte]shareStateTopic
	initialized  map[[16]byte]shareStateTopic
	deleting     map[[16]byte]shareStateTopic
}

func (p *shareStatePartitions) empty() bool {
	return len(p.initializing) == 0 && len(p.initialized) == 0 && len(p.deleting) == 0
}

// addInitialized adds partitions of a topic to the initialized set (and
// takes them out of initializing); it reports whether the set changed.
func (p *shareStatePartitions) addInitialized(topicID [16]byte, name string, partitions []int32, nowMs int64) bool {
	if p.initialized == nil {
		p.initialized = map[[16]byte]shareStateTopic{}
	}
	t, ok := p.initialized[topicID]
	if !ok {
		t = shareStateTopic{name: name, createTimestampMs: nowMs}
	}
	merged := slices.Clone(t.partitions)
	merged = append(merged, partitions...)
	slices.Sort(merged)
	merged = slices.Compact(merged)
	changed := !ok || !slices.Equal(merged, t.partitions) || t.name != name
	t.partitions, t.name = merged, name
	p.initialized[topicID] = t
	if it, ok := p.initializing[topicID]; ok {
		it.partitions = slices.DeleteFunc(slices.Clone(it.partitions), func(q int32) bool { return slices.Contains(partitions, q) })
		if len(it.partitions) == 0 {
			delete(p.initializing, topicID)
		} else {
			p.initializing[topicID] = it
		}
		changed = true
	}
	delete(p.deleting, topicID)
	return changed
}

// markDeleting moves a topic out of the initializing and initialized sets
// into the deleting set.
func (p *shareStatePartitions) markDeleting(topicID [16]byte, name string, nowMs int64) {
	delete(p.initializing, topicID)
	delete(p.initialized, topicID)
	if p.deleting == nil {
		p.deleting = map[[16]byte]shareStateTopic{}
	}
	p.deleting[topicID] = shareStateTopic{name: name, createTimestampMs: nowMs}
}

// shareGroupStatePartitionsKV encodes group's record; nil state writes
// the tombstone.
func shareGroupStatePartitionsKV(group string, state *shareStatePartitions) KV {
	key := kbin.AppendInt16(nil, recordTypeShareGroupStatePartitions)
	key = kbin.AppendString(key, group)
	if state == nil {
		return KV{Key: key}
	}
	v := kbin.AppendInt16(nil, 0)
	v = appendShareStateTopics(v, state.initializing, true)
	v = appendShareStateTopics(v, state.initialized, true)
	v = appendShareStateTopics(v, state.deleting, false)
	return KV{Key: key, Value: appendNoTags(v)}
}

func appendShareStateTopics(dst []byte, topics map[[16]byte]shareStateTopic, withPartitions bool) []byte {
	ids := slices.SortedFunc(maps.Keys(topics), func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	dst = kbin.AppendCompactArrayLen(dst, len(ids))
	for _, id := range ids {
		t := topics[id]
		dst = kbin.AppendUuid(dst, id)
		dst = kbin.AppendCompactString(dst, t.name)
		if withPartitions {
			dst = kbin.AppendCompactArrayLen(dst, len(t.partitions))
			for _, p := range t.partitions {
				dst = kbin.AppendInt32(dst, p)
			}
			dst = kbin.AppendInt64(dst, t.createTimestampMs)
		}
		dst = appendNoTags(dst)
	}
	return dst
}

// shareGroupStatePartitions is a decoded ShareGroupStatePartitionMetadata
// record.
type shareGroupStatePartitions struct {
	group     string
	tombstone bool
	state     shareStatePartitions
}

// decodeShareGroupStatePartitions decodes a ShareGroupStatePartitionMetadata
// record.
func decodeShareGroupStatePartitions(key, value []byte) (shareGroupStatePartitions, error) {
	var out shareGroupStatePartitions
	if len(key) < 2 || int16(binary.BigEndian.Uint16(key)) != recordTypeShareGroupStatePartitions {
		return out, fmt.Errorf("%w: not a share group state partition metadata key", ErrCorrupt)
	}
	kb := kbin.Reader{Src: key[2:]}
	out.group = kb.String()
	if err := kb.Complete(); err != nil {
		return out, fmt.Errorf("%w: share group state partition metadata key: %v", ErrCorrupt, err)
	}
	if value == nil {
		out.tombstone = true
		return out, nil
	}
	vb := kbin.Reader{Src: value}
	if version := vb.Int16(); vb.Ok() && version != 0 {
		return out, fmt.Errorf("%w: share group state partition metadata value version %d", ErrCorrupt, version)
	}
	var err error
	if out.state.initializing, err = readShareStateTopics(&vb, true); err == nil {
		if out.state.initialized, err = readShareStateTopics(&vb, true); err == nil {
			out.state.deleting, err = readShareStateTopics(&vb, false)
		}
	}
	if err != nil {
		return out, err
	}
	skipTags(&vb)
	if err := vb.Complete(); err != nil {
		return out, fmt.Errorf("%w: share group state partition metadata value: %v", ErrCorrupt, err)
	}
	return out, nil
}

// shareStateTopicMinBytes is the least a topic entry takes on the wire
// (id, empty name, no partitions, timestamp, no tags), which bounds what
// a length read from the record may make us allocate.
const shareStateTopicMinBytes = 16 + 1 + 1

func readShareStateTopics(b *kbin.Reader, withPartitions bool) (map[[16]byte]shareStateTopic, error) {
	n := b.CompactArrayLen()
	if !b.Ok() || n < 0 || int(n) > len(b.Src)/shareStateTopicMinBytes {
		return nil, fmt.Errorf("%w: share group state partition metadata: bad topic count %d", ErrCorrupt, n)
	}
	if n == 0 {
		return nil, nil
	}
	out := make(map[[16]byte]shareStateTopic, n)
	for range n {
		id := b.Uuid()
		t := shareStateTopic{name: b.CompactString()}
		if withPartitions {
			np := b.CompactArrayLen()
			if !b.Ok() || np < 0 || int(np) > len(b.Src)/4 {
				return nil, fmt.Errorf("%w: share group state partition metadata: bad partition count %d", ErrCorrupt, np)
			}
			for range np {
				t.partitions = append(t.partitions, b.Int32())
			}
			slices.Sort(t.partitions)
			t.partitions = slices.Compact(t.partitions)
			t.createTimestampMs = b.Int64()
		}
		skipTags(b)
		if !b.Ok() {
			return nil, fmt.Errorf("%w: share group state partition metadata: truncated topic", ErrCorrupt)
		}
		out[id] = t
	}
	return out, nil
}
