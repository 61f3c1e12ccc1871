package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// DefaultMaxDecompressedBytes bounds Decompress. Callers that know the
// topic's max.message.bytes pass their own bound to DecompressBounded.
const DefaultMaxDecompressedBytes = 64 << 20

// Codec tuning.
const (
	// xerialBlockBytes is the input per xerial block (SnappyOutputStream's default).
	xerialBlockBytes = 32 << 10
	// zstdWindowFloorBytes is the smallest window the zstd decoder accepts
	// whatever the output bound: a streaming encoder names its full window
	// (2 MiB at the Java client's default level 3, 8 MiB at level 19) even
	// for a small batch. It is also how far past a smaller bound a zstd
	// frame without a content size decodes before we stop it; the output
	// then holds up to twice that, and append growth allocates about five
	// times that in all.
	zstdWindowFloorBytes = 8 << 20
	// zstdEncoderWindowBytes keeps what readers must hold for our batches small.
	zstdEncoderWindowBytes = 1 << 20
	// zeroReadsMax stops a decoder that returns no bytes and no error.
	zeroReadsMax = 100
)

// xerialHeader is the magic, version 1 and compatible version 1 that start a
// xerial snappy stream.
var xerialHeader = [16]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

const xerialMagicBytes = 8

// Decompress returns src decoded with codec, refusing output over
// DefaultMaxDecompressedBytes.
func Decompress(codec int8, src []byte) ([]byte, error) {
	return DecompressBounded(codec, nil, src, DefaultMaxDecompressedBytes)
}

// DecompressBounded appends src decoded with codec to dst. It refuses to
// produce more than maxBytes bytes with an error wrapping ErrCorrupt and
// ErrDecompressLimit; input the codec cannot decode, or an unknown codec,
// gives an error wrapping ErrCorrupt. On error dst is returned unextended.
func DecompressBounded(codec int8, dst, src []byte, maxBytes int) ([]byte, error) {
	// No Kafka client reads records of 2 GiB or more; the clamp also keeps
	// the arithmetic on maxBytes from overflowing.
	maxBytes = min(max(maxBytes, 0), math.MaxInt32)
	start := len(dst)
	var err error
	switch codec {
	case CodecNone:
		if len(src) > maxBytes {
			return dst, limitError("none", maxBytes)
		}
		return append(dst, src...), nil
	case CodecGzip:
		dst, err = decodeGzip(dst, src, maxBytes)
	case CodecSnappy:
		if isXerial(src) {
			dst, err = decodeXerial(dst, src, maxBytes)
		} else {
			dst, err = decodeSnappyBlock(dst, src, maxBytes)
		}
	case CodecLz4:
		dst, err = decodeLz4(dst, src, maxBytes)
	case CodecZstd:
		dst, err = decodeZstd(dst, src, maxBytes)
	default:
		return dst, fmt.Errorf("%w: unknown compression codec %d", ErrCorrupt, codec)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// Compress appends src encoded with codec to dst. Snappy is written in the
// xerial framing, lz4 as an LZ4 frame of 64 KiB blocks, both as the Java
// client writes them.
func Compress(codec int8, dst, src []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		return encodeGzip(dst, src)
	case CodecSnappy:
		return appendXerial(dst, src), nil
	case CodecLz4:
		return encodeLz4(dst, src)
	case CodecZstd:
		return encodeZstd(dst, src)
	default:
		return dst, fmt.Errorf("record: unknown compression codec %d", codec)
	}
}

func limitError(codec string, maxBytes int) error {
	return fmt.Errorf("%w: %w: %s output over %d bytes", ErrCorrupt, ErrDecompressLimit, codec, maxBytes)
}

func codecError(codec string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, codec, err)
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// readBounded appends what r yields to dst until io.EOF, failing once more
// than maxBytes were appended. It never grows dst past maxBytes+1 new bytes.
func readBounded(dst []byte, r io.Reader, maxBytes int, codec string) ([]byte, error) {
	start := len(dst)
	zeroReads := 0
	for {
		if len(dst) == cap(dst) {
			room := start + maxBytes + 1 - len(dst)
			if room <= 0 {
				return dst, limitError(codec, maxBytes)
			}
			dst = slices.Grow(dst, min(max(len(dst)-start, 4<<10), room))
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > maxBytes {
			return dst, limitError(codec, maxBytes)
		}
		switch {
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, codecError(codec, err)
		case n == 0:
			if zeroReads++; zeroReads > zeroReadsMax {
				return dst, codecError(codec, io.ErrNoProgress)
			}
		default:
			zeroReads = 0
		}
	}
}

// gzip

type gzipDecoder struct {
	src bytes.Reader
	zr  gzip.Reader
}

var (
	gzipDecoders = sync.Pool{New: func() any { return new(gzipDecoder) }}
	gzipEncoders = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
		return w
	}}
)

