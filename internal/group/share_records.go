package group

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The __consumer_offsets record of share groups written here, in Kafka's
// schema:
//
//	11 ShareGroupMetadataKey    | type int16 = 11 | group int16 len + UTF-8 |
//	   ShareGroupMetadataValue  | version int16 = 0 | epoch int32 | metadataHash int64 | tags uvarint |
//
// For example group "g" at epoch 5 with metadata hash 0:
//
//	key:   00 0b  00 01 67
//	value: 00 00  00 00 00 05  00 00 00 00 00 00 00 00  00
//
// It is written whenever the group epoch moves and its tombstone deletes
// the group; members, their target and current assignments live in memory
// (Kafka's types 10, 12, 13 and 14 are read past, not written): after a
// coordinator failover the group keeps its id, type, epoch and its
// initialized share-partitions (type 15, share_state_records.go), and its
// members rejoin with epoch 0 on their next heartbeat (UNKNOWN_MEMBER_ID).
const (
	recordTypeShareGroupMemberMetadata    int16 = 10
	recordTypeShareGroupMetadata          int16 = 11
	recordTypeShareGroupTargetMetadata    int16 = 12
	recordTypeShareGroupTargetMember      int16 = 13
	recordTypeShareGroupCurrentAssignment int16 = 14
	recordTypeShareGroupStatePartitions   int16 = 15
)

func isShareRecordType(t int16) bool {
	return t >= recordTypeShareGroupMemberMetadata && t <= recordTypeShareGroupStatePartitions
}

// shareGroupMetadataKV encodes the ShareGroupMetadata record of group;
// tombstone writes a null value.
func shareGroupMetadataKV(group string, epoch int32, metadataHash int64, tombstone bool) KV {
	key := kbin.AppendInt16(nil, recordTypeShareGroupMetadata)
	key = kbin.AppendString(key, group)
	if tombstone {
		return KV{Key: key}
	}
	v := kbin.AppendInt16(nil, 0)
	v = kbin.AppendInt32(v, epoch)
	v = kbin.AppendInt64(v, metadataHash)
	return KV{Key: key, Value: appendNoTags(v)}
}

// shareGroupMetadata is a decoded ShareGroupMetadata record.
type shareGroupMetadata struct {
	group        string
	tombstone    bool
	epoch        int32
	metadataHash int64
}

// decodeShareGroupMetadata decodes a ShareGroupMetadata record.
func decodeShareGroupMetadata(key, value []byte) (shareGroupMetadata, error) {
	var out shareGroupMetadata
	if len(key) < 2 || int16(binary.BigEndian.Uint16(key)) != recordTypeShareGroupMetadata {
		return out, fmt.Errorf("%w: not a share group metadata key", ErrCorrupt)
	}
	kb := kbin.Reader{Src: key[2:]}
	out.group = kb.String()
	if err := kb.Complete(); err != nil {
		return out, fmt.Errorf("%w: share group metadata key: %v", ErrCorrupt, err)
	}
	if value == nil {
		out.tombstone = true
		return out, nil
	}
	vb := kbin.Reader{Src: value}
	if version := vb.Int16(); vb.Ok() && version != 0 {
		return out, fmt.Errorf("%w: share group metadata value version %d", ErrCorrupt, version)
	}
	out.epoch = vb.Int32()
	out.metadataHash = vb.Int64()
	skipTags(&vb)
	if err := vb.Complete(); err != nil {
		return out, fmt.Errorf("%w: share group metadata value: %v", ErrCorrupt, err)
	}
	return out, nil
}

// replayShareRecord applies a share group record read back while loading;
// it reports false for records of other types. Records of the types only
// Kafka writes are read past.
func (s *shard) replayShareRecord(key, value []byte) (bool, error) {
	t := consumerRecordKind(key)
	if !isShareRecordType(t) {
		return false, nil
	}
	switch t {
	case recordTypeShareGroupStatePartitions:
		return true, s.replayShareGroupStatePartitions(key, value)
	case recordTypeShareGroupMetadata:
	default:
		return true, nil
	}
	r, err := decodeShareGroupMetadata(key, value)
	if err != nil {
		return true, err
	}
	if r.tombstone {
		if _, ok := s.groups[r.group].(*shareGroup); ok {
			s.forgetGroup(r.group)
		}
		return true, nil
	}
	g, ok := s.groups[r.group].(*shareGroup)
	if !ok {
		g = newShareGroup(r.group)
		s.groups[r.group] = g
	}
	g.groupEpoch, g.metadataHash = r.epoch, r.metadataHash
	return true, nil
}

// replayShareGroupStatePartitions applies a ShareGroupStatePartitionMetadata
// record: the group's initialized share-partitions, or their removal.
func (s *shard) replayShareGroupStatePartitions(key, value []byte) error {
	r, err := decodeShareGroupStatePartitions(key, value)
	if err != nil {
		return err
	}
	g, ok := s.groups[r.group].(*shareGroup)
	if r.tombstone {
		if ok {
			g.statePartitions = shareStatePartitions{}
		}
		return nil
	}
	if !ok {
		if s.groups[r.group] != nil {
			return nil // another type's group: the share group was replaced
		}
		g = newShareGroup(r.group)
		s.groups[r.group] = g
	}
	g.statePartitions = r.state
	return nil
}
