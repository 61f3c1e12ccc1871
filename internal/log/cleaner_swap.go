package log

// # Replacing segments with a cleaned one
//
// The cleaner writes the segment that replaces a group of closed segments
// under temporary names and swaps it in with Kafka's suffix protocol, so a
// crash at any step leaves a log the next Open makes whole:
//
//  1. write <base>.log.cleaned, .index.cleaned, .timeindex.cleaned and
//     .txnindex.cleaned (base = the first old segment's base offset); fsync.
//  2. rename each to .swap (.log first), fsync the directory.
//  3. rename every file of the old segments to .deleted, fsync the directory.
//  4. rename each .swap file to its final name (.log first), fsync the
//     directory; publish the new segment list and delete the old files after
//     file.delete.delay.ms.
//
// At Open (recoverInterruptedSwaps, before the segments are listed):
//
//   - .cleaned files are removed, and with them every .swap file whose base
//     offset is at or above the smallest .cleaned one: a crash in step 1 or
//     2 rolls back, the old segments being untouched.
//   - for each remaining <base>.log.swap, every segment file (not .swap)
//     whose base offset lies in [base, next offset of the .swap log) is
//     removed: those are old segments step 3 had not renamed yet. The cleaner
//     always keeps the last batch of the segments it replaces (as an empty
//     batch if need be), so that range covers all of them.
//   - every remaining .swap file is renamed to its final name (completing
//     steps 3 and 4), unless that name is taken (an index .swap whose .log
//     was rolled back), in which case it is removed.

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// errCleaningAborted: the log changed under the cleaner (retention,
// truncation, deletion, shutdown) and the pass was dropped.
var errCleaningAborted = errors.New("log: cleaning aborted")

// segmentSuffixes are the files of a segment, in the order renames take them.
var segmentSuffixes = []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix}

