package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

const (
	// indexEntrySize is one .index entry: 4-byte relative offset, 4-byte position.
	indexEntrySize = 8
	// timeIndexEntrySize is one .timeindex entry: 8-byte timestamp, 4-byte relative offset.
	timeIndexEntrySize = 12
	// minIndexBytes keeps room for a few entries of either index.
	minIndexBytes = 4 * timeIndexEntrySize
	// noTimestamp is Kafka's RecordBatch.NO_TIMESTAMP.
	noTimestamp = -1
)

// errIndexFull is returned by appends to a full index; the log rolls before
// it can happen.
var errIndexFull = errors.New("log: index full")

// indexFile is a file of fixed-size entries, memory-mapped, preallocated while
// its segment is active and trimmed to its entries when the segment closes.
// The offset and time indexes embed it.
//
// Concurrency: appends and every change of size happen under the owning Log's
// append lock. Lookups may run at any time: they hold mu for reading, and
// remapping (resize, close) holds it for writing, so a lookup never touches
// unmapped memory. A lookup reads entries [0, entries) only; an append writes
// entry n before publishing entries = n+1.
type indexFile struct {
	baseOffset int64
	entrySize  int

	// entries is the number of valid entries.
	// Invariant: entries*entrySize <= len(mu.data).
	entries atomic.Int32

	mu struct {
		sync.RWMutex
		fs      vfs.FS
		path    string
		file    vfs.File
		mapping vfs.Mapping
		// data is mapping.Bytes(): the whole mapped file.
		data     []byte
		writable bool
		closed   bool
	}
}

// roundDown rounds n down to a multiple of entrySize.
func roundDown(n int64, entrySize int) int64 { return n - n%int64(entrySize) }

// open opens or creates an index file. Existing entries are the
// file's length over the entry size. When writable, the file is grown to
// maxBytes (rounded down to whole entries) and mapped for writing.
func (idx *indexFile) open(fsys vfs.FS, path string, baseOffset int64, entrySize int, maxBytes int32, writable bool) error {
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return storageError("open index", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return storageError("stat index", err)
	}
	size := st.Size()
	if size%int64(entrySize) != 0 || size > math.MaxInt32 {
		f.Close()
		return corruptError(fmt.Sprintf("index %s has %d bytes, not a multiple of %d", path, size, entrySize), nil)
	}
	idx.baseOffset, idx.entrySize = baseOffset, entrySize
	idx.mu.fs = fsys
	idx.mu.path = path
	idx.mu.file = f
	idx.entries.Store(int32(size / int64(entrySize)))
	mapBytes := size
	if writable {
		mapBytes = max(size, roundDown(int64(maxBytes), entrySize))
		if mapBytes > size {
			if err := f.Allocate(size, mapBytes-size); err != nil {
				f.Close()
				return storageError("preallocate index", err)
			}
		}
	}
	if err := idx.mapLocked(mapBytes, writable); err != nil {
		f.Close()
		return err
	}
	return nil
}

// mapLocked maps the first n bytes of the file. Called with mu held for
// writing (or before the index is shared).
func (x *indexFile) mapLocked(n int64, writable bool) error {
	m, err := vfs.Map(x.mu.file, int(n), writable)
	if err != nil {
		return storageError("map index", err)
	}
	x.mu.mapping = m
	x.mu.data = m.Bytes()
	x.mu.writable = writable
	return nil
}

