package record

import (
	"fmt"
	"sync"
)

// Record is one record of a batch (layout in the package doc). Key and Value
// are nil for null. Its offset is the batch's BaseOffset plus OffsetDelta and
// its timestamp Header.RecordTimestamp(TimestampDelta).
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	Value          []byte
	Headers        []RecordHeader
}

// RecordHeader is a key/value pair a producer attached to a record. Value is
// nil for null.
type RecordHeader struct {
	Key   string
	Value []byte
}

// minRecordBytes is the smallest encoded record: a length and six one-byte
// fields (attributes, timestampDelta, offsetDelta, keyLength, valueLength,
// headerCount). It bounds how many records a byte count can hold.
const minRecordBytes = 7

// malformedError reports records bytes that do not parse. Kafka answers such
// a batch with INVALID_RECORD, and log recovery treats it as corruption, so it
// is both ErrInvalidRecord and ErrCorrupt.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return "record: malformed records: " + e.msg }

func (e *malformedError) Is(target error) bool {
	return target == ErrInvalidRecord || target == ErrCorrupt
}

func malformed(format string, args ...any) error {
	return &malformedError{msg: fmt.Sprintf(format, args...)}
}

// rawRecord is a record parsed in place: its slices alias the records bytes
// and the headers are left encoded, so parsing allocates nothing.
type rawRecord struct {
	attributes     int8
	timestampDelta int64
	offsetDelta    int32
	key            []byte // nil when null
	value          []byte // nil when null
	headerCount    int32
	headers        []byte // headerCount encoded headers, already checked
}

// parseRecord parses the record at the start of b into r and returns the
// bytes it takes, including its length prefix.
func parseRecord(b []byte, r *rawRecord) (int, error) {
	if n, ok := parseShortRecord(b, r); ok {
		return n, nil
	}
	return parseAnyRecord(b, r)
}

// parseShortRecord parses the records most batches hold: no headers, and
// every varint (length, deltas, key and value lengths) of one or two bytes,
// which covers records up to 8 KiB at offset deltas below 8192. The
// varints are decoded in line, with none of parseAnyRecord's calls; ok is
// false for any other record, valid or not, which parseAnyRecord then
// parses (or rejects) from the start. When ok, r and n are what
// parseAnyRecord would give.
func parseShortRecord(b []byte, r *rawRecord) (n int, ok bool) {
	var u uint64
	pos := 0
	// The record's length.
	switch {
	case len(b) >= 1 && b[0] < 0x80:
		u, pos = uint64(b[0]), 1
	case len(b) >= 2 && b[1] < 0x80:
		u, pos = uint64(b[0]&0x7f)|uint64(b[1])<<7, 2
	default:
		return 0, false
	}
	length := int64(u>>1) ^ -int64(u&1)
	if length < 0 || length > int64(len(b)-pos) {
		return 0, false
	}
	body := b[pos : pos+int(length)]
	n = pos + int(length)
	pos = 0
	if len(body) < 1 {
		return 0, false
	}
	attributes := int8(body[0])
	pos = 1
	var fields [4]int64 // timestampDelta, offsetDelta, keyLength, valueLength
	var key, value []byte
	for i := range fields {
		switch {
		case pos < len(body) && body[pos] < 0x80:
			u = uint64(body[pos])
			pos++
		case pos+1 < len(body) && body[pos+1] < 0x80:
			u = uint64(body[pos]&0x7f) | uint64(body[pos+1])<<7
			pos += 2
		default:
			return 0, false
		}
		fields[i] = int64(u>>1) ^ -int64(u&1)
		if i < 2 {
			continue
		}
		// A key or value: a negative length is null.
		field := fields[i]
		var data []byte
		if field >= 0 {
			if field > int64(len(body)-pos) {
				return 0, false
			}
			data = body[pos : pos+int(field) : pos+int(field)]
			pos += int(field)
		}
		if i == 2 {
			key = data
		} else {
			value = data
		}
	}
	// No headers: a header count of zero, the record's last byte.
	if pos != len(body)-1 || body[pos] != 0 {
		return 0, false
	}
	pos++
	r.attributes = attributes
	r.timestampDelta = fields[0]
	r.offsetDelta = int32(fields[1])
	r.key, r.value = key, value
	r.headerCount = 0
	r.headers = body[pos:pos]
	return n, true
}

