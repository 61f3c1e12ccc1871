package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
)

func putUint32At(b []byte, offset int, v uint32) { binary.BigEndian.PutUint32(b[offset:], v) }

// rebuildWith returns a batch of records built with opts changed by adjust.
func rebuildWith(adjust func(*BuildOptions), records []Record) []byte {
	opts := producerOptions(CodecNone)
	adjust(&opts)
	b, err := Build(opts, records)
	if err != nil {
		panic(err)
	}
	return b
}

// replaceRecords swaps the records section of an uncompressed batch for
// section, fixing batchLength and the CRC.
func replaceRecords(batch, section []byte) []byte {
	out := append(append([]byte(nil), batch[:HeaderSize]...), section...)
	putUint32At(out, offsetBatchLength, uint32(len(out)-LogOverhead))
	fixCRC(out)
	return out
}

// encodeRecordBody encodes one record from raw field bytes with a correct
// length prefix, so a test can write fields the builder never would.
func encodeRecordBody(body ...[]byte) []byte {
	joined := bytes.Join(body, nil)
	return append(appendVarint(nil, int64(len(joined))), joined...)
}

func varint(v int64) []byte { return appendVarint(nil, v) }

func TestValidateErrors(t *testing.T) {
	records := sampleRecords(5, 20)
	good := mustBuild(t, producerOptions(CodecNone), records)
	oneRecord := mustBuild(t, producerOptions(CodecNone), records[:1])

	tests := []struct {
		name   string
		batch  func() []byte
		adjust func(*ValidateOptions)
		want   error
		code   int16
	}{
		{name: "empty", batch: func() []byte { return nil }, want: ErrInvalidRecord, code: 87},
		{name: "shorter than a header prefix", batch: func() []byte { return good[:16] }, want: ErrInvalidRecord, code: 87},
		{name: "batch length below any batch", batch: func() []byte {
			b := bytes.Clone(good)
			putUint32At(b, offsetBatchLength, 13)
			return b[:25]
		}, want: ErrCorrupt, code: 2},
		{name: "truncated", batch: func() []byte { return good[:len(good)-1] }, want: ErrTruncated, code: 87},
		{name: "magic 1", batch: func() []byte {
			b := bytes.Clone(good)
			b[offsetMagic] = 1
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "two batches", batch: func() []byte { return append(bytes.Clone(good), good...) }, want: ErrInvalidRecord, code: 87},
		{name: "trailing byte", batch: func() []byte { return append(bytes.Clone(good), 0) }, want: ErrInvalidRecord, code: 87},
		{name: "batch smaller than its header", batch: func() []byte {
			b := bytes.Clone(good[:40])
			putUint32At(b, offsetBatchLength, 28)
			return b
		}, want: ErrCorrupt, code: 2},
		{name: "base offset not 0", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.BaseOffset = 5 }, records)
		}, want: ErrInvalidRecord, code: 87},
		{name: "over max.message.bytes", batch: func() []byte { return good },
			adjust: func(o *ValidateOptions) { o.MaxMessageBytes = len(good) - 1 }, want: ErrTooLarge, code: 10},
		{name: "crc mismatch", batch: func() []byte {
			b := bytes.Clone(good)
			b[len(b)-3] ^= 1
			return b
		}, want: ErrCorrupt, code: 2},
		{name: "record count 0", batch: func() []byte {
			b := bytes.Clone(oneRecord)
			putUint32At(b, offsetRecordCount, 0)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "negative last offset delta", batch: func() []byte {
			b := bytes.Clone(good)
			putUint32At(b, offsetLastOffsetDelta, math.MaxUint32)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "last offset delta disagrees with count", batch: func() []byte {
			b := bytes.Clone(good)
			putUint32At(b, offsetLastOffsetDelta, 3)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "control batch", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.Control, o.Transactional = true, true }, records)
		}, want: ErrInvalidRecord, code: 87},
		{name: "producer id without sequence", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.BaseSequence = -1 }, records)
		}, want: ErrInvalidRecord, code: 87},
		{name: "unknown codec", batch: func() []byte {
			b := bytes.Clone(good)
			b[offsetAttributes+1] |= 5
			fixCRC(b)
			return b
		}, want: ErrCorrupt, code: 2},
		{name: "count above the records", batch: func() []byte {
			b := bytes.Clone(good)
			putUint32At(b, offsetRecordCount, 6)
			putUint32At(b, offsetLastOffsetDelta, 5)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "count below the records", batch: func() []byte {
			b := bytes.Clone(good)
			putUint32At(b, offsetRecordCount, 4)
			putUint32At(b, offsetLastOffsetDelta, 3)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "record length past the end", batch: func() []byte {
			return replaceRecords(oneRecord, []byte{0x7e, 0, 0, 0})
		}, want: ErrInvalidRecord, code: 87},
		{name: "record length longer than its fields", batch: func() []byte {
			return replaceRecords(oneRecord, encodeRecordBody([]byte{0, 0, 0}, varint(-1), varint(-1), varint(0), []byte{0}))
		}, want: ErrInvalidRecord, code: 87},
		{name: "overlong varint", batch: func() []byte {
			// An offset delta of six varint bytes; an int32 takes at most five.
			return replaceRecords(oneRecord, encodeRecordBody([]byte{0, 0}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, varint(-1), varint(-1), varint(0)))
		}, want: ErrInvalidRecord, code: 87},
		{name: "negative header count", batch: func() []byte {
			return replaceRecords(oneRecord, encodeRecordBody([]byte{0, 0, 0}, varint(-1), varint(-1), varint(-1)))
		}, want: ErrInvalidRecord, code: 87},
		{name: "negative header key length", batch: func() []byte {
			return replaceRecords(oneRecord, encodeRecordBody([]byte{0, 0, 0}, varint(-1), varint(-1), varint(1), varint(-1), varint(-1)))
		}, want: ErrInvalidRecord, code: 87},
		{name: "offset deltas out of order", batch: func() []byte {
			kept := []Record{{Value: []byte("a")}, {OffsetDelta: 2, Value: []byte("b")}}
			b := rebuildWith(func(o *BuildOptions) { o.KeepOffsetDeltas = true }, kept)
			putUint32At(b, offsetLastOffsetDelta, 1)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
		{name: "no key on a compacted topic", batch: func() []byte {
			return rebuildWith(func(*BuildOptions) {}, []Record{{Key: []byte("k")}, {Value: []byte("no key")}})
		}, adjust: func(o *ValidateOptions) { o.Compacted = true }, want: ErrInvalidRecord, code: 87},
		{name: "timestamp before the bound", batch: func() []byte { return good },
			adjust: func(o *ValidateOptions) { o.TimestampBeforeMaxMs = 500 }, want: ErrInvalidTimestamp, code: 32},
		{name: "timestamp after the bound", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.BaseTimestamp = testNowMs + DefaultTimestampAfterMaxMs + 1 }, records)
		}, want: ErrInvalidTimestamp, code: 32},
		{name: "client claims log append time", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.LogAppendTime, o.LogAppendTimeMs = true, -1 }, records)
		}, want: ErrInvalidTimestamp, code: 32},
		{name: "client claims log append time on a log append time topic", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.LogAppendTime, o.LogAppendTimeMs = true, testNowMs }, records)
		}, adjust: func(o *ValidateOptions) { o.LogAppendTime = true }, want: ErrInvalidTimestamp, code: 32},
		{name: "timestamp errors win over key errors", batch: func() []byte {
			return rebuildWith(func(*BuildOptions) {}, []Record{{Value: []byte("no key")}, {TimestampDelta: 1 << 40, Key: []byte("k")}})
		}, adjust: func(o *ValidateOptions) { o.Compacted = true }, want: ErrInvalidTimestamp, code: 32},
		{name: "compressed garbage", batch: func() []byte {
			return replaceRecords(rebuildWith(func(o *BuildOptions) { o.Compression = CodecGzip }, records[:1]), []byte("not gzip"))
		}, want: ErrCorrupt, code: 2},
		{name: "decompresses past the bound", batch: func() []byte {
			return rebuildWith(func(o *BuildOptions) { o.Compression = CodecZstd }, sampleRecords(100, 1000))
		}, adjust: func(o *ValidateOptions) { o.MaxDecompressedBytes = 10000 }, want: ErrDecompressLimit, code: 10},
		{name: "compressed records miscounted", batch: func() []byte {
			b := rebuildWith(func(o *BuildOptions) { o.Compression = CodecLz4 }, records)
			putUint32At(b, offsetRecordCount, 4)
			putUint32At(b, offsetLastOffsetDelta, 3)
			fixCRC(b)
			return b
		}, want: ErrInvalidRecord, code: 87},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			opts := DefaultValidateOptions(testNowMs)
			if test.adjust != nil {
				test.adjust(&opts)
			}
			batch := test.batch()
			before := bytes.Clone(batch)
			_, err := Validate(batch, opts)
			if !errors.Is(err, test.want) {
				t.Fatalf("err %v, want %v", err, test.want)
			}
			if code := KafkaErrorCode(err); code != test.code {
				t.Fatalf("KafkaErrorCode %d, want %d (err %v)", code, test.code, err)
			}
			if !bytes.Equal(batch, before) {
				t.Fatal("a rejected batch was modified")
			}
			// Checking the CRC early (CRCMatches, then CRCMatched) gives the
			// same error.
			opts.CRCMatched = CRCMatches(batch)
			if _, early := Validate(batch, opts); fmt.Sprint(early) != fmt.Sprint(err) {
				t.Fatalf("with the CRC checked early: err %v, want %v", early, err)
			}
		})
	}
}

