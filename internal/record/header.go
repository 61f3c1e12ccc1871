// Package record reads, validates and builds Kafka RecordBatch v2 (magic 2)
// bytes, the format Kafka stores on disk and sends on the wire.
//
// # Batch header (61 bytes, big-endian)
//
//	offset  size  field
//	     0     8  baseOffset            first offset of the batch
//	     8     4  batchLength           bytes after this field (total = 12 + batchLength)
//	    12     4  partitionLeaderEpoch
//	    16     1  magic                 always 2
//	    17     4  crc                   CRC-32C (Castagnoli) of bytes 21..end
//	    21     2  attributes            bits 0-2 codec, 3 timestamp type,
//	                                    4 transactional, 5 control, 6 delete horizon
//	    23     4  lastOffsetDelta
//	    27     8  baseTimestamp
//	    35     8  maxTimestamp
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordCount
//	    61     .  records (compressed as a whole when codec != 0)
//
// baseOffset and partitionLeaderEpoch sit before the CRC'd range, so the
// broker rewrites them on append without recomputing the checksum.
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
	AttrCompressionMask   = 0x07
	AttrLogAppendTime     = 0x08
	AttrTransactional     = 0x10
	AttrControl           = 0x20
	AttrDeleteHorizonSet  = 0x40
	CurrentMagic          = 2
	NoProducerID    int64 = -1
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

// ParseHeader decodes the fixed header at the start of b. It checks that b holds
// at least the header and that magic is 2 and batchLength is sane; it does not
// check that b holds the whole batch or the CRC (see Verify).
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: %d bytes, header needs %d", ErrTruncated, len(b), HeaderSize)
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offsetBaseOffset:]))
	h.BatchLength = int32(binary.BigEndian.Uint32(b[offsetBatchLength:]))
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[offsetLeaderEpoch:]))
	h.Magic = int8(b[offsetMagic])
	h.CRC = binary.BigEndian.Uint32(b[offsetCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[offsetAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offsetLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[offsetBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offsetMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offsetProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offsetProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offsetBaseSequence:]))
	h.RecordCount = int32(binary.BigEndian.Uint32(b[offsetRecordCount:]))
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

// SetBaseOffset rewrites the base offset of the batch at the start of b in place.
func SetBaseOffset(b []byte, baseOffset int64) {
	binary.BigEndian.PutUint64(b[offsetBaseOffset:], uint64(baseOffset))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch in place.
func SetPartitionLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[offsetLeaderEpoch:], uint32(epoch))
}
