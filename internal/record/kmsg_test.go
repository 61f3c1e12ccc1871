package record

import (
	"bytes"
	"encoding/hex"
	"hash/crc32"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// These tests check our builder and parser against franz-go's kmsg types, an
// independent implementation of the same wire format that real clients use.

// kmsgRecords encodes records with kmsg.Record, record i at offset delta i.
// kmsg wants each record's length filled in: encode once with length 0 (one
// byte of varint) to learn the body size, then for real.
func kmsgRecords(records []Record) []byte {
	var out []byte
	for i, r := range records {
		kr := kmsg.Record{
			Attributes:       r.Attributes,
			TimestampDelta64: r.TimestampDelta,
			OffsetDelta:      int32(i),
			Key:              r.Key,
			Value:            r.Value,
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1)
		out = kr.AppendTo(out)
	}
	return out
}

// kmsgBatch wraps records (already compressed if opts says so) in a
// kmsg.RecordBatch. kmsg does not compute the CRC: like kgo's producer we
// serialize with CRC 0, take CRC-32C over everything after the CRC field
// (byte 21 on) and serialize again with it.
func kmsgBatch(opts BuildOptions, records []Record, recordsSection []byte) []byte {
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
	maxTimestamp := opts.LogAppendTimeMs
	if !opts.LogAppendTime {
		maxTimestamp = opts.BaseTimestamp + records[0].TimestampDelta
		for _, r := range records {
			maxTimestamp = max(maxTimestamp, opts.BaseTimestamp+r.TimestampDelta)
		}
	}
	batch := kmsg.RecordBatch{
		FirstOffset:          opts.BaseOffset,
		Length:               int32(HeaderSize - LogOverhead + len(recordsSection)),
		PartitionLeaderEpoch: opts.PartitionLeaderEpoch,
		Magic:                2,
		Attributes:           attributes,
		LastOffsetDelta:      int32(len(records) - 1),
		FirstTimestamp:       opts.BaseTimestamp,
		MaxTimestamp:         maxTimestamp,
		ProducerID:           opts.ProducerID,
		ProducerEpoch:        opts.ProducerEpoch,
		FirstSequence:        opts.BaseSequence,
		NumRecords:           int32(len(records)),
		Records:              recordsSection,
	}
	unsummed := batch.AppendTo(nil)
	batch.CRC = int32(crc32.Checksum(unsummed[21:], crc32.MakeTable(crc32.Castagnoli)))
	return batch.AppendTo(nil)
}

// edgeRecords covers the encodings that differ by a byte: null against empty
// key and value, negative and 64-bit timestamp deltas, multi-byte varints,
// empty header key, null header value.
func edgeRecords() []Record {
	return []Record{
		{Key: nil, Value: nil},
		{Key: []byte{}, Value: []byte{}},
		{TimestampDelta: -1, Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 300)},
		{TimestampDelta: 1 << 40, Attributes: 0, Key: bytes.Repeat([]byte("K"), 70000), Value: []byte("x")},
		{Headers: []RecordHeader{{Key: "", Value: []byte{}}, {Key: "null", Value: nil}, {Key: "k", Value: []byte("v")}}},
	}
}

func TestBuildMatchesKmsgByteForByte(t *testing.T) {
	variants := map[string]func(*BuildOptions){
		"defaults": func(*BuildOptions) {},
		"idempotent": func(o *BuildOptions) {
			o.ProducerID, o.ProducerEpoch, o.BaseSequence = 1<<40, 7, 1000
		},
		"transactional at offset": func(o *BuildOptions) {
			o.BaseOffset, o.PartitionLeaderEpoch = 123456789, 42
			o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = 9, 1, 0, true
		},
		"log append time": func(o *BuildOptions) { o.LogAppendTime, o.LogAppendTimeMs = true, testNowMs },
	}
	for name, adjust := range variants {
		for _, set := range []struct {
			name    string
			records []Record
		}{{"edge", edgeRecords()}, {"sample", sampleRecords(50, 100)}} {
			t.Run(name+"/"+set.name, func(t *testing.T) {
				opts := DefaultBuildOptions()
				opts.BaseTimestamp = testNowMs
				adjust(&opts)
				ours := mustBuild(t, opts, set.records)
				theirs := kmsgBatch(opts, set.records, kmsgRecords(set.records))
				if !bytes.Equal(ours, theirs) {
					t.Fatalf("Build and kmsg differ\n ours %s\ntheirs %s", hex.EncodeToString(ours[:min(len(ours), 100)]), hex.EncodeToString(theirs[:min(len(theirs), 100)]))
				}
			})
		}
	}
}

