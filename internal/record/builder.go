package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// BuildOptions describes the batch Build makes. Every field is written as
// given; DefaultBuildOptions fills the values of a batch with no producer.
type BuildOptions struct {
	BaseOffset int64
	// PartitionLeaderEpoch is NoPartitionLeaderEpoch (-1) until a leader
	// assigns it.
	PartitionLeaderEpoch int32
	// ProducerID, ProducerEpoch and BaseSequence are NoProducerID, -1 and
	// NoSequence for a batch without an idempotent producer.
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	// Control marks the records as control records (see BuildControlBatch).
	Control bool
	// Compression is the codec, CodecNone to CodecZstd.
	Compression int8
	// BaseTimestamp is the batch's baseTimestamp; record i's create time is
	// BaseTimestamp + records[i].TimestampDelta.
	BaseTimestamp int64
	// LogAppendTime sets the timestamp type to LogAppendTime with
	// maxTimestamp LogAppendTimeMs; otherwise maxTimestamp is the largest
	// create time.
	LogAppendTime   bool
	LogAppendTimeMs int64
	// KeepOffsetDeltas writes each record's own OffsetDelta, which must
	// increase from record to record (a compacted batch keeps its gaps);
	// otherwise record i gets offset delta i.
	KeepOffsetDeltas bool
	// LastOffsetDelta, under KeepOffsetDeltas, is written as the batch's
	// lastOffsetDelta when it is above the last record's: a compacted batch
	// keeps the last offset, and so the producer's last sequence, it had.
	LastOffsetDelta int32
	// DeleteHorizon sets attribute bit 6: BaseTimestamp is then the time
	// after which the log cleaner may drop the batch's tombstones and
	// markers (KIP-534), and the records' deltas are relative to it.
	DeleteHorizon bool
}

// DefaultBuildOptions returns the options of an uncompressed CreateTime batch
// at offset 0 with no producer id and no leader epoch.
func DefaultBuildOptions() BuildOptions {
	return BuildOptions{
		PartitionLeaderEpoch: NoPartitionLeaderEpoch,
		ProducerID:           NoProducerID,
		ProducerEpoch:        -1,
		BaseSequence:         NoSequence,
	}
}

// Build returns a batch holding records, described by opts, with its CRC set.
func Build(opts BuildOptions, records []Record) ([]byte, error) {
	return AppendBatch(nil, opts, records)
}

// AppendBatch appends the batch Build makes to dst.
func AppendBatch(dst []byte, opts BuildOptions, records []Record) ([]byte, error) {
	if len(records) == 0 {
		return dst, errors.New("record: a batch needs at least one record")
	}
	if opts.Compression < CodecNone || opts.Compression > CodecZstd {
		return dst, fmt.Errorf("record: unknown compression codec %d", opts.Compression)
	}
	if len(records) > math.MaxInt32 {
		return dst, fmt.Errorf("record: %d records do not fit a batch", len(records))
	}
	lastOffsetDelta, err := offsetDeltas(opts, records)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	if opts.Compression == CodecNone {
		dst = appendRecords(dst, opts, records)
	} else {
		buf := getBuffer()
		defer putBuffer(buf)
		*buf = appendRecords((*buf)[:0], opts, records)
		if dst, err = Compress(opts.Compression, dst, *buf); err != nil {
			return dst[:start], err
		}
	}
	batch := dst[start:]
	if len(batch)-LogOverhead > math.MaxInt32 {
		return dst[:start], fmt.Errorf("record: batch of %d bytes is too large", len(batch))
	}
	attributes := int16(opts.Compression)
	if opts.LogAppendTime {
		attributes |= AttrLogAppendTime
	}
	if opts.Transactional {
		attributes |= AttrTransactional
	}
	if opts.Control {
		attributes |= AttrControl
	}
	if opts.DeleteHorizon {
		attributes |= AttrDeleteHorizonSet
	}
	maxTimestamp := opts.LogAppendTimeMs
	if !opts.LogAppendTime {
		maxTimestamp = opts.BaseTimestamp + records[0].TimestampDelta
		for i := range records {
			maxTimestamp = max(maxTimestamp, opts.BaseTimestamp+records[i].TimestampDelta)
		}
	}
	be := binary.BigEndian
	be.PutUint64(batch[offsetBaseOffset:], uint64(opts.BaseOffset))
	be.PutUint32(batch[offsetBatchLength:], uint32(len(batch)-LogOverhead))
	be.PutUint32(batch[offsetLeaderEpoch:], uint32(opts.PartitionLeaderEpoch))
	batch[offsetMagic] = CurrentMagic
	be.PutUint16(batch[offsetAttributes:], uint16(attributes))
	be.PutUint32(batch[offsetLastOffsetDelta:], uint32(lastOffsetDelta))
	be.PutUint64(batch[offsetBaseTimestamp:], uint64(opts.BaseTimestamp))
	be.PutUint64(batch[offsetMaxTimestamp:], uint64(maxTimestamp))
	be.PutUint64(batch[offsetProducerID:], uint64(opts.ProducerID))
	be.PutUint16(batch[offsetProducerEpoch:], uint16(opts.ProducerEpoch))
	be.PutUint32(batch[offsetBaseSequence:], uint32(opts.BaseSequence))
	be.PutUint32(batch[offsetRecordCount:], uint32(len(records)))
	be.PutUint32(batch[offsetCRC:], ComputeCRC(batch))
	return dst, nil
}

// offsetDeltas checks the records' offset deltas under KeepOffsetDeltas and
// returns the last one.
func offsetDeltas(opts BuildOptions, records []Record) (int32, error) {
	if !opts.KeepOffsetDeltas {
		return int32(len(records) - 1), nil
	}
	previous := int32(-1)
	for i := range records {
		delta := records[i].OffsetDelta
		if delta <= previous {
			return 0, fmt.Errorf("record: offset delta %d of record %d does not increase", delta, i)
		}
		previous = delta
	}
	return max(previous, opts.LastOffsetDelta), nil
}

// appendRecords appends the encoded records to dst.
func appendRecords(dst []byte, opts BuildOptions, records []Record) []byte {
	for i := range records {
		r := &records[i]
		offsetDelta := int32(i)
		if opts.KeepOffsetDeltas {
			offsetDelta = r.OffsetDelta
		}
		dst = appendRecord(dst, r, offsetDelta)
	}
	return dst
}

// appendRecord appends r with the given offset delta in the record layout of
// the package doc.
func appendRecord(dst []byte, r *Record, offsetDelta int32) []byte {
	dst = appendVarint(dst, int64(recordBodySize(r, offsetDelta)))
	dst = append(dst, byte(r.Attributes))
	dst = appendVarint(dst, r.TimestampDelta)
	dst = appendVarint(dst, int64(offsetDelta))
	dst = appendBytesField(dst, r.Key)
	dst = appendBytesField(dst, r.Value)
	dst = appendVarint(dst, int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		dst = appendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytesField(dst, h.Value)
	}
	return dst
}

// recordBodySize is the encoded size of r after its length prefix.
func recordBodySize(r *Record, offsetDelta int32) int {
	n := 1 + varintSize(r.TimestampDelta) + varintSize(int64(offsetDelta)) +
		bytesFieldSize(r.Key) + bytesFieldSize(r.Value) + varintSize(int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		n += varintSize(int64(len(h.Key))) + len(h.Key) + bytesFieldSize(h.Value)
	}
	return n
}

// appendBytesField appends b with its varint length, -1 for nil.
func appendBytesField(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	dst = appendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesFieldSize(b []byte) int {
	if b == nil {
		return 1
	}
	return varintSize(int64(len(b))) + len(b)
}