func decodeGzip(dst, src []byte, maxBytes int) ([]byte, error) {
	d := gzipDecoders.Get().(*gzipDecoder)
	defer func() {
		d.src.Reset(nil)
		gzipDecoders.Put(d)
	}()
	d.src.Reset(src)
	if err := d.zr.Reset(&d.src); err != nil {
		return dst, codecError("gzip", err)
	}
	return readBounded(dst, &d.zr, maxBytes, "gzip")
}

func encodeGzip(dst, src []byte) ([]byte, error) {
	zw := gzipEncoders.Get().(*gzip.Writer)
	defer gzipEncoders.Put(zw)
	out := appendWriter{b: dst}
	zw.Reset(&out)
	defer zw.Reset(nil)
	if _, err := zw.Write(src); err != nil {
		return dst, fmt.Errorf("record: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return dst, fmt.Errorf("record: gzip: %w", err)
	}
	return out.b, nil
}

// snappy
//
// klauspost/compress/snappy/xerial reads and writes the framing too, but it
// decodes with s2, which also accepts S2 extensions that no Kafka client can
// read, bounds output only by a preallocated destination, and writes the
// header only into an empty one; so we frame by hand around golang/snappy's
// strict decoder and s2's snappy-compatible encoder.

func isXerial(src []byte) bool {
	return len(src) >= len(xerialHeader) && bytes.Equal(src[:xerialMagicBytes], xerialHeader[:xerialMagicBytes])
}

var errXerialFraming = errors.New("malformed xerial framing")

// decodeSnappyBlock decodes one raw snappy block. The decoded length leads
// the block, so the bound is checked before anything is allocated.
func decodeSnappyBlock(dst, src []byte, maxBytes int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, codecError("snappy", err)
	}
	if n > maxBytes {
		return dst, limitError("snappy", maxBytes)
	}
	dst = slices.Grow(dst, n)
	if _, err := snappy.Decode(dst[len(dst):len(dst)+n], src); err != nil {
		return dst, codecError("snappy", err)
	}
	return dst[:len(dst)+n], nil
}

// xerialBlocks walks the xerial blocks after the header, calling fn with each
// raw snappy block. A header met again, where two streams were concatenated,
// is skipped.
func xerialBlocks(src []byte, fn func(block []byte) error) error {
	rest := src[len(xerialHeader):]
	for len(rest) > 0 {
		if isXerial(rest) {
			rest = rest[len(xerialHeader):]
			continue
		}
		if len(rest) < 4 {
			return errXerialFraming
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return errXerialFraming
		}
		if err := fn(rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// decodeXerial sums the blocks' decoded lengths first, so the bound is
// checked and dst grown once before any block is decoded.
func decodeXerial(dst, src []byte, maxBytes int) ([]byte, error) {
	total := 0
	err := xerialBlocks(src, func(block []byte) error {
		n, err := snappy.DecodedLen(block)
		if err != nil {
			return err
		}
		if total += n; total > maxBytes {
			return ErrDecompressLimit
		}
		return nil
	})
	if errors.Is(err, ErrDecompressLimit) {
		return dst, limitError("snappy", maxBytes)
	}
	if err != nil {
		return dst, codecError("snappy", err)
	}
	dst = slices.Grow(dst, total)
	err = xerialBlocks(src, func(block []byte) error {
		n, _ := snappy.DecodedLen(block)
		if _, err := snappy.Decode(dst[len(dst):len(dst)+n], block); err != nil {
			return err
		}
		dst = dst[:len(dst)+n]
		return nil
	})
	if err != nil {
		return dst, codecError("snappy", err)
	}
	return dst, nil
}

// appendXerial appends src as a xerial stream: the header, then blocks of at
// most xerialBlockBytes input, each a big-endian length and a snappy block.
func appendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialHeader[:]...)
	for len(src) > 0 {
		n := min(len(src), xerialBlockBytes)
		dst = slices.Grow(dst, 4+s2.MaxEncodedLen(n))
		at := len(dst)
		// EncodeSnappy encodes into the spare capacity when it has room.
		block := s2.EncodeSnappy(dst[at+4:cap(dst)], src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
		dst = dst[:at+4+len(block)]
		src = src[n:]
	}
	return dst
}

// lz4

type lz4Decoder struct {
	src bytes.Reader
	zr  *lz4.Reader
}

type lz4Encoder struct {
	out appendWriter
	zw  *lz4.Writer
}

var (
	lz4Decoders = sync.Pool{New: func() any { return &lz4Decoder{zr: lz4.NewReader(nil)} }}
	lz4Encoders = sync.Pool{New: func() any {
		zw := lz4.NewWriter(nil)
		// The Java client's KafkaLZ4BlockOutputStream: 64 KiB independent
		// blocks, no block or content checksum.
		_ = zw.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false), lz4.BlockChecksumOption(false))
		return &lz4Encoder{zw: zw}
	}}
)

