package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Header field offsets and sizes.
const (
	HeaderSize = 61
	// LogOverhead is the baseOffset and batchLength prefix that precedes every batch.
	LogOverhead = 12

	offsetBaseOffset      = 0
	offsetBatchLength     = 8
	offsetLeaderEpoch     = 12
	offsetMagic           = 16
	offsetCRC             = 17
	offsetAttributes      = 21
	offsetLastOffsetDelta = 23
	offsetBaseTimestamp   = 27
	offsetMaxTimestamp    = 35
	offsetProducerID      = 43
	offsetProducerEpoch   = 51
	offsetBaseSequence    = 53
	offsetRecordCount     = 57
)

// Attribute bits.
const (
	AttrCompressionMask        = 0x07
	AttrLogAppendTime          = 0x08
	AttrTransactional          = 0x10
	AttrControl                = 0x20
	AttrDeleteHorizonSet       = 0x40
	CurrentMagic               = 2
	NoProducerID         int64 = -1
)

// Values Kafka writes where a field has none.
const (
	// NoTimestamp is Kafka's RecordBatch.NO_TIMESTAMP: a record without one.
	NoTimestamp int64 = -1
	// NoSequence is the baseSequence of a batch without a producer id.
	NoSequence int32 = -1
	// NoPartitionLeaderEpoch is the leader epoch a client leaves in a batch.
	NoPartitionLeaderEpoch int32 = -1
)

// Codec ids, the values of attribute bits 0-2.
const (
	CodecNone   int8 = 0
	CodecGzip   int8 = 1
	CodecSnappy int8 = 2
	CodecLz4    int8 = 3
	CodecZstd   int8 = 4
)

// Errors. ErrCorrupt marks bytes that are not a valid batch (CORRUPT_MESSAGE upstream);
// ErrTruncated marks bytes that end before the batch does.
var (
	ErrCorrupt   = errors.New("record: corrupt batch")
	ErrTruncated = errors.New("record: truncated batch")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the fixed part of a RecordBatch v2.
type Header struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// Size is the total size of the batch in bytes including the 12-byte log overhead.
func (h *Header) Size() int { return LogOverhead + int(h.BatchLength) }

// LastOffset is the offset of the last record the batch covers.
func (h *Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the codec id in the attributes (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func (h *Header) Compression() int8 { return int8(h.Attributes & AttrCompressionMask) }

// IsTransactional reports the transactional attribute bit.
func (h *Header) IsTransactional() bool { return h.Attributes&AttrTransactional != 0 }

// IsControl reports the control attribute bit.
func (h *Header) IsControl() bool { return h.Attributes&AttrControl != 0 }

// IsLogAppendTime reports the timestamp-type attribute bit: the broker's
// append time, in MaxTimestamp, is every record's timestamp.
func (h *Header) IsLogAppendTime() bool { return h.Attributes&AttrLogAppendTime != 0 }

// HasProducerID reports whether the batch was written by an idempotent or
// transactional producer.
func (h *Header) HasProducerID() bool { return h.ProducerID > NoProducerID }

// RecordTimestamp is the timestamp of a record of this batch with the given
// timestampDelta: MaxTimestamp under LogAppendTime, else BaseTimestamp plus
// the delta (wrapping as Java's long arithmetic does).
func (h *Header) RecordTimestamp(timestampDelta int64) int64 {
	if h.IsLogAppendTime() {
		return h.MaxTimestamp
	}
	return h.BaseTimestamp + timestampDelta
}

// ParseHeader decodes the fixed header at the start of b. It checks that b holds
// at least the header and that magic is 2 and batchLength is sane; it does not
// check that b holds the whole batch or the CRC (see Verify).
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, header needs %d", ErrTruncated, len(b), HeaderSize)
	}
	h := decodeHeader(b)
	if h.Magic != CurrentMagic {
		return h, fmt.Errorf("%w: magic %d, want 2", ErrCorrupt, h.Magic)
	}
	if h.BatchLength < HeaderSize-LogOverhead {
		return h, fmt.Errorf("%w: batch length %d below header size", ErrCorrupt, h.BatchLength)
	}
	if h.LastOffsetDelta < 0 || h.RecordCount < 0 {
		return h, fmt.Errorf("%w: negative last offset delta or record count", ErrCorrupt)
	}
	return h, nil
}

// decodeHeader reads the header fields of b, which holds at least HeaderSize
// bytes, without judging them.
func decodeHeader(b []byte) Header {
	_ = b[HeaderSize-1]
	return Header{
		BaseOffset:           int64(binary.BigEndian.Uint64(b[offsetBaseOffset:])),
		BatchLength:          int32(binary.BigEndian.Uint32(b[offsetBatchLength:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(b[offsetLeaderEpoch:])),
		Magic:                int8(b[offsetMagic]),
		CRC:                  binary.BigEndian.Uint32(b[offsetCRC:]),
		Attributes:           int16(binary.BigEndian.Uint16(b[offsetAttributes:])),
		LastOffsetDelta:      int32(binary.BigEndian.Uint32(b[offsetLastOffsetDelta:])),
		BaseTimestamp:        int64(binary.BigEndian.Uint64(b[offsetBaseTimestamp:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(b[offsetMaxTimestamp:])),
		ProducerID:           int64(binary.BigEndian.Uint64(b[offsetProducerID:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(b[offsetProducerEpoch:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(b[offsetBaseSequence:])),
		RecordCount:          int32(binary.BigEndian.Uint32(b[offsetRecordCount:])),
	}
}

// Verify parses the header of the batch at the start of b, checks b holds the
// whole batch and that the CRC matches. It returns the header.
func Verify(b []byte) (Header, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if len(b) < h.Size() {
		return h, fmt.Errorf("%w: %d bytes, batch needs %d", ErrTruncated, len(b), h.Size())
	}
	if got := ComputeCRC(b[:h.Size()]); got != h.CRC {
		return h, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorrupt, h.CRC, got)
	}
	return h, nil
}

// ComputeCRC returns the CRC-32C of the checksummed range of a whole batch.
func ComputeCRC(batch []byte) uint32 {
	return crc32.Checksum(batch[offsetAttributes:], castagnoli)
}

// CRCMatches reports whether batch, taken whole as one record batch, has
// the CRC its header claims. It is the CRC check of Validate alone, for a
// caller that checks the CRC early (ValidateOptions.CRCMatched); false
// for bytes too short to hold a header.
func CRCMatches(batch []byte) bool {
	if len(batch) < HeaderSize {
		return false
	}
	return ComputeCRC(batch) == binary.BigEndian.Uint32(batch[offsetCRC:])
}

// SetBaseOffset rewrites the base offset of the batch at the start of b in place.
func SetBaseOffset(b []byte, baseOffset int64) {
	binary.BigEndian.PutUint64(b[offsetBaseOffset:], uint64(baseOffset))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch in place.
func SetPartitionLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[offsetLeaderEpoch:], uint32(epoch))
}
