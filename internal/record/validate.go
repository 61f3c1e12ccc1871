package record

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Kafka's defaults for the topic configs ValidateOptions carries.
const (
	// DefaultMaxMessageBytes is max.message.bytes: 1 MiB plus the log overhead.
	DefaultMaxMessageBytes = 1048588
	// DefaultTimestampBeforeMaxMs is message.timestamp.before.max.ms: no limit.
	DefaultTimestampBeforeMaxMs int64 = math.MaxInt64
	// DefaultTimestampAfterMaxMs is message.timestamp.after.max.ms: one hour
	// since Kafka 4.0 (KIP-1030).
	DefaultTimestampAfterMaxMs int64 = 3600000
)

// minBatchLength is the smallest batchLength Kafka's batch iterator accepts
// before it even reads the magic (LegacyRecord.RECORD_OVERHEAD_V0).
const minBatchLength = 14

// ValidateOptions carries the clock and the topic configs that Validate
// checks a produced batch against. The fields but MaxDecompressedBytes are
// taken as given, so a zero MaxMessageBytes rejects every batch;
// DefaultValidateOptions fills Kafka's defaults.
type ValidateOptions struct {
	// NowMs is the broker's clock in Unix milliseconds: the reference for
	// the timestamp bounds and the log append time.
	NowMs int64
	// MaxMessageBytes is max.message.bytes: the largest batch accepted,
	// log overhead included.
	MaxMessageBytes int
	// TimestampBeforeMaxMs is message.timestamp.before.max.ms: how far in
	// the past a CreateTime timestamp may be.
	TimestampBeforeMaxMs int64
	// TimestampAfterMaxMs is message.timestamp.after.max.ms: how far in the
	// future a CreateTime timestamp may be.
	TimestampAfterMaxMs int64
	// LogAppendTime is message.timestamp.type=LogAppendTime: timestamps are
	// not checked but replaced by NowMs.
	LogAppendTime bool
	// Compacted is cleanup.policy containing compact: every record needs a key.
	Compacted bool
	// MaxDecompressedBytes bounds the records of a compressed batch once
	// decompressed; 0 means DefaultMaxDecompressedBytes. Log recovery and
	// fetch must read with a bound at least as large.
	MaxDecompressedBytes int
	// MaxRecordBodyBytes is max.decompressed.message.bytes: the largest
	// body (the bytes after its length varint) one record of a compressed
	// batch may declare; 0 means no limit. Records of an uncompressed
	// batch are not checked, as in Kafka.
	MaxRecordBodyBytes int
	// CRCMatched says that CRCMatches returned true for these very bytes,
	// so the CRC is not computed again. The checks before the CRC still run
	// in their order, so the error for a bad batch does not change.
	CRCMatched bool
}

// DefaultValidateOptions returns the options of a topic with Kafka's default
// configs, at the given time.
func DefaultValidateOptions(nowMs int64) ValidateOptions {
	return ValidateOptions{
		NowMs:                nowMs,
		MaxMessageBytes:      DefaultMaxMessageBytes,
		TimestampBeforeMaxMs: DefaultTimestampBeforeMaxMs,
		TimestampAfterMaxMs:  DefaultTimestampAfterMaxMs,
		MaxDecompressedBytes: DefaultMaxDecompressedBytes,
	}
}

