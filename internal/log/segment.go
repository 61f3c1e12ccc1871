package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// File name suffixes, as Kafka names them.
const (
	logFileSuffix       = ".log"
	indexFileSuffix     = ".index"
	timeIndexFileSuffix = ".timeindex"
	txnIndexFileSuffix  = ".txnindex"
	deletedFileSuffix   = ".deleted"
	cleanedFileSuffix   = ".cleaned"
	swapFileSuffix      = ".swap"
)

// segmentFileName is <dir>/<20-digit base offset><suffix>.
func segmentFileName(dir string, baseOffset int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", baseOffset, suffix))
}

// parseSegmentFileName returns the base offset and suffix of a segment file
// name (for example "00000000000000000042.log" -> 42, ".log").
func parseSegmentFileName(name string) (baseOffset int64, suffix string, ok bool) {
	i := strings.IndexByte(name, '.')
	if i != 20 {
		return 0, "", false
	}
	off, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil || off < 0 {
		return 0, "", false
	}
	return off, name[i:], true
}

// timestampOffset is a max timestamp and the offset it belongs to.
type timestampOffset struct {
	timestamp, offset int64
}

// segment is one .log file with its .index and .timeindex.
//
// Only the last segment of a Log (the active one) is written. Its file and
// indexes are open from the start; a closed segment opens them on first use,
// so a broker with thousands of partitions opens at startup only what it
// appends to.
type segment struct {
	fs         vfs.FS
	dir        string
	baseOffset int64
	// maxIndexBytes is segment.index.bytes when the segment was opened.
	maxIndexBytes int32
	// indexIntervalBytes is index.interval.bytes, for rebuilding the index.
	indexIntervalBytes int32
	// rollJitterMs is subtracted from segment.ms for this segment.
	rollJitterMs int64

	// size is the committed length of the .log file.
	// Invariant: [0, size) is a sequence of whole batches. Readers never look
	// past it; the writer publishes a batch by storing size after writing it.
	size atomic.Int64

	// maxTimestamp is the largest batch max timestamp in the segment and the
	// last offset of that batch; nil until read from the time index.
	maxTimestamp atomic.Pointer[timestampOffset]

	mu struct {
		sync.Mutex
		file        vfs.File
		offsetIndex *offsetIndex
		timeIndex   *timeIndex
		// suffix is appended to every file name: "" or ".deleted".
		suffix string
		// active is true while the indexes are mapped writable.
		active bool
		closed bool
	}

	// Writer state: only touched under the Log's append lock.
	bytesSinceLastIndexEntry int64
	// rollingBasedTimestamp is the max timestamp of the first batch, used for
	// time-based rolling; hasRollingTimestamp says whether it is known.
	rollingBasedTimestamp int64
	hasRollingTimestamp   bool
	// createdMs is when the segment was created (or emptied), for rolling
	// segments whose batches carry no timestamp.
	createdMs int64
	// preallocated is true when the .log file was grown to segment.bytes.
	preallocated bool
}

// newSegment returns a closed segment over existing files of size bytes.
func newSegment(fsys vfs.FS, dir string, baseOffset, size int64, cfg Config, rollJitterMs, nowMs int64) *segment {
	s := &segment{
		fs: fsys, dir: dir, baseOffset: baseOffset,
		maxIndexBytes: cfg.SegmentIndexBytes, indexIntervalBytes: cfg.IndexIntervalBytes,
		rollJitterMs: rollJitterMs, createdMs: nowMs,
	}
	s.size.Store(size)
	return s
}

