package log

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// scanChunkBytes is how much of the log a header scan reads at once: enough
// for dozens of small batches' headers per read(2), little waste for big ones.
const scanChunkBytes = 4096

// headerScanner reads batch headers from a segment file without reading the
// batches' records. It does not check CRCs: bytes below a segment's committed
// size were verified when appended or recovered.
type headerScanner struct {
	file vfs.File
	// end is the committed size of the file; nothing at or past it is read.
	end int64
	// buf is chunk's bytes once the first read needs them.
	buf   []byte
	chunk *[scanChunkBytes]byte
	// bufStart is the file position of buf[0]; buf holds bufLen valid bytes.
	bufStart int64
	bufLen   int
}

func newHeaderScanner(file vfs.File, end int64) *headerScanner {
	return &headerScanner{file: file, end: end, bufStart: -1}
}

// scanBuffers recycles the scanners' chunks: every fetch scans, and a
// fresh 4 KiB per partition per fetch was the broker's largest allocation.
var scanBuffers = sync.Pool{New: func() any { return new([scanChunkBytes]byte) }}

// release hands the scanner's chunk back for reuse; the scanner must not be
// used afterwards.
func (sc *headerScanner) release() {
	if sc.chunk != nil {
		scanBuffers.Put(sc.chunk)
		sc.chunk, sc.buf = nil, nil
	}
}

// headerAt returns the header of the batch starting at pos. It returns
// io.EOF when pos is at the end, and an ErrCorrupt error when the bytes there
// are not a batch header or the batch runs past the end.
func (sc *headerScanner) headerAt(pos int64) (record.Header, error) {
	if pos >= sc.end {
		return record.Header{}, io.EOF
	}
	if pos+record.HeaderSize > sc.end {
		return record.Header{}, corruptError(fmt.Sprintf("%s: %d bytes at position %d are too few for a batch header",
			sc.file.Name(), sc.end-pos, pos), record.ErrTruncated)
	}
	if sc.bufStart < 0 || pos < sc.bufStart || pos+record.HeaderSize > sc.bufStart+int64(sc.bufLen) {
		if sc.buf == nil {
			sc.chunk = scanBuffers.Get().(*[scanChunkBytes]byte)
			sc.buf = sc.chunk[:]
		}
		want := int(min(int64(len(sc.buf)), sc.end-pos))
		n, err := sc.file.ReadAt(sc.buf[:want], pos)
		if n < record.HeaderSize {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			sc.bufStart = -1
			return record.Header{}, storageError("read batch header", err)
		}
		sc.bufStart, sc.bufLen = pos, n
	}
	off := int(pos - sc.bufStart)
	h, err := record.ParseHeader(sc.buf[off : off+record.HeaderSize])
	if err != nil {
		return h, corruptError(fmt.Sprintf("%s: position %d", sc.file.Name(), pos), err)
	}
	if pos+int64(h.Size()) > sc.end {
		return h, corruptError(fmt.Sprintf("%s: batch at position %d of %d bytes runs past %d",
			sc.file.Name(), pos, h.Size(), sc.end), record.ErrTruncated)
	}
	return h, nil
}

// batchReader reads whole batches sequentially for recovery, verifying each.
type batchReader struct {
	file vfs.File
	end  int64
	buf  []byte
	// bufStart is the file position of buf[0]; buf[:bufLen] is valid.
	bufStart int64
	bufLen   int
}

// recoveryBufferBytes is the read size during recovery.
const recoveryBufferBytes = 1 << 20

func newBatchReader(file vfs.File, end int64) *batchReader {
	return &batchReader{file: file, end: end}
}

// next returns the verified batch at pos (its bytes valid until the next
// call), io.EOF at the end, or an error wrapping ErrCorrupt for a torn or
// corrupt batch. I/O errors wrap ErrStorage.
func (br *batchReader) next(pos int64) ([]byte, record.Header, error) {
	if pos >= br.end {
		return nil, record.Header{}, io.EOF
	}
	if err := br.fill(pos, record.HeaderSize); err != nil {
		return nil, record.Header{}, err
	}
	off := int(pos - br.bufStart)
	h, err := record.ParseHeader(br.buf[off:br.bufLen])
	if err != nil {
		return nil, h, corruptError(fmt.Sprintf("%s: position %d", br.file.Name(), pos), err)
	}
	if err := br.fill(pos, h.Size()); err != nil {
		return nil, h, err
	}
	off = int(pos - br.bufStart)
	b := br.buf[off : off+h.Size()]
	if _, err := record.Verify(b); err != nil {
		return nil, h, corruptError(fmt.Sprintf("%s: position %d", br.file.Name(), pos), err)
	}
	return b, h, nil
}

// fill makes buf hold [pos, pos+n). Bytes missing because the file ends
// first are reported as a truncated (corrupt) batch.
func (br *batchReader) fill(pos int64, n int) error {
	if pos >= br.bufStart && pos+int64(n) <= br.bufStart+int64(br.bufLen) {
		return nil
	}
	if pos+int64(n) > br.end {
		return corruptError(fmt.Sprintf("%s: batch at position %d needs %d bytes, file ends at %d",
			br.file.Name(), pos, n, br.end), record.ErrTruncated)
	}
	size := max(n, int(min(recoveryBufferBytes, br.end-pos)))
	if len(br.buf) < size {
		br.buf = make([]byte, size)
	}
	want := int(min(int64(len(br.buf)), br.end-pos))
	got, err := br.file.ReadAt(br.buf[:want], pos)
	br.bufStart, br.bufLen = pos, got
	if got < n {
		if err == nil || errors.Is(err, io.EOF) {
			return corruptError(fmt.Sprintf("%s: short read at position %d", br.file.Name(), pos), record.ErrTruncated)
		}
		return storageError("read segment", err)
	}
	return nil
}
