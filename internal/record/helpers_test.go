package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// allCodecs lists every codec with its name, for table tests.
var allCodecs = []struct {
	name  string
	codec int8
}{
	{"none", CodecNone},
	{"gzip", CodecGzip},
	{"snappy", CodecSnappy},
	{"lz4", CodecLz4},
	{"zstd", CodecZstd},
}

// testNowMs is the clock tests validate at; record timestamps sit near it.
const testNowMs = int64(1_700_000_000_000)

// sampleRecords returns n records with keys, values of valueBytes bytes,
// headers on every third record and a null value on every fifth, timestamps
// spread over a few seconds.
func sampleRecords(n, valueBytes int) []Record {
	records := make([]Record, n)
	for i := range records {
		value := bytes.Repeat([]byte{byte('a' + i%26)}, valueBytes)
		copy(value, fmt.Sprintf("value-%d-", i))
		records[i] = Record{
			TimestampDelta: int64(i * 37 % 5000),
			Key:            []byte(fmt.Sprintf("key-%d", i)),
			Value:          value,
		}
		if i%3 == 0 {
			records[i].Headers = []RecordHeader{{Key: "h1", Value: []byte("v1")}, {Key: "trace", Value: nil}}
		}
		if i%5 == 4 {
			records[i].Value = nil
		}
	}
	return records
}

// producerOptions are the build options of a batch an idempotent client sends.
func producerOptions(codec int8) BuildOptions {
	opts := DefaultBuildOptions()
	opts.Compression = codec
	opts.BaseTimestamp = testNowMs - 1000
	opts.ProducerID = 4000
	opts.ProducerEpoch = 2
	opts.BaseSequence = 17
	return opts
}

func mustBuild(t testing.TB, opts BuildOptions, records []Record) []byte {
	t.Helper()
	b, err := Build(opts, records)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return b
}

// fixCRC recomputes the CRC of the batch at the start of b after a test
// tampered with it.
func fixCRC(b []byte) {
	size := LogOverhead + int(binary.BigEndian.Uint32(b[offsetBatchLength:]))
	binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b[:size]))
}

// sameRecord reports how got differs from want, treating OffsetDelta as
// wantDelta; "" when equal, nil and empty distinguished.
func sameRecord(got, want Record, wantDelta int32) string {
	switch {
	case got.Attributes != want.Attributes:
		return fmt.Sprintf("attributes %d, want %d", got.Attributes, want.Attributes)
	case got.TimestampDelta != want.TimestampDelta:
		return fmt.Sprintf("timestamp delta %d, want %d", got.TimestampDelta, want.TimestampDelta)
	case got.OffsetDelta != wantDelta:
		return fmt.Sprintf("offset delta %d, want %d", got.OffsetDelta, wantDelta)
	case !sameBytes(got.Key, want.Key):
		return fmt.Sprintf("key %q (nil %v), want %q (nil %v)", got.Key, got.Key == nil, want.Key, want.Key == nil)
	case !sameBytes(got.Value, want.Value):
		return fmt.Sprintf("value of %d bytes (nil %v), want %d (nil %v)", len(got.Value), got.Value == nil, len(want.Value), want.Value == nil)
	case len(got.Headers) != len(want.Headers):
		return fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers))
	}
	for i := range got.Headers {
		if got.Headers[i].Key != want.Headers[i].Key || !sameBytes(got.Headers[i].Value, want.Headers[i].Value) {
			return fmt.Sprintf("header %d = %+v, want %+v", i, got.Headers[i], want.Headers[i])
		}
	}
	return ""
}

// sameBytes is bytes.Equal that also tells nil from empty.
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}
