package log

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// logStartReason is the deletion reason of segments below the log start
// offset.
const logStartReason = "log start offset"

// EnforceRetention deletes closed segments that retention.ms or
// retention.bytes allow to go, and segments wholly below the log start
// offset, oldest first, never data at or above the high watermark. As in
// Kafka, an active segment that has data and is itself past retention is
// rolled so it can go too. Deleted segments are renamed *.deleted and their
// files closed and removed after file.delete.delay.ms (this call also
// removes those that are due). It returns the number of segments deleted.
func (l *Log) EnforceRetention(now time.Time) (int, error) {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return 0, err
	}
	nowMs := now.UnixMilli()
	cfg := l.Config()
	deleted := 0
	if cfg.RemoteStorage {
		// Local retention of a tiered log (tier.go): retention.* of the
		// whole log is the remote log manager's.
		cfg.RetentionMs, cfg.RetentionBytes = cfg.LocalRetentionMs, cfg.LocalRetentionBytes
	}
	if cfg.RetentionDelete && cfg.RetentionMs >= 0 {
		n, err := l.deleteOldSegmentsLocked(nowMs, "retention.ms", func(s, _ *segment) bool {
			return nowMs-l.largestTimestamp(s) > cfg.RetentionMs
		})
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	if cfg.RetentionDelete && cfg.RetentionBytes >= 0 {
		if excess := l.Size() - cfg.RetentionBytes; excess >= 0 {
			n, err := l.deleteOldSegmentsLocked(nowMs, "retention.bytes", func(s, _ *segment) bool {
				if size := s.size.Load(); excess-size >= 0 {
					excess -= size
					return true
				}
				return false
			})
			deleted += n
			if err != nil {
				return deleted, err
			}
		}
	}
	n, err := l.deleteBelowLogStartLocked(nowMs)
	deleted += n
	if err != nil {
		return deleted, err
	}
	l.checkInvariantsLocked()
	return deleted, l.removeDeletedLocked(nowMs, false)
}

// RemoveDeletedSegments closes and removes the files of deleted segments
// whose file.delete.delay.ms has passed.
func (l *Log) RemoveDeletedSegments(now time.Time) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	return l.removeDeletedLocked(now.UnixMilli(), false)
}

// largestTimestamp is the segment's max timestamp, or its file's modification
// time when its batches carry none.
func (l *Log) largestTimestamp(s *segment) int64 {
	if m, err := s.maxTimestampSoFar(); err == nil && m.timestamp >= 0 {
		return m.timestamp
	}
	s.mu.Lock()
	path := s.path(logFileSuffix)
	s.mu.Unlock()
	if info, err := l.fs.Stat(path); err == nil {
		return info.ModTime().UnixMilli()
	}
	return l.nowMs()
}

func (l *Log) deleteBelowLogStartLocked(nowMs int64) (int, error) {
	logStart := l.LogStartOffset()
	return l.deleteOldSegmentsLocked(nowMs, logStartReason, func(_, next *segment) bool {
		return next != nil && next.baseOffset <= logStart
	})
}

// deleteOldSegmentsLocked deletes segments from the oldest while predicate
// holds, stopping at the first segment reaching the high watermark and never
// deleting an empty active segment.
func (l *Log) deleteOldSegmentsLocked(nowMs int64, reason string, predicate func(s, next *segment) bool) (int, error) {
	segs := l.segmentsSnapshot()
	highWatermark := l.HighWatermark()
	leo := l.logEndOffset.Load()
	var deletable []*segment
	cfg := l.Config()
	shouldRoll := false
	for i, s := range segs {
		var next *segment
		upper := leo
		if i+1 < len(segs) {
			next = segs[i+1]
			upper = next.baseOffset
		} else if s.size.Load() == 0 {
			break
		}
		if highWatermark < upper || !predicate(s, next) {
			break
		}
		// A tiered log rolls an active segment past local retention, as
		// Kafka does, so it can be copied and then deleted.
		if next == nil && cfg.RemoteStorage && reason != logStartReason {
			shouldRoll = true
		}
		// Data below the log start offset is unreadable, so it goes
		// whether or not it reached the remote tier.
		if reason != logStartReason && !l.remoteAllowsDeletion(upper) {
			break
		}
		deletable = append(deletable, s)
	}
	if shouldRoll && len(deletable) < len(segs) {
		if _, err := l.rollLocked(leo); err != nil {
			return 0, l.fail(err)
		}
	}
	if len(deletable) == 0 {
		return 0, nil
	}
	if len(deletable) == len(segs) {
		// A log always has a segment: start the next one before deleting all.
		if _, err := l.rollLocked(leo); err != nil {
			return 0, l.fail(err)
		}
	}
	l.logger.Info("deleting segments", "reason", reason, "count", len(deletable),
		"first_base_offset", deletable[0].baseOffset, "last_base_offset", deletable[len(deletable)-1].baseOffset)
	return len(deletable), l.removeSegmentsLocked(deletable, nowMs)
}

