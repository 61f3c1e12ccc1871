package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record types: the int16 that starts every __consumer_offsets key. Kafka
// 4.x defines 0-2 for the classic protocol; 3-8 and 16 belong to KIP-848
// consumer groups (consumer_records.go), and the share and streams group
// types, which this package skips.
const (
	recordTypeLegacyOffsetCommit int16 = 0 // same layout as 1, written by 0.8-era brokers
	recordTypeOffsetCommit       int16 = 1
	recordTypeGroupMetadata      int16 = 2
)

// Value versions written. Kafka writes OffsetCommitValue v3 (v1 when the
// commit carries an explicit retention) and GroupMetadataValue v3; both are
// the newest non-flexible versions, so neither carries tagged fields. Reading
// accepts every version Kafka defines, including the flexible v4s.
const (
	offsetCommitValueVersion       int16 = 3
	offsetCommitValueVersionExpire int16 = 1
	groupMetadataValueVersion      int16 = 3
	maxOffsetCommitValueVersion    int16 = 4
	maxGroupMetadataValueVersion   int16 = 4
)

// KV is one record of __consumer_offsets. A nil Value is a tombstone.
type KV struct {
	Key   []byte
	Value []byte
}

var (
	// ErrCorrupt marks a __consumer_offsets record that cannot be decoded.
	ErrCorrupt = errors.New("group: corrupt __consumer_offsets record")
	// ErrUnknownRecordType marks a record of a type this package does not
	// know (share and streams group records; DecodeRecord also returns it
	// for KIP-848 records, which decodeConsumerRecord handles); loading
	// skips such records, as Kafka's loader does.
	ErrUnknownRecordType = errors.New("group: unknown __consumer_offsets record type")
)

// Record is a decoded __consumer_offsets record. Exactly one of the two keys
// is set; the matching value is nil for a tombstone.
type Record struct {
	OffsetCommitKey    *kmsg.OffsetCommitKey
	OffsetCommitValue  *kmsg.OffsetCommitValue
	GroupMetadataKey   *kmsg.GroupMetadataKey
	GroupMetadataValue *kmsg.GroupMetadataValue
}

// DecodeRecord decodes one __consumer_offsets record. Errors wrap ErrCorrupt
// or ErrUnknownRecordType.
func DecodeRecord(key, value []byte) (Record, error) {
	if len(key) < 2 {
		return Record{}, fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(key))
	}
	recordType := int16(binary.BigEndian.Uint16(key))
	switch recordType {
	case recordTypeLegacyOffsetCommit, recordTypeOffsetCommit:
		k := new(kmsg.OffsetCommitKey)
		if err := k.ReadFrom(key); err != nil {
			return Record{}, fmt.Errorf("%w: offset commit key: %v", ErrCorrupt, err)
		}
		r := Record{OffsetCommitKey: k}
		if value == nil {
			return r, nil
		}
		if err := checkValueVersion(value, maxOffsetCommitValueVersion); err != nil {
			return Record{}, fmt.Errorf("offset commit value: %w", err)
		}
		v := new(kmsg.OffsetCommitValue)
		if err := v.ReadFrom(value); err != nil {
			return Record{}, fmt.Errorf("%w: offset commit value: %v", ErrCorrupt, err)
		}
		r.OffsetCommitValue = v
		return r, nil
	case recordTypeGroupMetadata:
		k := new(kmsg.GroupMetadataKey)
		if err := k.ReadFrom(key); err != nil {
			return Record{}, fmt.Errorf("%w: group metadata key: %v", ErrCorrupt, err)
		}
		r := Record{GroupMetadataKey: k}
		if value == nil {
			return r, nil
		}
		if err := checkValueVersion(value, maxGroupMetadataValueVersion); err != nil {
			return Record{}, fmt.Errorf("group metadata value: %w", err)
		}
		v := new(kmsg.GroupMetadataValue)
		if err := v.ReadFrom(value); err != nil {
			return Record{}, fmt.Errorf("%w: group metadata value: %v", ErrCorrupt, err)
		}
		r.GroupMetadataValue = v
		return r, nil
	default:
		return Record{}, fmt.Errorf("%w: %d", ErrUnknownRecordType, recordType)
	}
}

func checkValueVersion(value []byte, maxVersion int16) error {
	if len(value) < 2 {
		return fmt.Errorf("%w: value of %d bytes", ErrCorrupt, len(value))
	}
	version := int16(binary.BigEndian.Uint16(value))
	if version < 0 || version > maxVersion {
		return fmt.Errorf("%w: value version %d", ErrCorrupt, version)
	}
	return nil
}

// offsetValue is one committed offset, as the OffsetCommitValue stores it.
type offsetValue struct {
	offset int64
	// leaderEpoch is -1 when the commit named none.
	leaderEpoch int32
	metadata    string
	// commitTimestampMs is when the coordinator accepted the commit.
	commitTimestampMs int64
	// expireTimestampMs is -1 unless the commit (OffsetCommit v2-v4) set its
	// own retention; such offsets expire at this time whatever the group does.
	expireTimestampMs int64
}

// offsetCommitKV encodes an offset commit, or its tombstone when v is nil.
func offsetCommitKV(group, topic string, partition int32, v *offsetValue) KV {
	key := kmsg.OffsetCommitKey{Version: recordTypeOffsetCommit, Group: group, Topic: topic, Partition: partition}
	kv := KV{Key: key.AppendTo(nil)}
	if v == nil {
		return kv
	}
	value := kmsg.OffsetCommitValue{
		Version:         offsetCommitValueVersion,
		Offset:          v.offset,
		LeaderEpoch:     v.leaderEpoch,
		Metadata:        v.metadata,
		CommitTimestamp: v.commitTimestampMs,
		ExpireTimestamp: -1,
	}
	if v.expireTimestampMs >= 0 {
		value.Version = offsetCommitValueVersionExpire
		value.ExpireTimestamp = v.expireTimestampMs
	}
	kv.Value = value.AppendTo(nil)
	return kv
}

// offsetValueFromRecord converts a decoded value, filling the fields its
// version lacks with Kafka's defaults.
func offsetValueFromRecord(v *kmsg.OffsetCommitValue) offsetValue {
	out := offsetValue{
		offset:            v.Offset,
		leaderEpoch:       -1,
		metadata:          v.Metadata,
		commitTimestampMs: v.CommitTimestamp,
		expireTimestampMs: -1,
	}
	if v.Version >= 3 {
		out.leaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 {
		out.expireTimestampMs = v.ExpireTimestamp
	}
	return out
}

// groupMetadataKV encodes a group's metadata, or its tombstone when v is nil.
func groupMetadataKV(group string, v *kmsg.GroupMetadataValue) KV {
	key := kmsg.GroupMetadataKey{Version: recordTypeGroupMetadata, Group: group}
	kv := KV{Key: key.AppendTo(nil)}
	if v != nil {
		v.Version = groupMetadataValueVersion
		kv.Value = v.AppendTo(nil)
	}
	return kv
}
