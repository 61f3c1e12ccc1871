package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
)

// TestRoundTrip builds, validates and reads back batches of every codec, with
// both readers.
func TestRoundTrip(t *testing.T) {
	records := append(edgeRecords(), sampleRecords(200, 300)...)
	for _, c := range allCodecs {
		t.Run(c.name, func(t *testing.T) {
			batch := mustBuild(t, producerOptions(c.codec), records)
			opts := DefaultValidateOptions(testNowMs)
			opts.TimestampAfterMaxMs = math.MaxInt64 // edgeRecords has a delta of 2^40 ms
			h, err := Validate(batch, opts)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if h.RecordCount != int32(len(records)) || h.Compression() != c.codec {
				t.Fatalf("header %+v", h)
			}

			i := 0
			err = Records(batch, 1<<20, func(r Record) error {
				if diff := sameRecord(r, records[i], int32(i)); diff != "" {
					t.Fatalf("Records, record %d: %s", i, diff)
				}
				i++
				return nil
			})
			if err != nil || i != len(records) {
				t.Fatalf("Records: %d records, %v", i, err)
			}

			got, err := ReadRecords(batch, 1<<20)
			if err != nil || len(got) != len(records) {
				t.Fatalf("ReadRecords: %d records, %v", len(got), err)
			}
			for i := range got {
				if diff := sameRecord(got[i], records[i], int32(i)); diff != "" {
					t.Fatalf("ReadRecords, record %d: %s", i, diff)
				}
			}
		})
	}
}

func TestRecordsStopsOnCallbackError(t *testing.T) {
	batch := mustBuild(t, producerOptions(CodecSnappy), sampleRecords(10, 10))
	stop := errors.New("stop")
	calls := 0
	err := Records(batch, 1<<20, func(Record) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestReadRecordsKeepsCompressedRecords(t *testing.T) {
	batch := mustBuild(t, producerOptions(CodecZstd), sampleRecords(10, 10))
	first, err := ReadRecords(batch, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// Read another batch through the pools; the first result must not change.
	if _, err := ReadRecords(mustBuild(t, producerOptions(CodecZstd), sampleRecords(10, 99)), 1<<20); err != nil {
		t.Fatal(err)
	}
	for i, r := range first {
		if diff := sameRecord(r, sampleRecords(10, 10)[i], int32(i)); diff != "" {
			t.Fatalf("record %d changed: %s", i, diff)
		}
	}
}

func TestRecordsErrors(t *testing.T) {
	good := mustBuild(t, producerOptions(CodecNone), sampleRecords(3, 10))
	tests := []struct {
		name  string
		batch []byte
		want  error
	}{
		{"short header", good[:30], ErrTruncated},
		{"truncated", good[:len(good)-1], ErrTruncated},
		{"bad magic", func() []byte { b := bytes.Clone(good); b[offsetMagic] = 0; return b }(), ErrCorrupt},
		{"count above records", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[offsetRecordCount:], 4)
			return b
		}(), ErrCorrupt},
		{"count below records", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[offsetRecordCount:], 2)
			return b
		}(), ErrCorrupt},
		{"garbage zstd", replaceRecords(mustBuild(t, producerOptions(CodecZstd), sampleRecords(1, 1)), []byte("garbage")), ErrCorrupt},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			err := Records(test.batch, 1<<20, func(Record) error { return nil })
			if !errors.Is(err, test.want) {
				t.Fatalf("Records: err %v, want %v", err, test.want)
			}
			if _, err := ReadRecords(test.batch, 1<<20); !errors.Is(err, test.want) {
				t.Fatalf("ReadRecords: err %v, want %v", err, test.want)
			}
		})
	}
}

// TestEmptyBatch reads a batch with no records, as compaction can leave one
// to keep a producer's sequence: Kafka yields nothing and looks no further.
func TestEmptyBatch(t *testing.T) {
	b := mustBuild(t, producerOptions(CodecNone), sampleRecords(1, 1))
	binary.BigEndian.PutUint32(b[offsetRecordCount:], 0)
	fixCRC(b)
	records, err := ReadRecords(b, 0)
	if err != nil || len(records) != 0 {
		t.Fatalf("%d records, %v", len(records), err)
	}
}

// TestRecordsTrailingBytes reads a batch followed by another: Records looks
// only at the first.
func TestRecordsTrailingBytes(t *testing.T) {
	first := mustBuild(t, producerOptions(CodecNone), sampleRecords(2, 1))
	two := append(bytes.Clone(first), mustBuild(t, producerOptions(CodecNone), sampleRecords(5, 1))...)
	records, err := ReadRecords(two, 0)
	if err != nil || len(records) != 2 {
		t.Fatalf("%d records, %v", len(records), err)
	}
}

func TestBuildErrors(t *testing.T) {
	opts := DefaultBuildOptions()
	if _, err := Build(opts, nil); err == nil {
		t.Error("Build with no records succeeded")
	}
	opts.Compression = 5
	if _, err := Build(opts, sampleRecords(1, 1)); err == nil {
		t.Error("Build with codec 5 succeeded")
	}
	opts = DefaultBuildOptions()
	opts.KeepOffsetDeltas = true
	if _, err := Build(opts, []Record{{OffsetDelta: 1}, {OffsetDelta: 1}}); err == nil {
		t.Error("Build with repeated offset deltas succeeded")
	}
	if _, err := Build(opts, []Record{{OffsetDelta: -1}}); err == nil {
		t.Error("Build with a negative offset delta succeeded")
	}
}

