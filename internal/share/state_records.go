package share

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The __share_group_state records, in Kafka's share coordinator schemas.
// Keys are not flexible: an int16 record type, then the fields.
//
//	0 ShareSnapshotKey | type int16 = 0 | group int16 len + UTF-8 | topicId uuid | partition int32 |
//	1 ShareUpdateKey   | type int16 = 1 | (the same fields)                                   |
//
// Values are version 0 and flexible: an int16 version, the fields, compact
// arrays (unsigned varint length+1), and tagged fields (written empty,
// skipped when read) closing every struct.
//
//	ShareSnapshotValue: snapshotEpoch uint16, stateEpoch int32,
//	    leaderEpoch int32, startOffset int64, stateBatches [StateBatch]
//	ShareUpdateValue:   snapshotEpoch uint16, leaderEpoch int32,
//	    startOffset int64 (-1: unchanged), stateBatches [StateBatch]
//	StateBatch: firstOffset int64, lastOffset int64, deliveryState int8
//	    (0 available, 2 acknowledged, 4 archived), deliveryCount int16
//
// For example the snapshot of group "g", an all-zero topic id, partition
// 0, at snapshot epoch 1, state epoch 0, leader epoch 3, start offset 10,
// with offsets 10-11 acknowledged once:
//
//	key:   00 00  00 01 67  00*16  00 00 00 00
//	value: 00 00  00 01  00 00 00 00  00 00 00 03  00 00 00 00 00 00 00 0a
//	       02  00 00 00 00 00 00 00 0a  00 00 00 00 00 00 00 0b  02  00 01  00  00
//
// A null value (tombstone) deletes the share-partition's state. Samsa writes
// a snapshot for every change (a compacted topic keeps the last one) and
// reads updates, applying them to the snapshot before them.
const (
	recordTypeShareSnapshot int16 = 0
	recordTypeShareUpdate   int16 = 1
)

// ErrCorruptStateRecord marks a __share_group_state record that cannot be
// decoded.
var ErrCorruptStateRecord = errors.New("share: corrupt __share_group_state record")

// PersistedState is one share-partition's durable state.
type PersistedState struct {
	SnapshotEpoch int32
	StateEpoch    int32
	LeaderEpoch   int32
	StartOffset   int64
	Batches       []StateBatch
}

// StateRecord is a decoded __share_group_state record.
type StateRecord struct {
	Key Key
	// Update marks a ShareUpdate (else a ShareSnapshot); Tombstone a null
	// value.
	Update    bool
	Tombstone bool
	State     PersistedState
}

// CoordinatorKey is the string Kafka hashes to place a share-partition's
// state: "group:topicId:partition", the topic id in Kafka's base64 form.
func (k Key) CoordinatorKey() string {
	return fmt.Sprintf("%s:%s:%d", k.Group, base64.RawURLEncoding.EncodeToString(k.TopicID[:]), k.Partition)
}

// EncodeSnapshot encodes a ShareSnapshot record of key (tombstone: a null
// value).
func EncodeSnapshot(key Key, s PersistedState, tombstone bool) (k, v []byte) {
	k = kbin.AppendInt16(nil, recordTypeShareSnapshot)
	k = kbin.AppendString(k, key.Group)
	k = kbin.AppendUuid(k, key.TopicID)
	k = kbin.AppendInt32(k, key.Partition)
	if tombstone {
		return k, nil
	}
	v = kbin.AppendInt16(nil, 0)
	v = kbin.AppendUint16(v, uint16(s.SnapshotEpoch))
	v = kbin.AppendInt32(v, s.StateEpoch)
	v = kbin.AppendInt32(v, s.LeaderEpoch)
	v = kbin.AppendInt64(v, s.StartOffset)
	v = appendStateBatches(v, s.Batches)
	return k, kbin.AppendUvarint(v, 0)
}

func appendStateBatches(v []byte, batches []StateBatch) []byte {
	v = kbin.AppendCompactArrayLen(v, len(batches))
	for _, b := range batches {
		v = kbin.AppendInt64(v, b.FirstOffset)
		v = kbin.AppendInt64(v, b.LastOffset)
		v = kbin.AppendInt8(v, int8(b.State))
		v = kbin.AppendInt16(v, b.DeliveryCount)
		v = kbin.AppendUvarint(v, 0)
	}
	return v
}

