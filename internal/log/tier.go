package log

import (
	"fmt"
	"sync/atomic"
)

// remoteGuard holds back retention for tiered storage (KIP-405): while
// guarded, retention.* and local retention delete only segments whose last
// offset is at or below copiedOffset, the highest offset in the remote tier,
// as Kafka's UnifiedLog does for topics with remote storage. A log with
// Config.RemoteStorage whose guard was never set deletes nothing by
// retention: until the remote log manager has read the bucket, no segment
// is known to be copied. DeleteRecords still deletes below the log start
// offset.
type remoteGuard struct {
	guarded      atomic.Bool
	cleared      atomic.Bool
	copiedOffset atomic.Int64
}

// SetRemoteCopiedOffset guards the log's retention with the highest offset
// copied to the remote tier, -1 when nothing is.
func (l *Log) SetRemoteCopiedOffset(offset int64) {
	l.remote.copiedOffset.Store(offset)
	l.remote.guarded.Store(true)
	l.remote.cleared.Store(false)
}

// ClearRemoteGuard lifts the guard, when the topic stops being tiered or
// copies no more (remote.log.copy.disable).
func (l *Log) ClearRemoteGuard() {
	l.remote.guarded.Store(false)
	l.remote.cleared.Store(true)
}

// RemoteCopiedOffset is the highest offset the guard knows to be in the
// remote tier, -1 when none or unguarded.
func (l *Log) RemoteCopiedOffset() int64 {
	if !l.remote.guarded.Load() {
		return -1
	}
	return l.remote.copiedOffset.Load()
}

// remoteAllowsDeletion reports whether retention may delete a segment
// ending just before upper.
func (l *Log) remoteAllowsDeletion(upper int64) bool {
	cfg := l.Config()
	switch {
	case l.remote.cleared.Load() || cfg.RemoteCopyDisable:
		// Nothing more is copied: retention.* alone decides (KIP-950).
		return true
	case l.remote.guarded.Load():
		return upper-1 <= l.remote.copiedOffset.Load()
	}
	return !cfg.RemoteStorage
}

// LocalLogStartOffset is the first offset held by a local segment, Kafka's
// localLogStartOffset: the log start offset on an untiered log, and on a
// tiered one the offset below which reads go to the remote tier.
func (l *Log) LocalLogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return max(l.mu.logStartOffset, l.mu.segments[0].baseOffset)
}

// AdvanceLogStartOffset moves a tiered log's start offset up to offset
// (never down, never past the high watermark), as Kafka's
// updateLogStartOffsetFromRemoteTier does after the remote log manager
// expired remote segments. It deletes the local segments wholly below the
// new start.
func (l *Log) AdvanceLogStartOffset(offset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	offset = min(offset, l.HighWatermark())
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

// ResetLogStartOffsetToRemote sets a tiered log's start offset to offset
// when it is below the first local segment: a follower that rebuilt its
// state from the remote tier (Kafka's buildRemoteLogAuxState) starts its
// local log at the leader's local start but reads from offset.
func (l *Log) ResetLogStartOffsetToRemote(offset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mu.config.RemoteStorage {
		return fmt.Errorf("%w: log %s is not tiered", ErrOffsetOutOfRange, l.dir)
	}
	if offset < 0 || offset > l.mu.segments[0].baseOffset {
		return fmt.Errorf("%w: remote log start %d above the local start %d", ErrOffsetOutOfRange, offset, l.mu.segments[0].baseOffset)
	}
	l.mu.logStartOffset = offset
	return nil
}

// ClosedSegment describes a closed segment for tiered storage: its offsets,
// size, newest timestamp and the paths of its files, as they are on disk
// (indexes trimmed to their entries at roll).
type ClosedSegment struct {
	BaseOffset     int64
	EndOffset      int64 // last offset, inclusive: the next segment's base - 1
	SizeBytes      int64
	MaxTimestampMs int64
	LogPath        string
	IndexPath      string
	TimeIndexPath  string
	TxnIndexPath   string
}

// ClosedSegments returns the log's closed segments, oldest first; the
// active segment is never among them. Paths name the live files; a segment
// deleted by retention or replaced by the cleaner after the call is renamed
// away, and a reader of its paths gets a not-exist error.
func (l *Log) ClosedSegments() []ClosedSegment {
	segs := l.segmentsSnapshot()
	if len(segs) < 2 {
		return nil
	}
	out := make([]ClosedSegment, 0, len(segs)-1)
	for i, s := range segs[:len(segs)-1] {
		s.mu.Lock()
		closed := ClosedSegment{
			BaseOffset:    s.baseOffset,
			EndOffset:     segs[i+1].baseOffset - 1,
			SizeBytes:     s.size.Load(),
			LogPath:       s.path(logFileSuffix),
			IndexPath:     s.path(indexFileSuffix),
			TimeIndexPath: s.path(timeIndexFileSuffix),
			TxnIndexPath:  s.path(txnIndexFileSuffix),
		}
		s.mu.Unlock()
		closed.MaxTimestampMs = l.largestTimestamp(s)
		out = append(out, closed)
	}
	return out
}