func TestCRCMatches(t *testing.T) {
	good := mustBuild(t, producerOptions(CodecNone), sampleRecords(5, 20))
	if !CRCMatches(good) {
		t.Fatal("a built batch does not match its CRC")
	}
	for i := offsetAttributes; i < len(good); i += 7 {
		bad := bytes.Clone(good)
		bad[i] ^= 0x01
		if CRCMatches(bad) {
			t.Fatalf("a batch with byte %d flipped matches its CRC", i)
		}
	}
	if CRCMatches(good[:HeaderSize-1]) || CRCMatches(nil) {
		t.Fatal("bytes shorter than a header match a CRC")
	}
}

func TestValidateRecordErrors(t *testing.T) {
	batch := rebuildWith(func(*BuildOptions) {}, []Record{
		{Key: []byte("a")},
		{Value: []byte("no key")},
		{Key: []byte("c"), TimestampDelta: -1 << 40},
		{Value: []byte("no key, bad timestamp")},
	})
	opts := DefaultValidateOptions(testNowMs)
	opts.Compacted = true
	opts.TimestampBeforeMaxMs = 1 << 30
	_, err := Validate(batch, opts)
	var rejected *RecordErrors
	if !errors.As(err, &rejected) {
		t.Fatalf("err %v is not *RecordErrors", err)
	}
	// Record 3 is rejected for its key only: the key is checked first.
	want := []int32{1, 2, 3}
	if len(rejected.Records) != len(want) {
		t.Fatalf("rejected %+v", rejected.Records)
	}
	for i, index := range want {
		if rejected.Records[i].BatchIndex != index || rejected.Records[i].Message == "" {
			t.Fatalf("rejected %+v", rejected.Records)
		}
	}
	if !errors.Is(err, ErrInvalidTimestamp) || errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("kind %v, want only ErrInvalidTimestamp", rejected.Kind)
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, c := range allCodecs {
		t.Run(c.name, func(t *testing.T) {
			batch := mustBuild(t, producerOptions(c.codec), sampleRecords(20, 100))
			before := bytes.Clone(batch)
			h, err := Validate(batch, DefaultValidateOptions(testNowMs))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(batch, before) {
				t.Fatal("a correct batch was rewritten")
			}
			if h.RecordCount != 20 || h.Compression() != c.codec || h.ProducerID != 4000 {
				t.Fatalf("header %+v", h)
			}
		})
	}
	t.Run("records without timestamps", func(t *testing.T) {
		batch := rebuildWith(func(o *BuildOptions) { o.BaseTimestamp = NoTimestamp }, []Record{{Key: []byte("k")}})
		opts := DefaultValidateOptions(testNowMs)
		opts.TimestampBeforeMaxMs, opts.TimestampAfterMaxMs = 0, 0
		if _, err := Validate(batch, opts); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no producer id", func(t *testing.T) {
		opts := DefaultBuildOptions()
		opts.BaseTimestamp = testNowMs
		if _, err := Validate(mustBuild(t, opts, sampleRecords(3, 10)), DefaultValidateOptions(testNowMs)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("timestamps on the bounds", func(t *testing.T) {
		opts := DefaultValidateOptions(testNowMs)
		opts.TimestampBeforeMaxMs, opts.TimestampAfterMaxMs = 100, 200
		batch := rebuildWith(func(o *BuildOptions) { o.BaseTimestamp = testNowMs - 100 }, []Record{{}, {TimestampDelta: 300}})
		if _, err := Validate(batch, opts); err != nil {
			t.Fatal(err)
		}
	})
}

// TestValidateSetsTimestamps checks the in-place rewrites Kafka's
// LogValidator makes: the true maxTimestamp under CreateTime, the append
// time under LogAppendTime, with a CRC that verifies.
func TestValidateSetsTimestamps(t *testing.T) {
	for _, c := range allCodecs {
		t.Run(c.name+"/create time", func(t *testing.T) {
			batch := mustBuild(t, producerOptions(c.codec), sampleRecords(10, 50))
			wantMax := int64(binary.BigEndian.Uint64(batch[offsetMaxTimestamp:]))
			binary.BigEndian.PutUint64(batch[offsetMaxTimestamp:], 12345)
			fixCRC(batch)
			h, err := Validate(batch, DefaultValidateOptions(testNowMs))
			if err != nil {
				t.Fatal(err)
			}
			verified, err := Verify(batch)
			if err != nil {
				t.Fatalf("Verify after rewrite: %v", err)
			}
			if h != verified || h.MaxTimestamp != wantMax || h.IsLogAppendTime() {
				t.Fatalf("returned %+v, verified %+v, want max %d", h, verified, wantMax)
			}
		})
		t.Run(c.name+"/log append time", func(t *testing.T) {
			batch := mustBuild(t, producerOptions(c.codec), sampleRecords(10, 50))
			baseTimestamp := int64(binary.BigEndian.Uint64(batch[offsetBaseTimestamp:]))
			opts := DefaultValidateOptions(testNowMs)
			opts.LogAppendTime = true
			h, err := Validate(batch, opts)
			if err != nil {
				t.Fatal(err)
			}
			verified, err := Verify(batch)
			if err != nil {
				t.Fatalf("Verify after rewrite: %v", err)
			}
			if h != verified || !h.IsLogAppendTime() || h.MaxTimestamp != testNowMs || h.BaseTimestamp != baseTimestamp {
				t.Fatalf("returned %+v, verified %+v", h, verified)
			}
			if ts := h.RecordTimestamp(77); ts != testNowMs {
				t.Fatalf("record timestamp %d under log append time", ts)
			}
		})
	}
}

func TestKafkaErrorCode(t *testing.T) {
	tests := []struct {
		err  error
		want int16
	}{
		{nil, 0},
		{ErrCorrupt, 2},
		{ErrTruncated, 2},
		{ErrTooLarge, 10},
		{ErrInvalidTimestamp, 32},
		{ErrInvalidRecord, 87},
		{fmt.Errorf("%w: %w", ErrCorrupt, ErrDecompressLimit), 10},
		{fmt.Errorf("%w: %w", ErrInvalidRecord, ErrTruncated), 87},
		{malformed("x"), 87},
		{&RecordErrors{Kind: ErrInvalidTimestamp}, 32},
		{errors.New("something else"), -1},
	}
	for _, test := range tests {
		if got := KafkaErrorCode(test.err); got != test.want {
			t.Errorf("KafkaErrorCode(%v) = %d, want %d", test.err, got, test.want)
		}
	}
}

// TestValidateAllocations holds the produce hot path to no allocation per
// batch for uncompressed records, and next to none for compressed ones once
// the pools are warm.
func TestValidateAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	for _, c := range allCodecs {
		batch := mustBuild(t, producerOptions(c.codec), sampleRecords(16, 1000))
		opts := DefaultValidateOptions(testNowMs)
		limit := 0.0
		if c.codec != CodecNone {
			limit = 8 // the gzip and lz4 readers allocate a little per frame
		}
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := Validate(batch, opts); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > limit {
			t.Errorf("%s: %.1f allocations per Validate, want at most %.0f", c.name, allocs, limit)
		}
		t.Logf("%s: %.1f allocations per Validate", c.name, allocs)
	}
}