// resize changes the file to n bytes (rounded down to whole entries, never
// below the valid entries) and remaps it.
func (x *indexFile) resize(n int64, writable bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed {
		return ErrClosed
	}
	n = max(roundDown(n, x.entrySize), int64(x.entries.Load())*int64(x.entrySize))
	if int64(len(x.mu.data)) == n && x.mu.writable == writable {
		return nil
	}
	if x.mu.mapping != nil { // nil after a resize that failed to remap
		if err := x.mu.mapping.Close(); err != nil {
			return storageError("unmap index", err)
		}
	}
	x.mu.mapping, x.mu.data = nil, nil
	st, err := x.mu.file.Stat()
	if err != nil {
		return storageError("stat index", err)
	}
	if cur := st.Size(); n > cur {
		err = x.mu.file.Allocate(cur, n-cur)
	} else if n < cur {
		err = x.mu.file.Truncate(n)
	}
	if err != nil {
		// Map what is there so lookups keep working.
		if mapErr := x.mapLocked(min(st.Size(), roundDown(st.Size(), x.entrySize)), writable); mapErr != nil {
			return mapErr
		}
		return storageError("resize index", err)
	}
	return x.mapLocked(n, writable)
}

// trimToValidSize shrinks the file to its valid entries.
func (x *indexFile) trimToValidSize() error {
	return x.resize(int64(x.entries.Load())*int64(x.entrySize), false)
}

// maxEntries is how many entries the mapping holds.
func (x *indexFile) maxEntries() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.mu.data) / x.entrySize
}

// flush makes the entries durable.
func (x *indexFile) flush() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.mu.closed {
		return nil
	}
	if err := x.mu.mapping.Flush(); err != nil {
		return storageError("flush index", err)
	}
	return storageError("sync index", x.mu.file.Sync())
}

// close unmaps and closes the file. Lookups after close find nothing.
func (x *indexFile) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed {
		return nil
	}
	x.mu.closed = true
	var err error
	if x.mu.mapping != nil { // nil after a resize that failed to remap
		err = x.mu.mapping.Close()
	}
	x.mu.mapping, x.mu.data = nil, nil
	if closeErr := x.mu.file.Close(); err == nil {
		err = closeErr
	}
	return storageError("close index", err)
}

// rename moves the file; the mapping stays valid.
func (x *indexFile) rename(newPath string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.mu.fs.Rename(x.mu.path, newPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storageError("rename index", err)
	}
	x.mu.path = newPath
	return nil
}

// relativeOffset converts offset to the 4-byte form stored in both indexes.
func relativeOffset(baseOffset, offset int64) (uint32, bool) {
	rel := offset - baseOffset
	if rel < 0 || rel > math.MaxInt32 {
		return 0, false
	}
	return uint32(rel), true
}

// offsetIndex maps offsets to positions in the segment's .log file. Entry
// (o, p) means the batch (or set of batches appended together) starting at
// byte p ends with offset o: every offset above o is at a position >= p.
type offsetIndex struct {
	indexFile
}

func openOffsetIndex(fsys vfs.FS, path string, baseOffset int64, maxBytes int32, writable bool) (*offsetIndex, error) {
	x := &offsetIndex{}
	if err := x.open(fsys, path, baseOffset, indexEntrySize, maxBytes, writable); err != nil {
		return nil, err
	}
	return x, nil
}

func offsetEntry(data []byte, baseOffset int64, i int) (offset, position int64) {
	e := data[i*indexEntrySize:]
	return baseOffset + int64(int32(binary.BigEndian.Uint32(e))), int64(int32(binary.BigEndian.Uint32(e[4:])))
}

// isFull reports whether the next append would not fit.
func (x *offsetIndex) isFull() bool { return int(x.entries.Load()) >= x.maxEntries() }

// canAppendOffset reports whether offset fits the 4-byte relative form.
func (x *offsetIndex) canAppendOffset(offset int64) bool {
	_, ok := relativeOffset(x.baseOffset, offset)
	return ok
}

// lastEntry returns the last entry, or (baseOffset, 0) when empty.
func (x *offsetIndex) lastEntry() (offset, position int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int(x.entries.Load())
	if n == 0 || x.mu.data == nil {
		return x.baseOffset, 0
	}
	return offsetEntry(x.mu.data, x.baseOffset, n-1)
}