// createSegment creates the files of a new, empty, active segment.
func createSegment(fsys vfs.FS, dir string, baseOffset int64, cfg Config, rollJitterMs, nowMs int64) (*segment, error) {
	s := newSegment(fsys, dir, baseOffset, 0, cfg, rollJitterMs, nowMs)
	// Stale index files for this base offset (from a crash mid-roll) would
	// be mistaken for this segment's.
	for _, suffix := range []string{indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
		if err := fsys.Remove(s.path(suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, storageError("remove stale index", err)
		}
	}
	return createSegmentFiles(s, cfg)
}

// createSegmentFiles creates the .log file and indexes of s, in a directory
// known to hold no file of its base offset.
func createSegmentFiles(s *segment, cfg Config) (*segment, error) {
	fsys, baseOffset := s.fs, s.baseOffset
	f, err := fsys.OpenFile(s.path(logFileSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, storageError("create segment", err)
	}
	if cfg.Preallocate {
		if err := f.Allocate(0, cfg.SegmentBytes); err != nil {
			f.Close()
			fsys.Remove(s.path(logFileSuffix))
			return nil, storageError("preallocate segment", err)
		}
		s.preallocated = true
	}
	s.mu.file = f
	if err := s.openIndexesLocked(true); err != nil {
		f.Close()
		fsys.Remove(s.path(logFileSuffix))
		return nil, err
	}
	s.maxTimestamp.Store(&timestampOffset{noTimestamp, baseOffset})
	return s, nil
}

// path is the segment's file with the given suffix (plus .deleted if deleted).
func (s *segment) path(suffix string) string {
	return segmentFileName(s.dir, s.baseOffset, suffix+s.mu.suffix)
}

// file returns the open .log file, opening it on first use.
func (s *segment) file() (vfs.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fileLocked()
}

func (s *segment) fileLocked() (vfs.File, error) {
	if s.mu.closed {
		return nil, ErrClosed
	}
	if s.mu.file == nil {
		f, err := s.fs.OpenFile(s.path(logFileSuffix), os.O_RDWR, 0)
		if err != nil {
			return nil, storageError("open segment", err)
		}
		s.mu.file = f
	}
	return s.mu.file, nil
}

// indexes returns the offset and time indexes, opening them on first use. A
// missing or corrupt index of a closed segment is rebuilt from the log.
func (s *segment) indexes() (*offsetIndex, *timeIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, nil, ErrClosed
	}
	if s.mu.offsetIndex == nil {
		err := s.openIndexesLocked(false)
		if err == nil {
			err = s.sanityCheckLocked()
		}
		if errors.Is(err, ErrCorrupt) || errors.Is(err, errMissingIndex) {
			err = s.rebuildIndexesLocked()
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return s.mu.offsetIndex, s.mu.timeIndex, nil
}

var errMissingIndex = errors.New("log: index file missing")

// openIndexesLocked opens both index files; writable maps them for appends
// at segment.index.bytes.
func (s *segment) openIndexesLocked(writable bool) error {
	if !writable {
		// A closed segment must have its index; an absent one is rebuilt
		// rather than created empty.
		if _, err := s.fs.Stat(s.path(indexFileSuffix)); errors.Is(err, fs.ErrNotExist) {
			return errMissingIndex
		}
		if _, err := s.fs.Stat(s.path(timeIndexFileSuffix)); errors.Is(err, fs.ErrNotExist) {
			return errMissingIndex
		}
	}
	oi, err := openOffsetIndex(s.fs, s.path(indexFileSuffix), s.baseOffset, s.maxIndexBytes, writable)
	if err != nil {
		return err
	}
	ti, err := openTimeIndex(s.fs, s.path(timeIndexFileSuffix), s.baseOffset, s.maxIndexBytes, writable)
	if err != nil {
		oi.close()
		return err
	}
	s.mu.offsetIndex, s.mu.timeIndex, s.mu.active = oi, ti, writable
	return nil
}

func (s *segment) sanityCheckLocked() error {
	if err := s.mu.offsetIndex.sanityCheck(s.size.Load()); err != nil {
		return err
	}
	return s.mu.timeIndex.sanityCheck()
}

// closeIndexesLocked closes the index files if open.
func (s *segment) closeIndexesLocked() error {
	var err error
	if s.mu.offsetIndex != nil {
		err = s.mu.offsetIndex.close()
	}
	if s.mu.timeIndex != nil {
		if e := s.mu.timeIndex.close(); err == nil {
			err = e
		}
	}
	s.mu.offsetIndex, s.mu.timeIndex = nil, nil
	return err
}

// rebuildIndexesLocked recreates both indexes of a closed segment by reading
// its batch headers (the data is below the recovery point, so it is trusted).
func (s *segment) rebuildIndexesLocked() error {
	s.closeIndexesLocked()
	for _, suffix := range []string{indexFileSuffix, timeIndexFileSuffix} {
		if err := s.fs.Remove(s.path(suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storageError("remove corrupt index", err)
		}
	}
	if err := s.openIndexesLocked(true); err != nil {
		return err
	}
	file, err := s.fileLocked()
	if err != nil {
		return err
	}
	sc := newHeaderScanner(file, s.size.Load())
	var pos, lastIndexed int64
	max := timestampOffset{noTimestamp, s.baseOffset}
	interval := int64(s.indexIntervalBytes)
	for {
		h, err := sc.headerAt(pos)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.MaxTimestamp > max.timestamp {
			max = timestampOffset{h.MaxTimestamp, h.LastOffset()}
		}
		if pos-lastIndexed > interval {
			if err := s.appendIndexEntriesLocked(h.LastOffset(), pos, max); err != nil {
				return err
			}
			lastIndexed = pos
		}
		pos += int64(h.Size())
	}
	s.maxTimestamp.Store(&max)
	return s.deactivateLocked()
}

// appendIndexEntriesLocked adds an offset index entry and a time index entry,
// growing the indexes if a smaller segment.index.bytes than the one the
// segment was written with leaves them short.
func (s *segment) appendIndexEntriesLocked(lastOffset, position int64, max timestampOffset) error {
	oi, ti := s.mu.offsetIndex, s.mu.timeIndex
	if oi.isFull() || ti.isFull() {
		grow := int64(s.maxIndexBytes) * 2
		if grow > math.MaxInt32 {
			return nil // A sparser index is still correct.
		}
		s.maxIndexBytes = int32(grow)
		if err := oi.resize(grow, true); err != nil {
			return err
		}
		if err := ti.resize(grow, true); err != nil {
			return err
		}
	}
	if err := oi.append(lastOffset, position); err != nil {
		return err
	}
	return ti.maybeAppend(max.timestamp, max.offset, false)
}

// deactivateLocked appends the closing time index entry and trims both
// indexes (and a preallocated log file) to their contents.
func (s *segment) deactivateLocked() error {
	oi, ti := s.mu.offsetIndex, s.mu.timeIndex
	if oi == nil {
		return nil
	}
	if max := s.maxTimestamp.Load(); max != nil {
		// Ignore ordering errors: the entry is an optimisation for retention.
		_ = ti.maybeAppend(max.timestamp, max.offset, true)
	}
	if err := oi.trimToValidSize(); err != nil {
		return err
	}
	if err := ti.trimToValidSize(); err != nil {
		return err
	}
	if s.preallocated && s.mu.file != nil {
		if err := s.mu.file.Truncate(s.size.Load()); err != nil {
			return storageError("trim segment", err)
		}
		s.preallocated = false
	}
	s.mu.active = false
	return nil
}

// onBecomeInactive is called when the log rolls past this segment.
func (s *segment) onBecomeInactive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deactivateLocked()
}

// activate reopens the indexes for appends after truncation made this the
// last segment again.
func (s *segment) activate() error {
	oi, ti, err := s.indexes()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := oi.resize(int64(s.maxIndexBytes), true); err != nil {
		return err
	}
	if err := ti.resize(int64(s.maxIndexBytes), true); err != nil {
		return err
	}
	s.mu.active = true
	return nil
}

// maxTimestampSoFar returns the largest timestamp in the segment and its
// offset, reading the time index the first time.
func (s *segment) maxTimestampSoFar() (timestampOffset, error) {
	if m := s.maxTimestamp.Load(); m != nil {
		return *m, nil
	}
	_, ti, err := s.indexes()
	if err != nil {
		return timestampOffset{noTimestamp, s.baseOffset}, err
	}
	ts, off := ti.lastEntry()
	m := &timestampOffset{ts, off}
	s.maxTimestamp.CompareAndSwap(nil, m)
	return *s.maxTimestamp.Load(), nil
}

// appendBatches writes whole batches at the end of the active segment and
// indexes them. lastOffset is the last offset in data; maxTs and
// offsetOfMaxTs describe the batch with the largest timestamp. Called under
// the Log's append lock.
func (s *segment) appendBatches(data []byte, lastOffset, maxTs, offsetOfMaxTs int64, indexIntervalBytes int32) error {
	file, err := s.file()
	if err != nil {
		return err
	}
	pos := s.size.Load()
	if pos == 0 {
		s.rollingBasedTimestamp, s.hasRollingTimestamp = maxTs, true
	}
	if _, err := file.WriteAt(data, pos); err != nil {
		// Drop whatever part of the batch reached the file; readers never
		// saw it, and recovery would cut it anyway.
		_ = file.Truncate(pos)
		return storageError("append to segment", err)
	}
	cur, _ := s.maxTimestampSoFar()
	if maxTs > cur.timestamp {
		cur = timestampOffset{maxTs, offsetOfMaxTs}
		s.maxTimestamp.Store(&cur)
	}
	if s.bytesSinceLastIndexEntry > int64(indexIntervalBytes) {
		oi, ti, err := s.indexes()
		if err == nil {
			// The index is sparse: a missing entry only lengthens a scan.
			if oi.append(lastOffset, pos) == nil {
				_ = ti.maybeAppend(cur.timestamp, cur.offset, false)
			}
		}
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += int64(len(data))
	s.size.Store(pos + int64(len(data)))
	return nil
}

// timeWaitedForRollMs is how long the segment has waited to be rolled, by
// the timestamp of its first batch if it has one, else by the wall clock.
func (s *segment) timeWaitedForRollMs(nowMs, messageTimestamp int64) int64 {
	if !s.hasRollingTimestamp && s.size.Load() > 0 {
		if file, err := s.file(); err == nil {
			if h, err := newHeaderScanner(file, s.size.Load()).headerAt(0); err == nil {
				s.rollingBasedTimestamp, s.hasRollingTimestamp = h.MaxTimestamp, true
			}
		}
	}
	if s.hasRollingTimestamp && s.rollingBasedTimestamp >= 0 {
		return messageTimestamp - s.rollingBasedTimestamp
	}
	return nowMs - s.createdMs
}

// findBatch returns the position and header of the first batch whose last
// offset is >= target, scanning from the index entry below target. found is
// false when no batch below end qualifies.
func (s *segment) findBatch(sc *headerScanner, oi *offsetIndex, target int64) (pos int64, h record.Header, found bool, err error) {
	_, pos = oi.lookup(target)
	for {
		h, err = sc.headerAt(pos)
		if err == io.EOF {
			return pos, h, false, nil
		}
		if err != nil {
			return pos, h, false, err
		}
		if h.LastOffset() >= target {
			return pos, h, true, nil
		}
		pos += int64(h.Size())
	}
}

// readNextOffset returns the offset after the last batch: a scan from the
// last index entry to the end.
func (s *segment) readNextOffset() (int64, error) {
	size := s.size.Load()
	if size == 0 {
		return s.baseOffset, nil
	}
	oi, _, err := s.indexes()
	if err != nil {
		return 0, err
	}
	file, err := s.file()
	if err != nil {
		return 0, err
	}
	_, pos := oi.lastEntry()
	sc := newHeaderScanner(file, size)
	next := s.baseOffset
	for {
		h, err := sc.headerAt(pos)
		if err == io.EOF {
			return next, nil
		}
		if err != nil {
			return 0, err
		}
		next = h.LastOffset() + 1
		pos += int64(h.Size())
	}
}

// flush makes the segment's bytes and indexes durable.
func (s *segment) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil
	}
	if s.mu.file != nil {
		if err := s.mu.file.Sync(); err != nil {
			return storageError("sync segment", err)
		}
	}
	if s.mu.offsetIndex != nil {
		if err := s.mu.offsetIndex.flush(); err != nil {
			return err
		}
		if err := s.mu.timeIndex.flush(); err != nil {
			return err
		}
	}
	return nil
}

// close trims an active segment's indexes and closes every file.
func (s *segment) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil
	}
	var err error
	if s.mu.active {
		err = s.deactivateLocked()
	}
	if e := s.closeIndexesLocked(); err == nil {
		err = e
	}
	if s.mu.file != nil {
		if e := s.mu.file.Close(); err == nil {
			err = storageError("close segment", e)
		}
		s.mu.file = nil
	}
	s.mu.closed = true
	return err
}

// markDeleted renames every file of the segment to *.deleted. Open files
// stay open, so reads in flight continue.
func (s *segment) markDeleted() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.suffix == deletedFileSuffix {
		return nil
	}
	var firstErr error
	for _, suffix := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
		from := segmentFileName(s.dir, s.baseOffset, suffix)
		to := from + deletedFileSuffix
		if err := s.fs.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
			firstErr = storageError("rename deleted segment", err)
		}
	}
	s.mu.suffix = deletedFileSuffix
	if s.mu.offsetIndex != nil {
		s.mu.offsetIndex.mu.Lock()
		s.mu.offsetIndex.mu.path = s.path(indexFileSuffix)
		s.mu.offsetIndex.mu.Unlock()
		s.mu.timeIndex.mu.Lock()
		s.mu.timeIndex.mu.path = s.path(timeIndexFileSuffix)
		s.mu.timeIndex.mu.Unlock()
	}
	return firstErr
}

// deleteFiles closes the segment and removes its files.
func (s *segment) deleteFiles() error {
	err := s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, suffix := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
		if e := s.fs.Remove(s.path(suffix)); e != nil && !errors.Is(e, fs.ErrNotExist) && err == nil {
			err = storageError("remove segment", e)
		}
	}
	return err
}
