package log

import "sync/atomic"

// remoteGuard holds back retention for tiered storage (KIP-405): while
// guarded, retention.* and local retention delete only segments whose last
// offset is at or below copiedOffset, the highest offset in the remote tier,
// as Kafka's UnifiedLog does for topics with remote storage. DeleteRecords
// still deletes below the log start offset.
type remoteGuard struct {
	guarded      atomic.Bool
	copiedOffset atomic.Int64
}

// SetRemoteCopiedOffset guards the log's retention with the highest offset
// copied to the remote tier, -1 when nothing is.
func (l *Log) SetRemoteCopiedOffset(offset int64) {
	l.remote.copiedOffset.Store(offset)
	l.remote.guarded.Store(true)
}

// ClearRemoteGuard lifts the guard, when the topic stops being tiered.
func (l *Log) ClearRemoteGuard() { l.remote.guarded.Store(false) }

// remoteAllowsDeletion reports whether retention may delete a segment
// ending just before upper.
func (l *Log) remoteAllowsDeletion(upper int64) bool {
	return !l.remote.guarded.Load() || upper-1 <= l.remote.copiedOffset.Load()
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