// removeSegmentsLocked drops the oldest len(victims) segments from the log,
// advances the log start offset past them and schedules their files for
// deletion.
func (l *Log) removeSegmentsLocked(victims []*segment, nowMs int64) error {
	l.mu.Lock()
	segs := l.mu.segments[len(victims):]
	l.mu.segments = segs
	if !l.mu.config.RemoteStorage || l.mu.config.RemoteCopyDisable {
		// A tiered log keeps its start: the deleted segments are still
		// readable from the remote tier.
		l.mu.logStartOffset = max(l.mu.logStartOffset, segs[0].baseOffset)
	}
	logStart := l.mu.logStartOffset
	l.mu.Unlock()
	if l.highWatermark.Load() < logStart {
		l.highWatermark.Store(logStart)
	}
	if err := l.epochs.TruncateFromStart(logStart); err != nil {
		return l.fail(err)
	}
	return l.scheduleDeletionLocked(victims, nowMs)
}

// scheduleDeletionLocked renames the segments' files *.deleted and queues
// them for removal after file.delete.delay.ms.
func (l *Log) scheduleDeletionLocked(victims []*segment, nowMs int64) error {
	var firstErr error
	delayMs := l.Config().FileDeleteDelayMs
	for _, s := range victims {
		if err := s.markDeleted(); err != nil && firstErr == nil {
			firstErr = err
		}
		l.mu.Lock()
		l.mu.pendingDeletes = append(l.mu.pendingDeletes, pendingDelete{segment: s, dueMs: nowMs + delayMs})
		l.mu.Unlock()
	}
	l.dirDirty.Store(true)
	if err := l.removeDeletedLocked(nowMs, false); err != nil && firstErr == nil {
		firstErr = err
	}
	return l.fail(firstErr)
}

