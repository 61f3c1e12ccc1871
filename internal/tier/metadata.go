package tier

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
)

// State is a remote segment's state, Kafka's RemoteLogSegmentState.
type State uint8

const (
	CopySegmentStarted   State = 0
	CopySegmentFinished  State = 1
	DeleteSegmentStarted State = 2
	DeleteSegmentFinish  State = 3
)

func (s State) String() string {
	switch s {
	case CopySegmentStarted:
		return "COPY_SEGMENT_STARTED"
	case CopySegmentFinished:
		return "COPY_SEGMENT_FINISHED"
	case DeleteSegmentStarted:
		return "DELETE_SEGMENT_STARTED"
	case DeleteSegmentFinish:
		return "DELETE_SEGMENT_FINISHED"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// FileKind names one object of an uploaded segment.
type FileKind uint8

const (
	FileSegment FileKind = iota
	FileOffsetIndex
	FileTimeIndex
	FileTransactionIndex
	FileProducerSnapshot
	FileLeaderEpochCheckpoint
)

// objectNames are the object names of the file kinds (see the package doc).
var objectNames = [...]string{
	FileSegment:               "segment.log",
	FileOffsetIndex:           "offset.index",
	FileTimeIndex:             "time.index",
	FileTransactionIndex:      "txn.index",
	FileProducerSnapshot:      "producer.snapshot",
	FileLeaderEpochCheckpoint: "leader-epoch.checkpoint",
}

// ObjectName is the name of kind's object inside a segment's directory.
func (k FileKind) ObjectName() string {
	if int(k) < len(objectNames) {
		return objectNames[k]
	}
	return fmt.Sprintf("file-%d", k)
}

// EpochEntry is one leader-epoch checkpoint entry.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// FileSize is the size of one object of an uploaded segment.
type FileSize struct {
	Kind FileKind
	Size int64
}

// SegmentMetadata describes one upload of one segment, Kafka's
// RemoteLogSegmentMetadata.
//
// Invariant: BaseOffset <= EndOffset; LeaderEpochs ascend in both epoch and
// start offset, and the first starts at or before BaseOffset.
type SegmentMetadata struct {
	State            State
	TopicID          [16]byte
	Partition        int32
	SegmentID        [16]byte
	BaseOffset       int64
	EndOffset        int64
	MaxTimestampMs   int64
	BrokerID         int32
	LeaderEpoch      int32
	EventTimestampMs int64
	SegmentSizeBytes int64
	LeaderEpochs     []EpochEntry
	Files            []FileSize
}

const (
	metadataMagic      = "SRSM"
	metadataVersion    = 1
	metadataFixedBytes = 96
	maxEpochEntries    = 1 << 16
	maxFileEntries     = 8
)

// ErrCorruptMetadata marks a metadata object that does not decode.
var ErrCorruptMetadata = errors.New("tier: corrupt remote segment metadata")

// Encode returns the metadata object's bytes.
func (m *SegmentMetadata) Encode() []byte {
	out := make([]byte, 0, metadataFixedBytes+12*len(m.LeaderEpochs)+1+9*len(m.Files)+4)
	out = append(out, metadataMagic...)
	out = binary.BigEndian.AppendUint16(out, metadataVersion)
	out = append(out, byte(m.State), 0)
	out = append(out, m.TopicID[:]...)
	out = binary.BigEndian.AppendUint32(out, uint32(m.Partition))
	out = append(out, m.SegmentID[:]...)
	out = binary.BigEndian.AppendUint64(out, uint64(m.BaseOffset))
	out = binary.BigEndian.AppendUint64(out, uint64(m.EndOffset))
	out = binary.BigEndian.AppendUint64(out, uint64(m.MaxTimestampMs))
	out = binary.BigEndian.AppendUint32(out, uint32(m.BrokerID))
	out = binary.BigEndian.AppendUint32(out, uint32(m.LeaderEpoch))
	out = binary.BigEndian.AppendUint64(out, uint64(m.EventTimestampMs))
	out = binary.BigEndian.AppendUint64(out, uint64(m.SegmentSizeBytes))
	out = binary.BigEndian.AppendUint32(out, uint32(len(m.LeaderEpochs)))
	for _, e := range m.LeaderEpochs {
		out = binary.BigEndian.AppendUint32(out, uint32(e.Epoch))
		out = binary.BigEndian.AppendUint64(out, uint64(e.StartOffset))
	}
	out = append(out, byte(len(m.Files)))
	for _, f := range m.Files {
		out = append(out, byte(f.Kind))
		out = binary.BigEndian.AppendUint64(out, uint64(f.Size))
	}
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DecodeMetadata parses a metadata object, checking its checksum, bounds
// and invariants.
func DecodeMetadata(b []byte) (SegmentMetadata, error) {
	var m SegmentMetadata
	if len(b) < metadataFixedBytes+1+4 {
		return m, fmt.Errorf("%w: %d bytes", ErrCorruptMetadata, len(b))
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return m, fmt.Errorf("%w: checksum mismatch", ErrCorruptMetadata)
	}
	if string(body[:4]) != metadataMagic {
		return m, fmt.Errorf("%w: bad magic", ErrCorruptMetadata)
	}
	if v := binary.BigEndian.Uint16(body[4:]); v != metadataVersion {
		return m, fmt.Errorf("%w: unknown version %d", ErrCorruptMetadata, v)
	}
	m.State = State(body[6])
	if m.State > DeleteSegmentFinish {
		return m, fmt.Errorf("%w: unknown state %d", ErrCorruptMetadata, body[6])
	}
	copy(m.TopicID[:], body[8:24])
	m.Partition = int32(binary.BigEndian.Uint32(body[24:]))
	copy(m.SegmentID[:], body[28:44])
	m.BaseOffset = int64(binary.BigEndian.Uint64(body[44:]))
	m.EndOffset = int64(binary.BigEndian.Uint64(body[52:]))
	m.MaxTimestampMs = int64(binary.BigEndian.Uint64(body[60:]))
	m.BrokerID = int32(binary.BigEndian.Uint32(body[68:]))
	m.LeaderEpoch = int32(binary.BigEndian.Uint32(body[72:]))
	m.EventTimestampMs = int64(binary.BigEndian.Uint64(body[76:]))
	m.SegmentSizeBytes = int64(binary.BigEndian.Uint64(body[84:]))
	epochCount := binary.BigEndian.Uint32(body[92:])
	rest := body[metadataFixedBytes:]
	if epochCount > maxEpochEntries || uint64(len(rest)) < uint64(epochCount)*12+1 {
		return m, fmt.Errorf("%w: %d leader-epoch entries", ErrCorruptMetadata, epochCount)
	}
	m.LeaderEpochs = make([]EpochEntry, epochCount)
	for i := range m.LeaderEpochs {
		m.LeaderEpochs[i] = EpochEntry{Epoch: int32(binary.BigEndian.Uint32(rest)), StartOffset: int64(binary.BigEndian.Uint64(rest[4:]))}
		rest = rest[12:]
	}
	fileCount := int(rest[0])
	rest = rest[1:]
	if fileCount > maxFileEntries || len(rest) != fileCount*9 {
		return m, fmt.Errorf("%w: %d file entries in %d bytes", ErrCorruptMetadata, fileCount, len(rest))
	}
	m.Files = make([]FileSize, fileCount)
	for i := range m.Files {
		m.Files[i] = FileSize{Kind: FileKind(rest[0]), Size: int64(binary.BigEndian.Uint64(rest[1:]))}
		rest = rest[9:]
	}
	if err := m.validate(); err != nil {
		return m, err
	}
	return m, nil
}

// validate checks the invariants of a decoded record.
func (m *SegmentMetadata) validate() error {
	if m.BaseOffset < 0 || m.EndOffset < m.BaseOffset || m.SegmentSizeBytes < 0 || m.Partition < 0 {
		return fmt.Errorf("%w: offsets [%d, %d], size %d, partition %d", ErrCorruptMetadata, m.BaseOffset, m.EndOffset, m.SegmentSizeBytes, m.Partition)
	}
	for i, e := range m.LeaderEpochs {
		if e.Epoch < 0 || e.StartOffset < 0 {
			return fmt.Errorf("%w: leader-epoch entry %d negative", ErrCorruptMetadata, i)
		}
		if i > 0 && (e.Epoch <= m.LeaderEpochs[i-1].Epoch || e.StartOffset < m.LeaderEpochs[i-1].StartOffset) {
			return fmt.Errorf("%w: leader-epoch entries out of order", ErrCorruptMetadata)
		}
	}
	for _, f := range m.Files {
		if f.Size < 0 || int(f.Kind) >= len(objectNames) {
			return fmt.Errorf("%w: file entry kind %d size %d", ErrCorruptMetadata, f.Kind, f.Size)
		}
	}
	return nil
}

// SegmentIDString is the segment id in the form object keys use.
func (m *SegmentMetadata) SegmentIDString() string { return hex.EncodeToString(m.SegmentID[:]) }