// Validate checks the records of one partition of a produce request as a
// Kafka broker does before appending them (ProduceRequest.validateRecords,
// UnifiedLog.analyzeAndValidateRecords and LogValidator), and returns the
// batch's header. batch must be exactly one RecordBatch v2. In order:
//
//   - framing: the bytes hold one whole batch of magic 2 and nothing more
//     (INVALID_RECORD; a batchLength too small to be a batch is
//     CORRUPT_MESSAGE);
//   - baseOffset is 0 (INVALID_RECORD);
//   - size at most MaxMessageBytes (MESSAGE_TOO_LARGE);
//   - the CRC (CORRUPT_MESSAGE);
//   - recordCount > 0 and equal to lastOffsetDelta+1; not a control batch;
//     a producer id comes with a baseSequence >= 0 (INVALID_RECORD);
//   - the records, decompressed if need be: they parse, there are
//     recordCount of them, record i has offsetDelta i (INVALID_RECORD; a
//     codec that cannot decode them is CORRUPT_MESSAGE, and records that
//     decompress past MaxDecompressedBytes MESSAGE_TOO_LARGE, on which a
//     Java producer splits the batch; a record of a compressed batch whose
//     body is larger than MaxRecordBodyBytes INVALID_RECORD, with Kafka's
//     "Invalid record size" message);
//   - each record: a key if Compacted (INVALID_RECORD), then its timestamp
//     within the bounds under CreateTime, and no LogAppendTime claimed by
//     the client (INVALID_TIMESTAMP). These are collected per record into
//     a *RecordErrors.
//
// On success Validate sets the batch's timestamps in place as Kafka's
// LogValidator does: under LogAppendTime the timestamp-type bit and
// maxTimestamp = NowMs; under CreateTime maxTimestamp = the largest record
// timestamp. It recomputes the CRC only when a field changed, so a batch from
// a well-behaved client is left as it came. The returned header reflects the
// rewrite. The caller then assigns offsets and the leader epoch.
//
// Left to the caller: producer state (sequence and epoch checks), refusing
// zstd in produce requests below version 7 (UNSUPPORTED_COMPRESSION_TYPE),
// and recompressing when the topic's compression.type names another codec.
//
// Two differences from Kafka 4.x, both stricter: trailing bytes after the
// batch are refused where Kafka drops a partial trailing batch silently, and
// non-sequential offset deltas are refused where Kafka rewrites the batch.
// No client of the last eight years sends either.
func Validate(batch []byte, opts ValidateOptions) (Header, error) {
	h, err := validateBatch(batch, &opts)
	if err != nil {
		return h, err
	}
	maxTimestamp, err := validateRecords(batch, &h, &opts)
	if err != nil {
		return h, err
	}
	if opts.LogAppendTime {
		setTimestamps(batch, &h, true, opts.NowMs)
	} else {
		setTimestamps(batch, &h, false, maxTimestamp)
	}
	return h, nil
}

// validateBatch checks everything Validate checks short of the records.
func validateBatch(batch []byte, opts *ValidateOptions) (Header, error) {
	if len(batch) <= offsetMagic {
		return Header{}, fmt.Errorf("%w: %w: %d bytes hold no record batch", ErrInvalidRecord, ErrTruncated, len(batch))
	}
	batchLength := int32(binary.BigEndian.Uint32(batch[offsetBatchLength:]))
	if batchLength < minBatchLength {
		return Header{}, fmt.Errorf("%w: batch length %d below the minimum %d", ErrCorrupt, batchLength, minBatchLength)
	}
	size := LogOverhead + int(batchLength)
	if len(batch) < size {
		return Header{}, fmt.Errorf("%w: %w: %d bytes, batch needs %d", ErrInvalidRecord, ErrTruncated, len(batch), size)
	}
	if magic := int8(batch[offsetMagic]); magic != CurrentMagic {
		return Header{}, fmt.Errorf("%w: magic %d, produce requests carry only magic 2", ErrInvalidRecord, magic)
	}
	if len(batch) > size {
		return Header{}, fmt.Errorf("%w: %d bytes after the batch; a partition carries exactly one batch",
			ErrInvalidRecord, len(batch)-size)
	}
	if size < HeaderSize {
		return Header{}, fmt.Errorf("%w: batch of %d bytes is smaller than its %d-byte header", ErrCorrupt, size, HeaderSize)
	}
	h := decodeHeader(batch)
	if h.BaseOffset != 0 {
		return h, fmt.Errorf("%w: base offset %d, a produced batch has 0", ErrInvalidRecord, h.BaseOffset)
	}
	if size > opts.MaxMessageBytes {
		return h, fmt.Errorf("%w: batch of %d bytes exceeds max.message.bytes %d", ErrTooLarge, size, opts.MaxMessageBytes)
	}
	if !opts.CRCMatched { // else checked by the caller (CRCMatches)
		if crc := ComputeCRC(batch); crc != h.CRC {
			return h, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorrupt, h.CRC, crc)
		}
	}
	countFromOffsets := int64(h.LastOffsetDelta) + 1
	switch {
	case countFromOffsets <= 0:
		return h, fmt.Errorf("%w: last offset delta %d", ErrInvalidRecord, h.LastOffsetDelta)
	case h.RecordCount <= 0:
		return h, fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.RecordCount)
	case countFromOffsets != int64(h.RecordCount):
		return h, fmt.Errorf("%w: last offset delta %d disagrees with record count %d",
			ErrInvalidRecord, h.LastOffsetDelta, h.RecordCount)
	case h.IsControl():
		return h, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	case h.HasProducerID() && h.BaseSequence < 0:
		return h, fmt.Errorf("%w: base sequence %d with producer id %d", ErrInvalidRecord, h.BaseSequence, h.ProducerID)
	case h.Compression() > CodecZstd:
		return h, fmt.Errorf("%w: unknown compression codec %d", ErrCorrupt, h.Compression())
	}
	return h, nil
}