// parseAnyRecord is parseRecord for every record, with its errors.
func parseAnyRecord(b []byte, r *rawRecord) (int, error) {
	length, n := readVarint(b)
	if n <= 0 {
		return 0, malformed("bad record length varint")
	}
	if length < 0 || int(length) > len(b)-n {
		return 0, malformed("record length %d, %d bytes remain", length, len(b)-n)
	}
	body := b[n : n+int(length)]
	pos := 0
	if len(body) < 1 {
		return 0, malformed("record of %d bytes has no attributes", length)
	}
	r.attributes = int8(body[0])
	pos++
	var m int
	if r.timestampDelta, m = readVarlong(body[pos:]); m <= 0 {
		return 0, malformed("bad timestamp delta varint")
	}
	pos += m
	if r.offsetDelta, m = readVarint(body[pos:]); m <= 0 {
		return 0, malformed("bad offset delta varint")
	}
	pos += m
	if r.key, m = readBytesField(body[pos:]); m <= 0 {
		return 0, malformed("bad key at offset delta %d", r.offsetDelta)
	}
	pos += m
	if r.value, m = readBytesField(body[pos:]); m <= 0 {
		return 0, malformed("bad value at offset delta %d", r.offsetDelta)
	}
	pos += m
	if r.headerCount, m = readVarint(body[pos:]); m <= 0 || r.headerCount < 0 {
		return 0, malformed("bad header count at offset delta %d", r.offsetDelta)
	}
	pos += m
	headersStart := pos
	for i := int32(0); i < r.headerCount; i++ {
		keyLength, m := readVarint(body[pos:])
		if m <= 0 || keyLength < 0 || int(keyLength) > len(body)-pos-m {
			return 0, malformed("bad key of header %d at offset delta %d", i, r.offsetDelta)
		}
		pos += m + int(keyLength)
		if _, m = readBytesField(body[pos:]); m <= 0 {
			return 0, malformed("bad value of header %d at offset delta %d", i, r.offsetDelta)
		}
		pos += m
	}
	r.headers = body[headersStart:pos]
	if pos != len(body) {
		return 0, malformed("record length %d, its fields take %d", length, pos)
	}
	return n + int(length), nil
}

// readBytesField reads a varint length and that many bytes; a negative
// length is null, as Kafka reads it. n <= 0 when b is malformed.
func readBytesField(b []byte) (field []byte, n int) {
	length, m := readVarint(b)
	if m <= 0 {
		return nil, 0
	}
	if length < 0 {
		return nil, m
	}
	if int(length) > len(b)-m {
		return nil, 0
	}
	return b[m : m+int(length) : m+int(length)], m + int(length)
}

// appendHeaders decodes r's headers, which parseRecord checked, onto dst.
func appendHeaders(dst []RecordHeader, r *rawRecord) []RecordHeader {
	b := r.headers
	for i := int32(0); i < r.headerCount; i++ {
		keyLength, m := readVarint(b)
		key := string(b[m : m+int(keyLength)])
		b = b[m+int(keyLength):]
		value, m := readBytesField(b)
		b = b[m:]
		dst = append(dst, RecordHeader{Key: key, Value: value})
	}
	return dst
}

// recordIterator walks the count records of an uncompressed records section
// in place.
type recordIterator struct {
	rest  []byte
	index int32
	count int32
}

// next parses the next record into r. It returns false at the end, with an
// error if the bytes and the declared count disagree, as Kafka's iterator
// does: it reads exactly count records and then wants no bytes left.
func (it *recordIterator) next(r *rawRecord) (bool, error) {
	if it.index == it.count {
		// Kafka does not look at the bytes of a batch that declares no
		// records (compaction can leave such a batch).
		if len(it.rest) > 0 && it.count > 0 {
			return false, malformed("%d bytes remain after the %d records the batch declares", len(it.rest), it.count)
		}
		return false, nil
	}
	if len(it.rest) == 0 {
		return false, malformed("batch declares %d records, holds %d", it.count, it.index)
	}
	n, err := parseRecord(it.rest, r)
	if err != nil {
		return false, err
	}
	it.rest = it.rest[n:]
	it.index++
	return true, nil
}

