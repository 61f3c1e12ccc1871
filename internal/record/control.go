package record

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// ControlType is the type in a control record's key (layout in the package doc).
type ControlType int16

// Control record types, as Kafka's ControlRecordType.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// Sizes of the control record key and the end-transaction marker value.
const (
	controlKeyBytes   = 4
	endTxnMarkerBytes = 6
)

func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	default:
		return "UNKNOWN(" + strconv.Itoa(int(t)) + ")"
	}
}

// ControlBatchOptions describes an end-transaction marker batch.
type ControlBatchOptions struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	// TimestampMs is the marker's create time, the coordinator's clock.
	TimestampMs   int64
	ProducerID    int64
	ProducerEpoch int16
	// Type is ControlCommit or ControlAbort.
	Type ControlType
	// CoordinatorEpoch is the epoch of the transaction coordinator writing
	// the marker.
	CoordinatorEpoch int32
}

// BuildControlBatch returns the batch a partition leader appends for an
// end-transaction marker, as Kafka's MemoryRecords.withEndTransactionMarker:
// transactional and control, uncompressed, CreateTime, baseSequence -1, one
// record with offset delta 0, the control key as key and the marker as value.
func BuildControlBatch(opts ControlBatchOptions) ([]byte, error) {
	if opts.Type != ControlAbort && opts.Type != ControlCommit {
		return nil, fmt.Errorf("record: control type %v is not an end-transaction marker", opts.Type)
	}
	build := BuildOptions{
		BaseOffset:           opts.BaseOffset,
		PartitionLeaderEpoch: opts.PartitionLeaderEpoch,
		ProducerID:           opts.ProducerID,
		ProducerEpoch:        opts.ProducerEpoch,
		BaseSequence:         NoSequence,
		Transactional:        true,
		Control:              true,
		BaseTimestamp:        opts.TimestampMs,
	}
	key := AppendControlKey(make([]byte, 0, controlKeyBytes), opts.Type)
	value := AppendEndTxnMarker(make([]byte, 0, endTxnMarkerBytes), opts.CoordinatorEpoch)
	return Build(build, []Record{{Key: key, Value: value}})
}

// AppendControlKey appends the key of a control record of type t, version 0.
func AppendControlKey(dst []byte, t ControlType) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	return binary.BigEndian.AppendUint16(dst, uint16(t))
}

// AppendEndTxnMarker appends the value of an end-transaction marker, version 0.
func AppendEndTxnMarker(dst []byte, coordinatorEpoch int32) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	return binary.BigEndian.AppendUint32(dst, uint32(coordinatorEpoch))
}

// ParseControlRecordType returns the type in a control record's key. Like
// Kafka's ControlRecordType.parse it refuses a key under 4 bytes or with a
// negative version and reads a newer version's type all the same; a type it
// does not know is returned as is.
func ParseControlRecordType(key []byte) (ControlType, error) {
	if len(key) < controlKeyBytes {
		return 0, fmt.Errorf("%w: control record key of %d bytes, want %d", ErrInvalidRecord, len(key), controlKeyBytes)
	}
	if version := int16(binary.BigEndian.Uint16(key)); version < 0 {
		return 0, fmt.Errorf("%w: control record key version %d", ErrInvalidRecord, version)
	}
	return ControlType(int16(binary.BigEndian.Uint16(key[2:]))), nil
}

// ParseEndTxnMarker returns the coordinator epoch in an end-transaction
// marker's value, with Kafka's checks: at least 6 bytes, version not negative.
func ParseEndTxnMarker(value []byte) (coordinatorEpoch int32, err error) {
	if len(value) < endTxnMarkerBytes {
		return 0, fmt.Errorf("%w: end transaction marker of %d bytes, want %d", ErrInvalidRecord, len(value), endTxnMarkerBytes)
	}
	if version := int16(binary.BigEndian.Uint16(value)); version < 0 {
		return 0, fmt.Errorf("%w: end transaction marker version %d", ErrInvalidRecord, version)
	}
	return int32(binary.BigEndian.Uint32(value[2:])), nil
}
