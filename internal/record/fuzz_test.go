package record

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
)

// Run a target with, for example,
//
//	go test -run XXX -fuzz '^FuzzValidate$' -fuzztime=20s -fuzzminimizetime=10x ./internal/record/
//
// The codecs' encoders and decoders come from sync.Pools that the garbage
// collector empties at will, so coverage varies from one run of an input to
// the next; without a small -fuzzminimizetime, minimizing such an input can
// take its full default minute while the worker runs nothing new.
//
// Go 1.26's fuzz coordinator can fail a run with a bare "context deadline
// exceeded" and no crasher at the end of a -fuzztime duration on a loaded
// machine (golang/go#75804); a count such as -fuzztime=100000x avoids it.

// fuzzDecompressBytes bounds every decompression in the fuzz targets, so a
// found bomb costs a megabyte, not the machine.
const fuzzDecompressBytes = 1 << 20

// seedBatches are valid batches of every codec plus the hand-written fixture.
func seedBatches(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range allCodecs {
		seeds = append(seeds, mustBuild(tb, producerOptions(c.codec), sampleRecords(4, 30)))
		seeds = append(seeds, mustBuild(tb, producerOptions(c.codec), edgeRecords()[:3]))
	}
	fixture, _ := hex.DecodeString(fixtureBatch)
	control, _ := BuildControlBatch(ControlBatchOptions{Type: ControlCommit, ProducerID: 1})
	return append(seeds, fixture, control)
}

func FuzzVerify(f *testing.F) {
	for _, seed := range seedBatches(f) {
		f.Add(seed)
		f.Add(seed[:len(seed)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Verify(b)
		if err == nil {
			if h.Size() > len(b) || ComputeCRC(b[:h.Size()]) != h.CRC {
				t.Fatalf("Verify accepted %+v over %d bytes", h, len(b))
			}
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) {
			t.Fatalf("Verify error %v is neither ErrCorrupt nor ErrTruncated", err)
		}
		batches, err := SplitBatches(b)
		if n, countErr := CountBatches(b); n != len(batches) || (err == nil) != (countErr == nil) {
			t.Fatalf("CountBatches %d, %v; SplitBatches %d, %v", n, countErr, len(batches), err)
		}
		total := 0
		for _, batch := range batches {
			total += len(batch)
		}
		if err == nil && total != len(b) {
			t.Fatalf("SplitBatches covered %d of %d bytes", total, len(b))
		}
	})
}

// FuzzValidate mutates batches and, when fixCRC is set, recomputes the CRC so
// that mutations reach the records rather than stopping at the checksum.
func FuzzValidate(f *testing.F) {
	for _, seed := range seedBatches(f) {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, b []byte, fixCRC bool) {
		b = bytes.Clone(b)
		if fixCRC && len(b) >= HeaderSize {
			if size := LogOverhead + int(int32(binary.BigEndian.Uint32(b[offsetBatchLength:]))); size >= HeaderSize && size <= len(b) {
				binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b[:size]))
			}
		}
		opts := DefaultValidateOptions(testNowMs)
		opts.MaxDecompressedBytes = fuzzDecompressBytes
		opts.Compacted = len(b)%2 == 0
		h, err := Validate(bytes.Clone(b), opts)
		switch code := KafkaErrorCode(err); code {
		case 0, 2, 10, 32, 87:
		default:
			t.Fatalf("Validate error %v maps to code %d", err, code)
		}
		records, readErr := ReadRecords(b, fuzzDecompressBytes)
		n := 0
		recordsErr := Records(b, fuzzDecompressBytes, func(Record) error { n++; return nil })
		if (readErr == nil) != (recordsErr == nil) || (readErr == nil && n != len(records)) {
			t.Fatalf("ReadRecords %d, %v; Records %d, %v", len(records), readErr, n, recordsErr)
		}
		if err != nil {
			return
		}
		if readErr != nil || len(records) != int(h.RecordCount) {
			t.Fatalf("Validate accepted %+v but ReadRecords gave %d records, %v", h, len(records), readErr)
		}
		for i, r := range records {
			if r.OffsetDelta != int32(i) {
				t.Fatalf("Validate accepted offset delta %d at record %d", r.OffsetDelta, i)
			}
		}
	})
}

func FuzzDecompressGzip(f *testing.F)   { fuzzDecompress(f, CodecGzip) }
func FuzzDecompressSnappy(f *testing.F) { fuzzDecompress(f, CodecSnappy) }
func FuzzDecompressLz4(f *testing.F)    { fuzzDecompress(f, CodecLz4) }
func FuzzDecompressZstd(f *testing.F)   { fuzzDecompress(f, CodecZstd) }

// fuzzDecompress feeds codec arbitrary input, which must decode within the
// bound or fail with ErrCorrupt, and round-trips the same input through
// Compress.
func fuzzDecompress(f *testing.F, codec int8) {
	// Small seeds keep each execution and the minimizing of new inputs
	// fast; the unit tests cover multi-block inputs.
	for _, input := range [][]byte{{}, []byte("a"), bytes.Repeat([]byte("kafka "), 200), make([]byte, 4096)} {
		compressed, err := Compress(codec, nil, input)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(compressed)
		f.Add(input)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := DecompressBounded(codec, []byte("x"), src, fuzzDecompressBytes)
		switch {
		case err != nil && !errors.Is(err, ErrCorrupt):
			t.Fatalf("error %v is not ErrCorrupt", err)
		case err != nil && string(out) != "x":
			t.Fatalf("failed decompression changed dst to %d bytes", len(out))
		case err == nil && (len(out)-1 > fuzzDecompressBytes || out[0] != 'x'):
			t.Fatalf("%d bytes out, bound %d", len(out)-1, fuzzDecompressBytes)
		}
		compressed, err := Compress(codec, nil, src)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecompressBounded(codec, nil, compressed, len(src))
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("round trip of %d bytes: %v", len(src), err)
		}
	})
}