func decodeLz4(dst, src []byte, maxBytes int) ([]byte, error) {
	d := lz4Decoders.Get().(*lz4Decoder)
	defer func() {
		d.zr.Reset(nil)
		d.src.Reset(nil)
		lz4Decoders.Put(d)
	}()
	d.src.Reset(src)
	d.zr.Reset(&d.src)
	return readBounded(dst, d.zr, maxBytes, "lz4")
}

func encodeLz4(dst, src []byte) ([]byte, error) {
	e := lz4Encoders.Get().(*lz4Encoder)
	defer func() {
		e.out.b = nil
		e.zw.Reset(nil)
		lz4Encoders.Put(e)
	}()
	e.out.b = dst
	e.zw.Reset(&e.out)
	if _, err := e.zw.Write(src); err != nil {
		return dst, fmt.Errorf("record: lz4: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return dst, fmt.Errorf("record: lz4: %w", err)
	}
	return e.out.b, nil
}

// zstd

// zstdEncoder is shared: EncodeAll is safe for concurrent use, and the
// encoder keeps one state per GOMAXPROCS.
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithWindowSize(zstdEncoderWindowBytes),
		zstd.WithZeroFrames(true),
		zstd.WithLowerEncoderMem(true))
})

func encodeZstd(dst, src []byte) ([]byte, error) {
	enc, err := zstdEncoder()
	if err != nil {
		return dst, fmt.Errorf("record: zstd: %w", err)
	}
	return enc.EncodeAll(src, dst), nil
}

// zstdDecoder is a single-goroutine decoder and the output bound it was last
// set to; changing the bound costs an allocation, so it is kept.
type zstdDecoder struct {
	d            *zstd.Decoder
	limitedBytes uint64
}

var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(zstdWindowFloorBytes))
	if err != nil {
		return nil
	}
	return &zstdDecoder{d: d, limitedBytes: zstdWindowFloorBytes}
}}

func decodeZstd(dst, src []byte, maxBytes int) ([]byte, error) {
	d, _ := zstdDecoders.Get().(*zstdDecoder)
	if d == nil {
		return dst, fmt.Errorf("record: zstd decoder unavailable")
	}
	defer zstdDecoders.Put(d)
	// The decoder refuses windows larger than its output bound; keep the
	// bound at least zstdWindowFloorBytes and check maxBytes ourselves.
	limit := max(uint64(maxBytes), zstdWindowFloorBytes)
	if limit != d.limitedBytes {
		if err := d.d.ResetWithOptions(nil, zstd.WithDecoderMaxMemory(limit)); err != nil {
			return dst, fmt.Errorf("record: zstd: %w", err)
		}
		d.limitedBytes = limit
	}
	start := len(dst)
	out, err := d.d.DecodeAll(src, dst)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || len(out)-start > maxBytes {
		return dst, limitError("zstd", maxBytes)
	}
	if err != nil {
		return dst, codecError("zstd", err)
	}
	return out, nil
}