// TestKmsgReadsOurs parses our batches, every codec, with kmsg and kgo's
// decompressor only.
func TestKmsgReadsOurs(t *testing.T) {
	records := append(edgeRecords(), sampleRecords(40, 500)...)
	decompressor := kgo.DefaultDecompressor()
	for _, c := range allCodecs {
		t.Run(c.name, func(t *testing.T) {
			opts := producerOptions(c.codec)
			ours := mustBuild(t, opts, records)
			var batch kmsg.RecordBatch
			if err := batch.ReadFrom(ours); err != nil {
				t.Fatal(err)
			}
			if crc := int32(crc32.Checksum(ours[21:], crc32.MakeTable(crc32.Castagnoli))); batch.CRC != crc {
				t.Fatalf("crc %08x, computed %08x", batch.CRC, crc)
			}
			if batch.NumRecords != int32(len(records)) || batch.LastOffsetDelta != int32(len(records)-1) ||
				batch.ProducerID != opts.ProducerID || batch.FirstSequence != opts.BaseSequence ||
				batch.Attributes != int16(c.codec) {
				t.Fatalf("header %+v", batch)
			}
			raw, err := decompressor.Decompress(batch.Records, kgo.CompressionCodecType(c.codec))
			if err != nil {
				t.Fatal(err)
			}
			for i := range records {
				var kr kmsg.Record
				if err := kr.ReadFrom(raw); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				got := Record{Attributes: kr.Attributes, TimestampDelta: kr.TimestampDelta64, OffsetDelta: kr.OffsetDelta, Key: kr.Key, Value: kr.Value}
				for _, h := range kr.Headers {
					got.Headers = append(got.Headers, RecordHeader{Key: h.Key, Value: h.Value})
				}
				if diff := sameRecord(got, records[i], int32(i)); diff != "" {
					t.Fatalf("record %d: %s", i, diff)
				}
				raw = raw[int(kr.Length)+varintSize(int64(kr.Length)):]
			}
			if len(raw) != 0 {
				t.Fatalf("%d bytes after the records", len(raw))
			}
		})
	}
}

// TestWeReadKmsg builds batches with kmsg and kgo's compressors only, then
// verifies, validates and reads them with this package.
func TestWeReadKmsg(t *testing.T) {
	records := append(edgeRecords(), sampleRecords(40, 500)...)
	kgoCodecs := map[int8]kgo.CompressionCodec{
		CodecGzip:   kgo.GzipCompression(),
		CodecSnappy: kgo.SnappyCompression(),
		CodecLz4:    kgo.Lz4Compression(),
		CodecZstd:   kgo.ZstdCompression(),
	}
	for _, c := range allCodecs {
		t.Run(c.name, func(t *testing.T) {
			opts := producerOptions(c.codec)
			section := kmsgRecords(records)
			if c.codec != CodecNone {
				compressor, err := kgo.DefaultCompressor(kgoCodecs[c.codec])
				if err != nil {
					t.Fatal(err)
				}
				section, _ = compressor.Compress(new(bytes.Buffer), section)
				section = bytes.Clone(section)
			}
			theirs := kmsgBatch(opts, records, section)
			if _, err := Verify(theirs); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			validate := DefaultValidateOptions(testNowMs)
			validate.TimestampAfterMaxMs = math.MaxInt64 // edgeRecords has a delta of 2^40 ms
			if _, err := Validate(bytes.Clone(theirs), validate); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, err := ReadRecords(theirs, 1<<20)
			if err != nil {
				t.Fatalf("ReadRecords: %v", err)
			}
			if len(got) != len(records) {
				t.Fatalf("%d records, want %d", len(got), len(records))
			}
			for i := range got {
				if diff := sameRecord(got[i], records[i], int32(i)); diff != "" {
					t.Fatalf("record %d: %s", i, diff)
				}
			}
		})
	}
}