// batchRecords checks that batch starts with a whole batch and returns its
// header and its records section, still compressed. It does not check the CRC.
func batchRecords(batch []byte) (Header, []byte, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return h, nil, err
	}
	if len(batch) < h.Size() {
		return h, nil, fmt.Errorf("%w: %d bytes, batch needs %d", ErrTruncated, len(batch), h.Size())
	}
	return h, batch[HeaderSize:h.Size()], nil
}

// Decompression buffers are pooled; one grown past bufferPoolMaxBytes is
// left to the garbage collector so the pool does not pin a rare huge batch.
const bufferPoolMaxBytes = 4 << 20

var buffers = sync.Pool{New: func() any { return new([]byte) }}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > bufferPoolMaxBytes {
		return
	}
	*b = (*b)[:0]
	buffers.Put(b)
}

// decompressLimit is the output bound for a caller's maxDecompressedBytes,
// where 0 or less means DefaultMaxDecompressedBytes.
func decompressLimit(maxDecompressedBytes int) int {
	if maxDecompressedBytes <= 0 {
		return DefaultMaxDecompressedBytes
	}
	return maxDecompressedBytes
}

// Records calls fn with each record of the batch at the start of batch, in
// order, decompressing with at most maxDecompressedBytes of output (0 means
// DefaultMaxDecompressedBytes). It stops
// at the first error fn returns and returns it. It checks framing (the whole
// batch is there, records parse, their number matches recordCount) but not
// the CRC: call Verify first on bytes that may be damaged.
//
// Nothing fn is given may be kept after fn returns without copying: the
// Headers slice is reused from record to record, and for a compressed batch
// Key, Value and header values live in a pooled buffer. ReadRecords returns
// records that can be kept.
func Records(batch []byte, maxDecompressedBytes int, fn func(Record) error) error {
	h, records, err := batchRecords(batch)
	if err != nil {
		return err
	}
	if codec := h.Compression(); codec != CodecNone && h.RecordCount > 0 {
		buf := getBuffer()
		defer putBuffer(buf)
		*buf, err = DecompressBounded(codec, (*buf)[:0], records, decompressLimit(maxDecompressedBytes))
		if err != nil {
			return err
		}
		records = *buf
	}
	it := recordIterator{rest: records, count: h.RecordCount}
	var raw rawRecord
	var headers []RecordHeader
	for {
		ok, err := it.next(&raw)
		if !ok {
			return err
		}
		headers = appendHeaders(headers[:0], &raw)
		err = fn(Record{
			Attributes:     raw.attributes,
			TimestampDelta: raw.timestampDelta,
			OffsetDelta:    raw.offsetDelta,
			Key:            raw.key,
			Value:          raw.value,
			Headers:        headers,
		})
		if err != nil {
			return err
		}
	}
}

// ReadRecords returns the records of the batch at the start of batch, with
// Records' checks and bound. For an uncompressed batch their slices alias batch; for a
// compressed one, a buffer of their own.
func ReadRecords(batch []byte, maxDecompressedBytes int) ([]Record, error) {
	h, records, err := batchRecords(batch)
	if err != nil {
		return nil, err
	}
	if codec := h.Compression(); codec != CodecNone && h.RecordCount > 0 {
		if records, err = DecompressBounded(codec, nil, records, decompressLimit(maxDecompressedBytes)); err != nil {
			return nil, err
		}
	}
	// recordCount comes from the wire; never trust it for an allocation.
	out := make([]Record, 0, min(int(h.RecordCount), len(records)/minRecordBytes))
	it := recordIterator{rest: records, count: h.RecordCount}
	var raw rawRecord
	for {
		ok, err := it.next(&raw)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		rec := Record{
			Attributes:     raw.attributes,
			TimestampDelta: raw.timestampDelta,
			OffsetDelta:    raw.offsetDelta,
			Key:            raw.key,
			Value:          raw.value,
		}
		if raw.headerCount > 0 {
			rec.Headers = appendHeaders(make([]RecordHeader, 0, raw.headerCount), &raw)
		}
		out = append(out, rec)
	}
}