// DecodeStateRecord decodes a __share_group_state record. Errors wrap
// ErrCorruptStateRecord.
func DecodeStateRecord(key, value []byte) (StateRecord, error) {
	var r StateRecord
	if len(key) < 2 {
		return r, fmt.Errorf("%w: short key", ErrCorruptStateRecord)
	}
	switch t := int16(binary.BigEndian.Uint16(key)); t {
	case recordTypeShareSnapshot:
	case recordTypeShareUpdate:
		r.Update = true
	default:
		return r, fmt.Errorf("%w: record type %d", ErrCorruptStateRecord, t)
	}
	kb := kbin.Reader{Src: key[2:]}
	r.Key.Group = kb.String()
	r.Key.TopicID = kb.Uuid()
	r.Key.Partition = kb.Int32()
	if err := kb.Complete(); err != nil {
		return r, fmt.Errorf("%w: key: %v", ErrCorruptStateRecord, err)
	}
	if value == nil {
		r.Tombstone = true
		return r, nil
	}
	vb := kbin.Reader{Src: value}
	if version := vb.Int16(); vb.Ok() && version != 0 {
		return r, fmt.Errorf("%w: value version %d", ErrCorruptStateRecord, version)
	}
	r.State.SnapshotEpoch = int32(vb.Uint16())
	if !r.Update {
		r.State.StateEpoch = vb.Int32()
	}
	r.State.LeaderEpoch = vb.Int32()
	r.State.StartOffset = vb.Int64()
	n := vb.CompactArrayLen()
	if n > int32(len(vb.Src)) {
		return r, fmt.Errorf("%w: %d state batches in %d bytes", ErrCorruptStateRecord, n, len(vb.Src))
	}
	for i := int32(0); i < n && vb.Ok(); i++ {
		var b StateBatch
		b.FirstOffset = vb.Int64()
		b.LastOffset = vb.Int64()
		b.State = RecordState(vb.Int8())
		b.DeliveryCount = vb.Int16()
		skipStateTags(&vb)
		if b.FirstOffset > b.LastOffset {
			return r, fmt.Errorf("%w: state batch %d-%d", ErrCorruptStateRecord, b.FirstOffset, b.LastOffset)
		}
		r.State.Batches = append(r.State.Batches, b)
	}
	skipStateTags(&vb)
	if err := vb.Complete(); err != nil {
		return r, fmt.Errorf("%w: value: %v", ErrCorruptStateRecord, err)
	}
	return r, nil
}

func skipStateTags(b *kbin.Reader) {
	n := b.Uvarint()
	for i := uint32(0); i < n && b.Ok(); i++ {
		b.Uvarint()
		b.Span(int(b.Uvarint()))
	}
}

// MergeBatches overlays update on base: offsets update names take its
// state, the rest keep base's; offsets below startOffset are dropped. The
// result is sorted and free of overlaps when update is.
func MergeBatches(base, update []StateBatch, startOffset int64) []StateBatch {
	var out []StateBatch
	for _, b := range base {
		pieces := []StateBatch{b}
		for _, u := range update {
			var next []StateBatch
			for _, p := range pieces {
				if u.LastOffset < p.FirstOffset || u.FirstOffset > p.LastOffset {
					next = append(next, p)
					continue
				}
				if p.FirstOffset < u.FirstOffset {
					left := p
					left.LastOffset = u.FirstOffset - 1
					next = append(next, left)
				}
				if p.LastOffset > u.LastOffset {
					right := p
					right.FirstOffset = u.LastOffset + 1
					next = append(next, right)
				}
			}
			pieces = next
		}
		out = append(out, pieces...)
	}
	out = append(out, update...)
	slices.SortFunc(out, func(a, b StateBatch) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	clipped := out[:0]
	for _, b := range out {
		if b.LastOffset < startOffset {
			continue
		}
		b.FirstOffset = max(b.FirstOffset, startOffset)
		clipped = append(clipped, b)
	}
	return clipped
}