// validateRecords walks the records of a batch validateBatch accepted and
// returns the largest record timestamp. Uncompressed records are parsed in
// place with no allocation.
func validateRecords(batch []byte, h *Header, opts *ValidateOptions) (int64, error) {
	records := batch[HeaderSize:]
	if codec := h.Compression(); codec != CodecNone {
		buf := getBuffer()
		defer putBuffer(buf)
		var err error
		if *buf, err = DecompressBounded(codec, (*buf)[:0], records, decompressLimit(opts.MaxDecompressedBytes)); err != nil {
			return 0, err
		}
		records = *buf
	}
	it := recordIterator{rest: records, count: h.RecordCount}
	var raw rawRecord
	var rejected *RecordErrors
	maxTimestamp := NoTimestamp
	// A limit at or above the decompression bound cannot be reached: the
	// decompression already refused anything larger.
	checkBodies := opts.MaxRecordBodyBytes > 0 && opts.MaxRecordBodyBytes < decompressLimit(opts.MaxDecompressedBytes) && h.Compression() != CodecNone
	for {
		index := it.index
		if checkBodies && index < it.count {
			if length, n := readVarint(it.rest); n > 0 && int64(length) > int64(opts.MaxRecordBodyBytes) {
				return 0, fmt.Errorf("%w: Invalid record size: %d exceeds the configured maximum record size of %d.", ErrInvalidRecord, length, opts.MaxRecordBodyBytes)
			}
		}
		ok, err := it.next(&raw)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if raw.offsetDelta != index {
			return 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, index, raw.offsetDelta)
		}
		timestamp := h.RecordTimestamp(raw.timestampDelta)
		if fault := checkRecord(h, &raw, timestamp, opts); fault != faultNone {
			if rejected == nil {
				rejected = &RecordErrors{Kind: ErrInvalidRecord}
			}
			if fault.isTimestamp() {
				rejected.Kind = ErrInvalidTimestamp
			}
			rejected.Records = append(rejected.Records, RecordError{
				BatchIndex: index,
				Message:    fault.message(h, &raw, timestamp, opts),
			})
		}
		maxTimestamp = max(maxTimestamp, timestamp)
	}
	if rejected != nil {
		return 0, rejected
	}
	return maxTimestamp, nil
}

// recordFault is why checkRecord rejected a record; the message is only
// formatted for a rejected record.
type recordFault uint8

const (
	faultNone recordFault = iota
	faultNoKey
	faultTimestampRange
	faultLogAppendTime
)

// isTimestamp reports an INVALID_TIMESTAMP fault, against INVALID_RECORD.
func (f recordFault) isTimestamp() bool { return f == faultTimestampRange || f == faultLogAppendTime }

func (f recordFault) message(h *Header, r *rawRecord, timestamp int64, opts *ValidateOptions) string {
	switch f {
	case faultNoKey:
		return "compacted topic cannot accept message without key"
	case faultLogAppendTime:
		return "invalid timestamp type in message: producer should not set timestamp type to LogAppendTime"
	default:
		return fmt.Sprintf("timestamp %d of message with offset %d is out of range; the timestamp should be within [%d, %d]",
			timestamp, h.BaseOffset+int64(r.offsetDelta), opts.NowMs-opts.TimestampBeforeMaxMs, opts.NowMs+opts.TimestampAfterMaxMs)
	}
}

// checkRecord applies LogValidator's per-record checks, key first, then the
// timestamp, and returns the first fault.
func checkRecord(h *Header, r *rawRecord, timestamp int64, opts *ValidateOptions) recordFault {
	if opts.Compacted && r.key == nil {
		return faultNoKey
	}
	if !opts.LogAppendTime && timestamp != NoTimestamp {
		// Kafka's arithmetic, overflow included: diff wraps like a Java long.
		diff := opts.NowMs - timestamp
		if diff > opts.TimestampBeforeMaxMs || -diff > opts.TimestampAfterMaxMs {
			return faultTimestampRange
		}
		return faultNone
	}
	if h.IsLogAppendTime() {
		return faultLogAppendTime
	}
	return faultNone
}