// TestBuildKeepsOffsetDeltas builds a batch with gaps, as the log cleaner
// writes one, and reads the gaps back.
func TestBuildKeepsOffsetDeltas(t *testing.T) {
	opts := DefaultBuildOptions()
	opts.KeepOffsetDeltas = true
	opts.BaseOffset = 100
	batch := mustBuild(t, opts, []Record{{OffsetDelta: 0, Key: []byte("a")}, {OffsetDelta: 4, Key: []byte("b")}, {OffsetDelta: 9, Key: []byte("c")}})
	h, err := Verify(batch)
	if err != nil || h.LastOffsetDelta != 9 || h.RecordCount != 3 || h.LastOffset() != 109 {
		t.Fatalf("header %+v, %v", h, err)
	}
	records, err := ReadRecords(batch, 0)
	if err != nil || records[1].OffsetDelta != 4 || records[2].OffsetDelta != 9 {
		t.Fatalf("records %+v, %v", records, err)
	}
}

func TestAppendBatch(t *testing.T) {
	first := mustBuild(t, producerOptions(CodecLz4), sampleRecords(3, 10))
	both, err := AppendBatch(bytes.Clone(first), producerOptions(CodecGzip), sampleRecords(4, 10))
	if err != nil {
		t.Fatal(err)
	}
	batches, err := SplitBatches(both)
	if err != nil || len(batches) != 2 || !bytes.Equal(batches[0], first) {
		t.Fatalf("%d batches, %v", len(batches), err)
	}
	if h, err := Verify(batches[1]); err != nil || h.RecordCount != 4 {
		t.Fatalf("second batch %+v, %v", h, err)
	}
}

func TestSetLogAppendTime(t *testing.T) {
	batch := mustBuild(t, producerOptions(CodecNone), sampleRecords(3, 10))
	before, _ := Verify(batch)
	if err := SetLogAppendTime(batch, testNowMs+5); err != nil {
		t.Fatal(err)
	}
	h, err := Verify(batch)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !h.IsLogAppendTime() || h.MaxTimestamp != testNowMs+5 || h.BaseTimestamp != before.BaseTimestamp ||
		h.Attributes&^AttrLogAppendTime != before.Attributes {
		t.Fatalf("header %+v", h)
	}
	err = Records(batch, 0, func(r Record) error {
		if ts := h.RecordTimestamp(r.TimestampDelta); ts != testNowMs+5 {
			t.Fatalf("record timestamp %d", ts)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := SetLogAppendTime(batch[:len(batch)-1], 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
	if err := SetLogAppendTime(batch[:10], 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short: %v", err)
	}
}

func TestSplitBatches(t *testing.T) {
	a := mustBuild(t, producerOptions(CodecNone), sampleRecords(2, 10))
	b := mustBuild(t, producerOptions(CodecSnappy), sampleRecords(3, 10))
	set := append(bytes.Clone(a), b...)
	if n, err := CountBatches(set); n != 2 || err != nil {
		t.Fatalf("CountBatches %d, %v", n, err)
	}
	if n, err := CountBatches(nil); n != 0 || err != nil {
		t.Fatalf("CountBatches(nil) %d, %v", n, err)
	}
	batches, err := SplitBatches(append(bytes.Clone(set), b[:70]...))
	if !errors.Is(err, ErrTruncated) || len(batches) != 2 {
		t.Fatalf("trailing partial batch: %d batches, %v", len(batches), err)
	}
	if n, err := CountBatches(append(bytes.Clone(set), 1, 2, 3)); !errors.Is(err, ErrTruncated) || n != 2 {
		t.Fatalf("trailing bytes: %d, %v", n, err)
	}
	bad := bytes.Clone(set)
	bad[len(a)+offsetMagic] = 1
	if n, err := CountBatches(bad); !errors.Is(err, ErrCorrupt) || n != 1 {
		t.Fatalf("second batch magic 1: %d, %v", n, err)
	}
}

// TestConcurrentUse validates and reads batches of every codec from several
// goroutines at once, sharing the codec pools, with different bounds so the
// pooled zstd decoders change theirs.
func TestConcurrentUse(t *testing.T) {
	var batches [][]byte
	for _, c := range allCodecs {
		batches = append(batches, mustBuild(t, producerOptions(c.codec), sampleRecords(20, 200)))
	}
	const goroutines, rounds = 4, 50
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			for i := range rounds {
				for _, batch := range batches {
					opts := DefaultValidateOptions(testNowMs)
					opts.MaxDecompressedBytes = (1 + (g+i)%3) << 20
					if _, err := Validate(bytes.Clone(batch), opts); err != nil {
						errs <- err
						return
					}
					records, err := ReadRecords(batch, opts.MaxDecompressedBytes)
					if err != nil || len(records) != 20 || !bytes.HasPrefix(records[18].Value, []byte("value-18-")) {
						errs <- fmt.Errorf("ReadRecords: %d records, %v", len(records), err)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
