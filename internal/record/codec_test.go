package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kgo"
)

// codecInputs are payloads of the sizes and shapes codecs stumble on: empty,
// tiny, one xerial block and a bit, several lz4 blocks, incompressible.
func codecInputs() map[string][]byte {
	random := make([]byte, 200<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog "), 5000)
	return map[string][]byte{
		"empty":    {},
		"one byte": {42},
		"32KiB+1":  text[:xerialBlockBytes+1],
		"text":     text,
		"random":   random,
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for _, c := range allCodecs {
		for name, input := range codecInputs() {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				prefix := []byte("prefix")
				compressed, err := Compress(c.codec, append([]byte(nil), prefix...), input)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(compressed, prefix) {
					t.Fatal("Compress did not append to dst")
				}
				compressed = compressed[len(prefix):]
				out, err := DecompressBounded(c.codec, []byte("x"), compressed, len(input))
				if err != nil {
					t.Fatalf("DecompressBounded: %v", err)
				}
				if !bytes.Equal(out[1:], input) || out[0] != 'x' {
					t.Fatalf("round trip differs: %d bytes back, %d in", len(out)-1, len(input))
				}
				if len(input) > 0 {
					_, err = DecompressBounded(c.codec, nil, compressed, len(input)-1)
					if !errors.Is(err, ErrDecompressLimit) || !errors.Is(err, ErrCorrupt) {
						t.Fatalf("one byte under the bound: err %v, want ErrDecompressLimit and ErrCorrupt", err)
					}
				}
			})
		}
	}
}

// TestCodecsAgainstFranzGo checks both directions against franz-go's codecs,
// which real clients use: what kgo compresses we decompress, and the reverse.
func TestCodecsAgainstFranzGo(t *testing.T) {
	kgoCodecs := map[int8]kgo.CompressionCodec{
		CodecGzip:   kgo.GzipCompression(),
		CodecSnappy: kgo.SnappyCompression(),
		CodecLz4:    kgo.Lz4Compression(),
		CodecZstd:   kgo.ZstdCompression(),
	}
	decompressor := kgo.DefaultDecompressor()
	for _, c := range allCodecs[1:] {
		compressor, err := kgo.DefaultCompressor(kgoCodecs[c.codec])
		if err != nil {
			t.Fatal(err)
		}
		for name, input := range codecInputs() {
			if len(input) == 0 {
				continue // kgo never compresses an empty batch
			}
			t.Run(c.name+"/"+name, func(t *testing.T) {
				theirs, codec := compressor.Compress(new(bytes.Buffer), input)
				if int8(codec) != c.codec {
					t.Fatalf("kgo used codec %d", codec)
				}
				out, err := DecompressBounded(c.codec, nil, theirs, len(input))
				if err != nil || !bytes.Equal(out, input) {
					t.Fatalf("decompressing kgo's %s: err %v, equal %v", c.name, err, bytes.Equal(out, input))
				}
				ours, err := Compress(c.codec, nil, input)
				if err != nil {
					t.Fatal(err)
				}
				out, err = decompressor.Decompress(ours, kgo.CompressionCodecType(c.codec))
				if err != nil || !bytes.Equal(out, input) {
					t.Fatalf("kgo decompressing ours: err %v, equal %v", err, bytes.Equal(out, input))
				}
			})
		}
	}
}

// TestGzipAgainstStdlib checks our gzip against the standard library's, and
// that concatenated members read as one stream as Java's GZIPInputStream does.
func TestGzipAgainstStdlib(t *testing.T) {
	var members bytes.Buffer
	for _, part := range []string{"first member, ", "second member"} {
		w := gzip.NewWriter(&members)
		w.Write([]byte(part))
		w.Close()
	}
	out, err := DecompressBounded(CodecGzip, nil, members.Bytes(), 100)
	if err != nil || string(out) != "first member, second member" {
		t.Fatalf("concatenated members: %q, %v", out, err)
	}
	ours, _ := Compress(CodecGzip, nil, []byte("hello gzip"))
	r, err := gzip.NewReader(bytes.NewReader(ours))
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(r)
	if err != nil || string(back) != "hello gzip" {
		t.Fatalf("stdlib reading ours: %q, %v", back, err)
	}
}