// append adds (offset, position). Offsets must increase.
func (x *offsetIndex) append(offset, position int64) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int(x.entries.Load())
	if (n+1)*indexEntrySize > len(x.mu.data) {
		return errIndexFull
	}
	if n > 0 {
		if last, _ := offsetEntry(x.mu.data, x.baseOffset, n-1); offset <= last {
			return fmt.Errorf("log: index append of offset %d not above last offset %d", offset, last)
		}
	}
	rel, ok := relativeOffset(x.baseOffset, offset)
	if !ok || position < 0 || position > math.MaxInt32 {
		return fmt.Errorf("log: index entry (%d, %d) out of range for base %d", offset, position, x.baseOffset)
	}
	e := x.mu.data[n*indexEntrySize:]
	binary.BigEndian.PutUint32(e, rel)
	binary.BigEndian.PutUint32(e[4:], uint32(position))
	x.entries.Store(int32(n + 1))
	return nil
}

// lookup returns the last entry whose offset is <= target, or
// (baseOffset, 0) when there is none: the place to start scanning the log
// for target.
func (x *offsetIndex) lookup(target int64) (offset, position int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot := x.slotForOffsetLocked(target)
	if slot < 0 {
		return x.baseOffset, 0
	}
	return offsetEntry(x.mu.data, x.baseOffset, slot)
}

// slotForOffsetLocked is the largest slot whose offset is <= target, or -1.
func (x *offsetIndex) slotForOffsetLocked(target int64) int {
	data := x.mu.data
	n := int(x.entries.Load())
	if data == nil || n == 0 {
		return -1
	}
	rel := target - x.baseOffset
	if rel < 0 {
		return -1
	}
	// Binary search for the first slot whose relative offset is > rel.
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int64(int32(binary.BigEndian.Uint32(data[mid*indexEntrySize:]))) <= rel {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// scanHint returns a batch boundary from which to scan for the end of a read
// bounded by maxPosition (bytes) and upperBound (offsets): every batch before
// the returned position ends at or before maxPosition and holds only offsets
// below upperBound. It returns 0 when the index knows no such boundary.
func (x *offsetIndex) scanHint(maxPosition, upperBound int64) int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	data := x.mu.data
	n := int(x.entries.Load())
	if data == nil || n == 0 {
		return 0
	}
	// Largest slot with offset < upperBound.
	bySlot := x.slotForOffsetLocked(upperBound - 1)
	// Largest slot with position <= maxPosition.
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int64(int32(binary.BigEndian.Uint32(data[mid*indexEntrySize+4:]))) <= maxPosition {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	slot := min(bySlot, lo-1)
	if slot < 0 {
		return 0
	}
	_, position := offsetEntry(data, x.baseOffset, slot)
	return position
}

// truncateTo removes every entry whose offset is >= offset.
func (x *offsetIndex) truncateTo(offset int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot := x.slotForOffsetLocked(offset)
	keep := slot + 1
	if slot >= 0 {
		if o, _ := offsetEntry(x.mu.data, x.baseOffset, slot); o == offset {
			keep = slot
		}
	}
	x.entries.Store(int32(keep))
}

// reset removes every entry.
func (x *offsetIndex) reset() { x.entries.Store(0) }

// sanityCheck rejects an index that cannot belong to a log of logSize bytes.
// It looks at the last two entries only, so it is cheap.
func (x *offsetIndex) sanityCheck(logSize int64) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int(x.entries.Load())
	if n == 0 {
		return nil
	}
	lastOffset, lastPos := offsetEntry(x.mu.data, x.baseOffset, n-1)
	if lastOffset < x.baseOffset || lastPos < 0 || lastPos > logSize {
		return corruptError(fmt.Sprintf("offset index %s: last entry (%d, %d) outside base %d and log size %d",
			x.mu.path, lastOffset, lastPos, x.baseOffset, logSize), nil)
	}
	if n >= 2 {
		prevOffset, prevPos := offsetEntry(x.mu.data, x.baseOffset, n-2)
		if prevOffset >= lastOffset || prevPos >= lastPos {
			return corruptError(fmt.Sprintf("offset index %s: entries not increasing at slot %d", x.mu.path, n-1), nil)
		}
	}
	return nil
}