// createCleanedSegment creates the empty, writable <base>.*.cleaned files of
// a segment the cleaner fills.
func createCleanedSegment(fsys vfs.FS, dir string, baseOffset int64, cfg Config, nowMs int64) (*segment, error) {
	s := newSegment(fsys, dir, baseOffset, 0, cfg, 0, nowMs)
	s.mu.suffix = cleanedFileSuffix
	for _, suffix := range segmentSuffixes {
		if err := fsys.Remove(s.path(suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, storageError("remove stale cleaned file", err)
		}
	}
	f, err := fsys.OpenFile(s.path(logFileSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, storageError("create cleaned segment", err)
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

// cleanedBatch locates one batch of a chunk appendCleaned writes.
type cleanedBatch struct {
	position     int
	size         int
	lastOffset   int64
	maxTimestamp int64
}

// appendCleaned writes a chunk of whole batches at the end of a segment
// being built by the cleaner and indexes them batch by batch, an entry
// whenever index.interval.bytes have passed (as Kafka's LogSegment.append).
func (s *segment) appendCleaned(data []byte, batches []cleanedBatch, indexIntervalBytes int32) error {
	file, err := s.file()
	if err != nil {
		return err
	}
	start := s.size.Load()
	if _, err := file.WriteAt(data, start); err != nil {
		return storageError("write cleaned segment", err)
	}
	oi, ti, err := s.indexes()
	if err != nil {
		return err
	}
	cur, _ := s.maxTimestampSoFar()
	for _, b := range batches {
		if b.maxTimestamp > cur.timestamp {
			cur = timestampOffset{b.maxTimestamp, b.lastOffset}
		}
		if s.bytesSinceLastIndexEntry > int64(indexIntervalBytes) {
			// The index is sparse: a full one only lengthens scans.
			if oi.append(b.lastOffset, start+int64(b.position)) == nil {
				_ = ti.maybeAppend(cur.timestamp, cur.offset, false)
			}
			s.bytesSinceLastIndexEntry = 0
		}
		s.bytesSinceLastIndexEntry += int64(b.size)
	}
	s.maxTimestamp.Store(&cur)
	s.size.Store(start + int64(len(data)))
	return nil
}

// finishCleaned closes the cleaned segment for appends, writes its
// .txnindex and makes every file durable.
func (s *segment) finishCleaned(aborted []AbortedTxn) error {
	if err := s.onBecomeInactive(); err != nil {
		return err
	}
	if len(aborted) > 0 {
		var data []byte
		for _, e := range aborted {
			data = AppendAbortedTxnEntry(data, e)
		}
		f, err := s.fs.OpenFile(s.txnIndexPath(), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return storageError("create cleaned transaction index", err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return storageError("write cleaned transaction index", err)
		}
	}
	return s.flush()
}

// renameSuffix renames every file of the segment from its current suffix to
// suffix, in segmentSuffixes order. A missing .txnindex is no error.
func (s *segment) renameSuffix(suffix string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, kind := range segmentSuffixes {
		from, to := s.path(kind), segmentFileName(s.dir, s.baseOffset, kind+suffix)
		var err error
		switch {
		case kind == indexFileSuffix && s.mu.offsetIndex != nil:
			err = s.mu.offsetIndex.rename(to)
		case kind == timeIndexFileSuffix && s.mu.timeIndex != nil:
			err = s.mu.timeIndex.rename(to)
		default:
			err = s.fs.Rename(from, to)
			if errors.Is(err, fs.ErrNotExist) && kind == txnIndexFileSuffix {
				err = nil
			}
		}
		if err != nil {
			return storageError("rename "+from, err)
		}
	}
	s.mu.suffix = suffix
	return nil
}

// replaceSegments swaps cleaned in for old, the contiguous closed segments it
// was built from, followed in the log by next (steps 2 to 4 above). It
// returns errCleaningAborted, leaving the log as it was, when the log no
// longer holds old followed by next. A failure before the old segments are
// touched also leaves the log as it was; a later one takes the log offline
// (recovery completes the swap at the next Open).
func (l *Log) replaceSegments(cleaned *segment, old []*segment, next *segment, isCurrent func() bool) error {
	// Asked before the append lock: isCurrent takes the Manager's lock,
	// which is held around Log calls elsewhere.
	if !isCurrent() {
		return errCleaningAborted
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return errors.Join(errCleaningAborted, err)
	}
	segs := l.segmentsSnapshot()
	first := -1
	for i, s := range segs {
		if s == old[0] {
			first = i
			break
		}
	}
	end := first + len(old)
	if first < 0 || end >= len(segs) || segs[end] != next {
		return errCleaningAborted
	}
	for i, s := range old {
		if segs[first+i] != s {
			return errCleaningAborted
		}
	}
	if err := cleaned.renameSuffix(swapFileSuffix); err != nil {
		return err
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return storageError("sync dir", err)
	}
	// From here the swap only goes forward.
	for _, s := range old {
		if err := s.markDeleted(); err != nil {
			return l.fail(err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail(storageError("sync dir", err))
	}
	if err := cleaned.renameSuffix(""); err != nil {
		return l.fail(err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail(storageError("sync dir", err))
	}
	replaced := make([]*segment, 0, len(segs)-len(old)+1)
	replaced = append(append(append(replaced, segs[:first]...), cleaned), segs[end:]...)
	l.mu.Lock()
	l.mu.segments = replaced
	l.mu.Unlock()
	l.ext.mu.Lock()
	l.pruneTxnCacheLocked(replaced)
	l.ext.mu.Unlock()
	nowMs := l.nowMs()
	delayMs := l.Config().FileDeleteDelayMs
	l.mu.Lock()
	for _, s := range old {
		l.mu.pendingDeletes = append(l.mu.pendingDeletes, pendingDelete{segment: s, dueMs: nowMs + delayMs})
	}
	l.mu.Unlock()
	l.checkInvariantsLocked()
	return l.fail(l.removeDeletedLocked(nowMs, false))
}

// discardCleaned removes the files of a cleaned segment that was not
// swapped in, under either temporary suffix (a failed rename may have left
// some of each), index files first so a crash midway leaves no index .swap
// without its .log.swap.
func discardCleaned(s *segment) error {
	// Closed without trimming its indexes: the files are going.
	s.mu.Lock()
	err := s.closeIndexesLocked()
	if s.mu.file != nil {
		if e := s.mu.file.Close(); err == nil {
			err = storageError("close cleaned segment", e)
		}
		s.mu.file = nil
	}
	s.mu.closed = true
	s.mu.Unlock()
	for _, kind := range []string{txnIndexFileSuffix, timeIndexFileSuffix, indexFileSuffix, logFileSuffix} {
		for _, suffix := range []string{cleanedFileSuffix, swapFileSuffix} {
			path := segmentFileName(s.dir, s.baseOffset, kind+suffix)
			if e := s.fs.Remove(path); e != nil && !errors.Is(e, fs.ErrNotExist) && err == nil {
				err = storageError("remove cleaned segment", e)
			}
		}
	}
	return err
}

// recoverInterruptedSwaps completes or rolls back a segment replacement a
// crash interrupted (see the protocol above). Called by Open before the
// segment files are listed.
func (l *Log) recoverInterruptedSwaps() error {
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return storageError("list log dir", err)
	}
	minCleaned := int64(math.MaxInt64)
	var swaps []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		base, suffix, ok := parseSegmentFileName(name)
		switch {
		case !ok:
		case strings.HasSuffix(suffix, cleanedFileSuffix):
			minCleaned = min(minCleaned, base)
			if err := l.removeLeftover(name); err != nil {
				return err
			}
		case strings.HasSuffix(suffix, swapFileSuffix):
			swaps = append(swaps, name)
		}
	}
	if len(swaps) == 0 {
		return nil
	}
	// Pass 1: roll back swaps that had not finished renaming from .cleaned,
	// and find the offsets the rest replace.
	type swapRange struct{ from, to int64 }
	var ranges []swapRange
	kept := swaps[:0]
	for _, name := range swaps {
		base, suffix, _ := parseSegmentFileName(name)
		if base >= minCleaned {
			l.logger.Info("removing swap file of an unfinished cleaning", "file", name)
			if err := l.removeLeftover(name); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, name)
		if suffix == logFileSuffix+swapFileSuffix {
			next, err := l.nextOffsetOfFile(name, base)
			if err != nil {
				return err
			}
			ranges = append(ranges, swapRange{base, next})
		}
	}
	// Pass 2: remove the old segments the swap was replacing.
	entries, err = l.fs.ReadDir(l.dir)
	if err != nil {
		return storageError("list log dir", err)
	}
	for _, e := range entries {
		base, suffix, ok := parseSegmentFileName(e.Name())
		if !ok || e.IsDir() || strings.HasSuffix(suffix, swapFileSuffix) || !isSegmentFileSuffix(suffix) {
			continue
		}
		for _, r := range ranges {
			if base >= r.from && base < r.to {
				l.logger.Info("removing segment file replaced by an interrupted cleaning", "file", e.Name())
				if err := l.removeLeftover(e.Name()); err != nil {
					return err
				}
				break
			}
		}
	}
	// Pass 3: give the swap files their final names.
	for _, name := range kept {
		from := filepath.Join(l.dir, name)
		to := strings.TrimSuffix(from, swapFileSuffix)
		if _, err := l.fs.Stat(to); err == nil {
			l.logger.Warn("removing swap file whose final name is taken", "file", name)
			if err := l.removeLeftover(name); err != nil {
				return err
			}
			continue
		}
		l.logger.Info("completing interrupted cleaning", "file", name)
		if err := l.fs.Rename(from, to); err != nil {
			return storageError("rename swap file", err)
		}
	}
	return storageError("sync dir", l.fs.SyncDir(l.dir))
}

func isSegmentFileSuffix(suffix string) bool {
	switch strings.TrimSuffix(suffix, deletedFileSuffix) {
	case logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix:
		return true
	}
	return false
}

func (l *Log) removeLeftover(name string) error {
	if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storageError("remove leftover file", err)
	}
	return nil
}

// nextOffsetOfFile reads the batch headers of a segment file and returns
// the offset after its last whole batch (base when it has none).
func (l *Log) nextOffsetOfFile(name string, base int64) (int64, error) {
	f, err := l.fs.Open(filepath.Join(l.dir, name))
	if err != nil {
		return 0, storageError("open swap file", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, storageError("stat swap file", err)
	}
	sc := newHeaderScanner(f, st.Size())
	next := base
	for pos := int64(0); ; {
		h, err := sc.headerAt(pos)
		if err == io.EOF || errors.Is(err, ErrCorrupt) {
			if err != io.EOF {
				l.logger.Warn("swap file ends in a bad batch", "file", name, "position", pos, "err", err)
			}
			return next, nil
		}
		if err != nil {
			return 0, err
		}
		next = max(next, h.LastOffset()+1)
		pos += int64(h.Size())
	}
}