// TestSnappyForms covers the three snappy inputs clients send: a raw block
// (sarama, older librdkafka), xerial framing (Java), and two xerial streams
// appended; and that we write the framing byte for byte as documented.
func TestSnappyForms(t *testing.T) {
	input := bytes.Repeat([]byte("snappy "), 10000) // 70000 bytes: three 32 KiB blocks
	raw := snappy.Encode(nil, input)
	out, err := DecompressBounded(CodecSnappy, nil, raw, len(input))
	if err != nil || !bytes.Equal(out, input) {
		t.Fatalf("raw block: err %v", err)
	}

	ours, _ := Compress(CodecSnappy, nil, input)
	wantHeader := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	if !bytes.HasPrefix(ours, wantHeader) {
		t.Fatalf("xerial header % x", ours[:16])
	}
	// Walk the blocks by hand with the reference snappy decoder.
	var decoded []byte
	blocks := 0
	for rest := ours[16:]; len(rest) > 0; blocks++ {
		n := binary.BigEndian.Uint32(rest)
		block, err := snappy.Decode(nil, rest[4:4+n])
		if err != nil {
			t.Fatalf("block %d: %v", blocks, err)
		}
		if len(block) > xerialBlockBytes {
			t.Fatalf("block %d decodes to %d bytes, over 32 KiB", blocks, len(block))
		}
		decoded = append(decoded, block...)
		rest = rest[4+n:]
	}
	if blocks != 3 || !bytes.Equal(decoded, input) {
		t.Fatalf("%d blocks, equal %v", blocks, bytes.Equal(decoded, input))
	}

	concatenated := append(append([]byte(nil), ours...), ours...)
	out, err = DecompressBounded(CodecSnappy, nil, concatenated, 2*len(input))
	if err != nil || !bytes.Equal(out, append(append([]byte(nil), input...), input...)) {
		t.Fatalf("concatenated xerial streams: err %v", err)
	}

	// klauspost's xerial package, which sarama uses, reads ours and writes
	// what we read.
	if back, err := xerial.Decode(ours); err != nil || !bytes.Equal(back, input) {
		t.Fatalf("xerial.Decode of ours: %v", err)
	}
	if out, err := DecompressBounded(CodecSnappy, nil, xerial.Encode(nil, input), len(input)); err != nil || !bytes.Equal(out, input) {
		t.Fatalf("decoding xerial.Encode: %v", err)
	}

	headerOnly := wantHeader
	if out, err := DecompressBounded(CodecSnappy, nil, headerOnly, 0); err != nil || len(out) != 0 {
		t.Fatalf("header only: %d bytes, %v", len(out), err)
	}
	truncated := ours[:len(ours)-1]
	if _, err := DecompressBounded(CodecSnappy, nil, truncated, len(input)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated xerial: %v", err)
	}
}

// TestDecompressionBombs compresses 64 MiB of zeros, a few KiB compressed,
// and checks that every codec stops at the bound without allocating the
// whole output.
func TestDecompressionBombs(t *testing.T) {
	zeros := make([]byte, 64<<20)
	const bound = 1 << 20
	for _, c := range allCodecs[1:] {
		t.Run(c.name, func(t *testing.T) {
			bomb, err := Compress(c.codec, nil, zeros)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtimeMem
			before.read()
			_, err = DecompressBounded(c.codec, nil, bomb, bound)
			after.read()
			if !errors.Is(err, ErrDecompressLimit) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err %v, want ErrDecompressLimit", err)
			}
			if KafkaErrorCode(err) != 10 {
				t.Fatalf("KafkaErrorCode %d, want 10", KafkaErrorCode(err))
			}
			// The zstd decoder may run to its window floor before stopping.
			if grew := after.totalAlloc - before.totalAlloc; grew > 4*zstdWindowFloorBytes {
				t.Fatalf("allocated %d bytes decompressing a bomb bounded at %d", grew, bound)
			}
		})
	}
}

// runtimeMem samples the bytes the program has allocated so far.
type runtimeMem struct{ totalAlloc uint64 }

func (m *runtimeMem) read() {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	m.totalAlloc = stats.TotalAlloc
}

// TestZstdStreamBomb is a zstd bomb without a frame content size, as a
// streaming encoder such as the Java client's writes: the decoder cannot
// refuse it up front and must stop while decoding.
func TestZstdStreamBomb(t *testing.T) {
	var stream bytes.Buffer
	w, err := zstd.NewWriter(&stream, zstd.WithWindowSize(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 64 {
		w.Write(zeros)
	}
	w.Close()
	var header zstd.Header
	if err := header.Decode(stream.Bytes()); err != nil || header.HasFCS {
		t.Fatalf("want a frame without content size: has FCS %v, err %v", header.HasFCS, err)
	}
	var before, after runtimeMem
	before.read()
	_, err = DecompressBounded(CodecZstd, nil, stream.Bytes(), 1<<20)
	after.read()
	if !errors.Is(err, ErrDecompressLimit) {
		t.Fatalf("err %v, want ErrDecompressLimit", err)
	}
	// DecodeAll grows its output by append, so it allocates about five
	// times the window floor in all before it stops; a full decode would
	// allocate five times 64 MiB.
	if grew := after.totalAlloc - before.totalAlloc; grew > 8*zstdWindowFloorBytes {
		t.Fatalf("allocated %d bytes", grew)
	}
	out, err := DecompressBounded(CodecZstd, nil, stream.Bytes(), 64<<20)
	if err != nil || len(out) != 64<<20 {
		t.Fatalf("within the bound: %d bytes, %v", len(out), err)
	}
}

func TestDecompressGarbage(t *testing.T) {
	garbage := []byte("definitely not compressed data, not even a little bit")
	for _, c := range allCodecs[1:] {
		if _, err := DecompressBounded(c.codec, nil, garbage, 1<<20); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", c.name, err)
		}
	}
	if _, err := DecompressBounded(5, nil, garbage, 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Errorf("codec 5: err %v, want ErrCorrupt", err)
	}
	if _, err := Compress(7, nil, garbage); err == nil {
		t.Error("Compress with codec 7 succeeded")
	}
}

// TestLz4FrameLikeJava checks the frame descriptor we write is the one the
// Java client's KafkaLZ4BlockOutputStream writes: version 1, independent
// blocks, no checksums or content size, 64 KiB blocks.
func TestLz4FrameLikeJava(t *testing.T) {
	frame, err := Compress(CodecLz4, nil, []byte("hello hello hello hello"))
	if err != nil {
		t.Fatal(err)
	}
	if magic := binary.LittleEndian.Uint32(frame); magic != 0x184d2204 {
		t.Fatalf("magic %08x", magic)
	}
	if flg, bd := frame[4], frame[5]; flg != 0b0110_0000 || bd != 0b0100_0000 {
		t.Fatalf("FLG %08b BD %08b", flg, bd)
	}
}