// removeDeletedLocked removes the files of pending deletions that are due
// (all of them when all is set).
func (l *Log) removeDeletedLocked(nowMs int64, all bool) error {
	l.mu.Lock()
	var due []*segment
	kept := l.mu.pendingDeletes[:0]
	for _, p := range l.mu.pendingDeletes {
		if all || p.dueMs <= nowMs {
			due = append(due, p.segment)
		} else {
			kept = append(kept, p)
		}
	}
	l.mu.pendingDeletes = kept
	l.mu.Unlock()
	var firstErr error
	for _, s := range due {
		if err := s.deleteFiles(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// DeleteRecordsBefore advances the log start offset to offset (DeleteRecords)
// and deletes the segments wholly below it. The offset may not pass the high
// watermark.
func (l *Log) DeleteRecordsBefore(offset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	if hw := l.HighWatermark(); offset > hw || offset < 0 {
		return fmt.Errorf("%w: cannot delete records before %d, high watermark is %d", ErrOffsetOutOfRange, offset, hw)
	}
	l.mu.Lock()
	if offset <= l.mu.logStartOffset {
		l.mu.Unlock()
		return nil
	}
	l.mu.logStartOffset = offset
	l.mu.Unlock()
	if err := l.epochs.TruncateFromStart(offset); err != nil {
		return l.fail(err)
	}
	_, err := l.deleteBelowLogStartLocked(l.nowMs())
	l.checkInvariantsLocked()
	return err
}

// TruncateTo removes every batch holding offsets at or above offset (a
// follower matching its leader). A batch straddling offset is removed whole,
// so the log end offset may end up below offset. Offsets at or past the log
// end cut no batch, only leader epochs that start at the log end.
func (l *Log) TruncateTo(offset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("%w: cannot truncate to negative offset %d", ErrOffsetOutOfRange, offset)
	}
	if leo := l.logEndOffset.Load(); offset >= leo {
		// Nothing to cut, but an epoch starting at the log end holds no
		// batch: a replica that became leader and wrote nothing before
		// losing leadership. Its entry would make a follower claim an
		// epoch its leader never had, so it goes, as in Kafka.
		return l.fail(l.epochs.TruncateFromEnd(leo))
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	segs := l.segmentsSnapshot()
	if segs[0].baseOffset > offset {
		return l.truncateFullyLocked(offset)
	}
	keep := len(segs)
	for keep > 1 && segs[keep-1].baseOffset > offset {
		keep--
	}
	last := segs[keep-1]
	if keep < len(segs) {
		l.mu.Lock()
		l.mu.segments = segs[:keep:keep]
		l.mu.Unlock()
		if err := l.scheduleDeletionLocked(segs[keep:], l.nowMs()); err != nil {
			return err
		}
	}
	newEnd, err := last.truncateTo(offset, l.nowMs())
	if err != nil {
		return l.fail(err)
	}
	l.logEndOffset.Store(newEnd)
	l.mu.Lock()
	l.mu.logStartOffset = min(l.mu.logStartOffset, newEnd)
	l.mu.Unlock()
	if l.recoveryPoint.Load() > newEnd {
		l.recoveryPoint.Store(newEnd)
	}
	if l.pendingFlush.Load() > newEnd {
		l.pendingFlush.Store(newEnd)
	}
	if l.highWatermark.Load() > newEnd {
		l.highWatermark.Store(newEnd)
	}
	l.checkInvariantsLocked()
	return l.fail(l.epochs.TruncateFromEnd(newEnd))
}

// TruncateFullyAndStartAt deletes every segment and starts the log empty at
// newOffset (a follower too far behind its leader's log start).
func (l *Log) TruncateFullyAndStartAt(newOffset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	if newOffset < 0 {
		return fmt.Errorf("%w: cannot start at negative offset %d", ErrOffsetOutOfRange, newOffset)
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	return l.truncateFullyLocked(newOffset)
}

func (l *Log) truncateFullyLocked(newOffset int64) error {
	old := l.segmentsSnapshot()
	nowMs := l.nowMs()
	// Rename the old files first: the new segment may reuse a base offset.
	for _, s := range old {
		if err := s.markDeleted(); err != nil {
			return l.fail(err)
		}
	}
	cfg := l.Config()
	seg, err := createSegment(l.fs, l.dir, newOffset, cfg, l.jitterMs(cfg), nowMs)
	if err != nil {
		return l.fail(err)
	}
	l.mu.Lock()
	l.mu.segments = []*segment{seg}
	l.mu.logStartOffset = newOffset
	l.mu.Unlock()
	l.logEndOffset.Store(newOffset)
	l.recoveryPoint.Store(newOffset)
	l.pendingFlush.Store(newOffset)
	l.highWatermark.Store(newOffset)
	if err := l.epochs.Clear(); err != nil {
		return l.fail(err)
	}
	return l.scheduleDeletionLocked(old, nowMs)
}

// truncateTo cuts the segment before the batch holding offset and makes it
// the active segment again. It returns the new next offset.
func (s *segment) truncateTo(offset, nowMs int64) (int64, error) {
	oi, ti, err := s.indexes()
	if err != nil {
		return 0, err
	}
	file, err := s.file()
	if err != nil {
		return 0, err
	}
	size := s.size.Load()
	pos, _, found, err := s.findBatch(newHeaderScanner(file, size), oi, offset)
	if err != nil {
		return 0, err
	}
	oi.truncateTo(offset)
	ti.truncateTo(offset)
	if err := s.activate(); err != nil {
		return 0, err
	}
	if found {
		s.size.Store(pos)
		if err := file.Truncate(pos); err != nil {
			return 0, storageError("truncate segment", err)
		}
		size = pos
	}
	s.bytesSinceLastIndexEntry = 0
	if size == 0 {
		s.createdMs, s.hasRollingTimestamp = nowMs, false
	}
	// The max timestamp is the time index's last entry or a later batch.
	ts, tsOffset := ti.lastEntry()
	maxTs := timestampOffset{ts, tsOffset}
	_, from := oi.lookup(tsOffset)
	sc := newHeaderScanner(file, size)
	for {
		h, err := sc.headerAt(from)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if h.MaxTimestamp > maxTs.timestamp {
			maxTs = timestampOffset{h.MaxTimestamp, h.LastOffset()}
		}
		from += int64(h.Size())
	}
	s.maxTimestamp.Store(&maxTs)
	return s.readNextOffset()
}
