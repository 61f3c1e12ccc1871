package log

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Log is one partition's log: a directory <log.dir>/<topic>-<partition> of
// segments. One appender at a time (Append serialises internally); any number
// of concurrent readers, which never block appends and never see a batch
// before it is completely written.
type Log struct {
	fs     vfs.FS
	dir    string
	clock  func() time.Time
	logger *slog.Logger
	epochs *EpochCache
	// remote holds back retention of segments not yet in the remote tier.
	remote remoteGuard

	// appendMu serialises every change to the log: appends, rolls,
	// truncation, retention, config updates and Close. Readers never take it.
	// Lock order: appendMu, flushMu, mu, segment.mu, index mu.
	appendMu sync.Mutex
	// flushMu serialises flushes and the recovery point they advance.
	flushMu sync.Mutex

	mu struct {
		sync.RWMutex
		// segments is sorted by base offset and never empty while the log is
		// open. It is replaced, never modified in place, so readers can keep a
		// snapshot without holding mu.
		segments []*segment
		// Invariant: segments[0].baseOffset <= logStartOffset <= logEndOffset,
		// except that with config.RemoteStorage the log start offset may
		// lie below segments[0].baseOffset (the data between lives in the
		// remote tier only).
		logStartOffset int64
		// remoteStartHint is a checkpointed log start offset below the
		// first local segment that a log opened without
		// config.RemoteStorage could not take; the first UpdateConfig that
		// turns RemoteStorage on restores it (tier.go). -1 when none.
		remoteStartHint int64
		config          Config
		closed          bool
		// pendingDeletes are segments renamed *.deleted whose files stay open
		// until file.delete.delay.ms has passed.
		pendingDeletes []pendingDelete
	}

	// logEndOffset is the offset the next batch gets. The writer stores it
	// after the active segment's size, so a reader that loads it first finds
	// every batch below it committed.
	logEndOffset atomic.Int64
	// recoveryPoint: every offset below it is flushed to disk.
	// Invariant: recoveryPoint <= logEndOffset.
	recoveryPoint atomic.Int64
	// highWatermark bounds retention and DeleteRecordsBefore, as in Kafka.
	highWatermark atomic.Int64
	// lastFlushMs is when the log was last flushed, for flush.ms.
	lastFlushMs atomic.Int64
	// dirDirty is set when files were created or renamed since the directory
	// was last synced.
	dirDirty atomic.Bool
	// noSnapshots is set when the log was created in a directory that was
	// just made empty (openNew) and cleared before any producer snapshot is
	// written: until then ProducerSnapshotOffsets needs no listing.
	noSnapshots atomic.Bool
	// failure holds the first I/O error that made the log refuse writes.
	failure atomic.Pointer[error]
	// background counts goroutines (the flusher after rolls) Close waits for.
	background sync.WaitGroup
	// pendingFlush is the offset the background flusher flushes up to, and
	// flusherRunning whether its goroutine is running.
	pendingFlush   atomic.Int64
	flusherRunning atomic.Bool
	// ext holds roll hooks and the aborted-transaction index (hooks.go).
	ext extensions
}

type pendingDelete struct {
	segment *segment
	dueMs   int64
}

// AppendResult describes a successful append.
type AppendResult struct {
	// BaseOffset and LastOffset are the first and last offsets assigned.
	BaseOffset, LastOffset int64
	// MaxTimestamp is the largest batch max timestamp appended, and
	// OffsetOfMaxTimestamp the last offset of that batch.
	MaxTimestamp, OffsetOfMaxTimestamp int64
	// LogAppendTime is the batches' timestamp when they use LogAppendTime
	// (set upstream), else -1.
	LogAppendTime int64
	// LogStartOffset is the log start offset after the append.
	LogStartOffset int64
	// Batches, Records and Bytes count what was appended.
	Batches int
	Records int64
	Bytes   int
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.logEndOffset.Load() }

// LogStartOffset is the first offset readable.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.logStartOffset
}

// RecoveryPoint is the offset below which everything is flushed.
func (l *Log) RecoveryPoint() int64 { return l.recoveryPoint.Load() }

// HighWatermark is the last value given to UpdateHighWatermark (or read from
// the replication checkpoint), clamped to [LogStartOffset, LogEndOffset].
func (l *Log) HighWatermark() int64 {
	return min(l.highWatermark.Load(), l.logEndOffset.Load())
}

// UpdateHighWatermark records the partition's high watermark. As in Kafka,
// retention and DeleteRecordsBefore never remove data at or above it, so the
// partition layer must keep it current (for a single replica: the LEO after
// every append).
func (l *Log) UpdateHighWatermark(offset int64) {
	l.highWatermark.Store(max(offset, 0))
}

// EpochCache returns the partition's leader-epoch cache.
func (l *Log) EpochCache() *EpochCache { return l.epochs }

// LatestEpoch is the newest leader epoch in the log, if any.
func (l *Log) LatestEpoch() (int32, bool) { return l.epochs.LatestEpoch() }

// EndOffsetForEpoch answers OffsetForLeaderEpoch (see EpochCache.EndOffsetFor).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.epochs.EndOffsetFor(epoch, l.logEndOffset.Load())
}

// MaybeAssignEpochStartOffset records that leaderEpoch starts at startOffset
// (called by a new leader with its log end offset).
func (l *Log) MaybeAssignEpochStartOffset(leaderEpoch int32, startOffset int64) error {
	if err := l.epochs.Assign(leaderEpoch, startOffset); err != nil {
		return l.fail(err)
	}
	return nil
}

// Config returns the current configuration.
func (l *Log) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.config
}

// UpdateConfig applies a new topic configuration. Segment sizes and times
// apply from the next roll check.
func (l *Log) UpdateConfig(cfg Config) {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.config = cfg.normalized()
	hint := l.mu.remoteStartHint
	l.mu.remoteStartHint = -1
	if l.mu.config.RemoteStorage && hint >= 0 && hint < l.mu.logStartOffset && l.mu.logStartOffset == l.mu.segments[0].baseOffset {
		l.mu.logStartOffset = hint
	}
	if !l.mu.config.RemoteStorage {
		// Tiering is off: nothing below the first local segment is
		// readable any more.
		l.mu.logStartOffset = max(l.mu.logStartOffset, l.mu.segments[0].baseOffset)
	}
}

// Size is the total bytes of the log's segments.
func (l *Log) Size() int64 {
	var total int64
	for _, s := range l.segmentsSnapshot() {
		total += s.size.Load()
	}
	return total
}

// NumSegments is the number of segments.
func (l *Log) NumSegments() int { return len(l.segmentsSnapshot()) }

// Err returns the I/O error that took the log offline, or nil.
func (l *Log) Err() error {
	if p := l.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records err as the log's failure if it is a storage error, and
// returns it.
func (l *Log) fail(err error) error {
	if err != nil && errors.Is(err, ErrStorage) {
		if l.failure.CompareAndSwap(nil, &err) {
			l.logger.Error("log offline after storage error", "dir", l.dir, "err", err)
		}
	}
	return err
}

func (l *Log) segmentsSnapshot() []*segment {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.segments
}

// checkWritableLocked refuses writes to a closed or failed log.
func (l *Log) checkWritableLocked() error {
	l.mu.RLock()
	closed := l.mu.closed
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if p := l.failure.Load(); p != nil {
		return fmt.Errorf("%w: log %s is offline after an earlier error: %w", ErrStorage, l.dir, *p)
	}
	return nil
}

func (l *Log) nowMs() int64 { return l.clock().UnixMilli() }

// appendInfo summarises the batches of one append.
type appendInfo struct {
	firstOffset, lastOffset     int64
	maxTimestamp, offsetOfMaxTs int64
	logAppendTime               int64
	batches                     int
	records                     int64
}

// walkBatches checks that data is a sequence of whole batches and
// summarises them. When assign is true it gives them offsets from next and
// stamps leaderEpoch into each (the leader path); otherwise it checks that
// their offsets increase (the follower path).
func walkBatches(data []byte, assign bool, next int64, leaderEpoch int32, epochs func(epoch int32, base int64)) (appendInfo, error) {
	info := appendInfo{firstOffset: -1, lastOffset: -1, maxTimestamp: noTimestamp, offsetOfMaxTs: -1, logAppendTime: -1}
	if len(data) == 0 {
		return info, fmt.Errorf("%w: empty append", ErrInvalidBatch)
	}
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err != nil {
			return info, fmt.Errorf("%w: at byte %d: %w", ErrInvalidBatch, pos, err)
		}
		if h.Size() > len(data)-pos {
			return info, fmt.Errorf("%w: batch at byte %d needs %d bytes, %d remain", ErrInvalidBatch, pos, h.Size(), len(data)-pos)
		}
		if assign {
			record.SetBaseOffset(data[pos:], next)
			record.SetPartitionLeaderEpoch(data[pos:], leaderEpoch)
			h.BaseOffset, h.PartitionLeaderEpoch = next, leaderEpoch
		} else if h.BaseOffset <= info.lastOffset || h.BaseOffset < 0 {
			return info, fmt.Errorf("%w: offsets out of order: batch base %d after last offset %d", ErrInvalidBatch, h.BaseOffset, info.lastOffset)
		}
		if info.batches == 0 {
			info.firstOffset = h.BaseOffset
		}
		info.lastOffset = h.LastOffset()
		if h.MaxTimestamp > info.maxTimestamp {
			info.maxTimestamp, info.offsetOfMaxTs = h.MaxTimestamp, h.LastOffset()
		}
		if h.Attributes&record.AttrLogAppendTime != 0 {
			info.logAppendTime = h.MaxTimestamp
		}
		if epochs != nil && h.PartitionLeaderEpoch >= 0 {
			epochs(h.PartitionLeaderEpoch, h.BaseOffset)
		}
		info.batches++
		info.records += int64(h.RecordCount)
		next = h.LastOffset() + 1
		pos += h.Size()
	}
	if info.offsetOfMaxTs < 0 {
		info.offsetOfMaxTs = info.lastOffset
	}
	return info, nil
}

// Append appends one or more whole RecordBatch v2 batches as the leader:
// it assigns offsets from the log end offset, rewriting each batch's base
// offset and partition leader epoch in place (outside the CRC), and records a
// new leaderEpoch in the epoch cache. The batches must have been validated
// upstream.
func (l *Log) Append(batches []byte, leaderEpoch int32) (AppendResult, error) {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return AppendResult{}, err
	}
	info, err := walkBatches(batches, true, l.logEndOffset.Load(), leaderEpoch, nil)
	if err != nil {
		return AppendResult{}, err
	}
	assignEpoch := func() error {
		if leaderEpoch < 0 {
			return nil
		}
		return l.epochs.Assign(leaderEpoch, info.firstOffset)
	}
	if err := l.appendLocked(batches, info, assignEpoch); err != nil {
		return AppendResult{}, err
	}
	return l.resultLocked(batches, info), l.maybeFlushLocked()
}

// AppendAsFollower appends batches fetched from the leader, keeping their
// offsets. The first batch must start at the log end offset or later.
func (l *Log) AppendAsFollower(batches []byte) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	var newEpochs []EpochEntry
	info, err := walkBatches(batches, false, 0, 0, func(epoch int32, base int64) {
		newEpochs = append(newEpochs, EpochEntry{epoch, base})
	})
	if err != nil {
		return err
	}
	if leo := l.logEndOffset.Load(); info.firstOffset < leo {
		return fmt.Errorf("%w: first offset %d is below the log end offset %d", ErrUnexpectedAppendOffset, info.firstOffset, leo)
	}
	assignEpochs := func() error {
		for _, e := range newEpochs {
			if latest, ok := l.epochs.LatestEpoch(); ok && e.Epoch <= latest {
				continue
			}
			if err := l.epochs.Assign(e.Epoch, e.StartOffset); err != nil {
				return err
			}
		}
		return nil
	}
	if err := l.appendLocked(batches, info, assignEpochs); err != nil {
		return err
	}
	return l.maybeFlushLocked()
}

func (l *Log) resultLocked(data []byte, info appendInfo) AppendResult {
	return AppendResult{
		BaseOffset: info.firstOffset, LastOffset: info.lastOffset,
		MaxTimestamp: info.maxTimestamp, OffsetOfMaxTimestamp: info.offsetOfMaxTs,
		LogAppendTime: info.logAppendTime, LogStartOffset: l.LogStartOffset(),
		Batches: info.batches, Records: info.records, Bytes: len(data),
	}
}

// appendLocked writes the summarised batches to the active segment, rolling
// first if needed, records their leader epochs with assignEpochs, and only
// then publishes the new log end offset. That order is what lets flushTo
// persist the epoch cache without taking appendMu: once a flush has read a
// log end offset, every epoch starting below it is in the cache.
func (l *Log) appendLocked(data []byte, info appendInfo, assignEpochs func() error) error {
	l.mu.RLock()
	cfg := l.mu.config
	l.mu.RUnlock()
	if int64(len(data)) > cfg.SegmentBytes {
		return fmt.Errorf("%w: %d bytes, segment.bytes is %d", ErrBatchTooLarge, len(data), cfg.SegmentBytes)
	}
	seg, err := l.maybeRollLocked(cfg, int64(len(data)), info)
	if err != nil {
		return l.fail(err)
	}
	if err := seg.appendBatches(data, info.lastOffset, info.maxTimestamp, info.offsetOfMaxTs, cfg.IndexIntervalBytes); err != nil {
		return l.fail(err)
	}
	epochErr := assignEpochs()
	l.logEndOffset.Store(info.lastOffset + 1)
	if epochErr != nil {
		return l.fail(epochErr)
	}
	l.checkInvariantsLocked()
	return nil
}

// maybeFlushLocked flushes when flush.messages unflushed messages have
// accumulated.
func (l *Log) maybeFlushLocked() error {
	l.mu.RLock()
	flushMessages := l.mu.config.FlushMessages
	l.mu.RUnlock()
	if flushMessages == math.MaxInt64 {
		return nil
	}
	if l.logEndOffset.Load()-l.recoveryPoint.Load() >= flushMessages {
		return l.Flush()
	}
	return nil
}

// maybeRollLocked returns the segment to append to, rolling a new one when
// the active segment is full (segment.bytes), old (segment.ms less jitter),
// has a full index, or cannot express the new offsets relative to its base.
func (l *Log) maybeRollLocked(cfg Config, messagesBytes int64, info appendInfo) (*segment, error) {
	segs := l.segmentsSnapshot()
	active := segs[len(segs)-1]
	size := active.size.Load()
	oi, ti, err := active.indexes()
	if err != nil {
		return nil, err
	}
	_, fitsOffset := relativeOffset(active.baseOffset, info.lastOffset)
	now := l.nowMs()
	shouldRoll := size > cfg.SegmentBytes-messagesBytes ||
		(size > 0 && active.timeWaitedForRollMs(now, info.maxTimestamp) > cfg.SegmentMs-active.rollJitterMs) ||
		oi.isFull() || ti.isFull() || !fitsOffset
	if !shouldRoll {
		return active, nil
	}
	return l.rollLocked(max(info.firstOffset, l.logEndOffset.Load()))
}

// Roll closes the active segment and starts a new one at the log end offset
// (a no-op when the active segment is empty).
func (l *Log) Roll() error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	_, err := l.rollLocked(l.logEndOffset.Load())
	return l.fail(err)
}

// rollLocked starts a new active segment at newOffset. The old one is
// trimmed now and flushed in the background, after which the recovery point
// moves up to newOffset.
func (l *Log) rollLocked(newOffset int64) (*segment, error) {
	l.mu.RLock()
	cfg := l.mu.config
	segs := l.mu.segments
	l.mu.RUnlock()
	old := segs[len(segs)-1]
	if old.size.Load() == 0 {
		if old.baseOffset == newOffset {
			return old, nil
		}
		// An empty active segment is replaced rather than kept as a hole.
		seg, err := createSegment(l.fs, l.dir, newOffset, cfg, l.jitterMs(cfg), l.nowMs())
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		l.mu.segments = append(append([]*segment(nil), segs[:len(segs)-1]...), seg)
		l.mu.Unlock()
		l.dirDirty.Store(true)
		if err := old.deleteFiles(); err != nil {
			l.logger.Warn("removing empty segment", "dir", l.dir, "err", err)
		}
		return seg, nil
	}
	if err := old.onBecomeInactive(); err != nil {
		return nil, err
	}
	seg, err := createSegment(l.fs, l.dir, newOffset, cfg, l.jitterMs(cfg), l.nowMs())
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.mu.segments = append(append(make([]*segment, 0, len(segs)+1), segs...), seg)
	l.mu.Unlock()
	l.dirDirty.Store(true)
	l.scheduleFlush(newOffset)
	l.ext.afterRoll(l, old, newOffset)
	return seg, nil
}

// scheduleFlush flushes up to offset in the background. At most one flusher
// goroutine runs per log; rolls while it works raise its target.
func (l *Log) scheduleFlush(offset int64) {
	for {
		cur := l.pendingFlush.Load()
		if offset <= cur || l.pendingFlush.CompareAndSwap(cur, offset) {
			break
		}
	}
	if !l.flusherRunning.CompareAndSwap(false, true) {
		return
	}
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		for {
			target := l.pendingFlush.Load()
			if err := l.flushTo(target); err != nil {
				l.logger.Error("flushing rolled segment", "dir", l.dir, "err", err)
			}
			l.flusherRunning.Store(false)
			// A roll that raised the target after the load above saw the
			// flusher running and left the work to it.
			if l.pendingFlush.Load() == target || !l.flusherRunning.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

func (l *Log) jitterMs(cfg Config) int64 {
	if cfg.SegmentJitterMs <= 0 {
		return 0
	}
	return rand.Int64N(min(cfg.SegmentJitterMs, cfg.SegmentMs))
}

// Flush writes everything appended so far to stable storage and advances
// the recovery point to the log end offset.
func (l *Log) Flush() error { return l.flushTo(l.logEndOffset.Load()) }

// flushTo flushes every segment holding offsets below offset that is not yet
// flushed, then moves the recovery point up to offset.
//
// The leader-epoch checkpoint is written here, not in the append that
// assigned a new epoch, so that no produce request waits for its fsync
// (KAFKA-15046). It is written before the recovery point moves, which keeps
// the EpochCache invariant: every epoch starting below the recovery point is
// on disk. offset was read from the log end offset, which appends publish
// only after assigning their epochs, so the snapshot written covers it.
func (l *Log) flushTo(offset int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if err := l.epochs.Flush(); err != nil {
		return l.fail(err)
	}
	recoveryPoint := l.recoveryPoint.Load()
	if offset <= recoveryPoint {
		return nil
	}
	segs := l.segmentsSnapshot()
	for i, s := range segs {
		if i+1 < len(segs) && segs[i+1].baseOffset <= recoveryPoint {
			continue
		}
		if s.baseOffset >= offset {
			break
		}
		if err := s.flush(); err != nil {
			return l.fail(err)
		}
	}
	if l.dirDirty.Swap(false) {
		if err := l.fs.SyncDir(l.dir); err != nil {
			l.dirDirty.Store(true)
			return l.fail(storageError("sync dir", err))
		}
	}
	l.recoveryPoint.Store(min(max(offset, recoveryPoint), l.logEndOffset.Load()))
	l.lastFlushMs.Store(l.nowMs())
	return nil
}

// FlushIfDue flushes when flush.ms has passed since the last flush.
func (l *Log) FlushIfDue(now time.Time) error {
	l.mu.RLock()
	flushMs := l.mu.config.FlushMs
	l.mu.RUnlock()
	if flushMs == math.MaxInt64 || now.UnixMilli()-l.lastFlushMs.Load() < flushMs {
		return nil
	}
	if l.logEndOffset.Load() == l.recoveryPoint.Load() {
		l.lastFlushMs.Store(now.UnixMilli())
		return nil
	}
	return l.Flush()
}

// Close flushes no segment, but writes the leader-epoch checkpoint if an
// epoch was assigned since the last flush; it trims the active segment's
// indexes and closes every file. Segments awaiting deletion keep their *.deleted files, which the next
// Open removes.
func (l *Log) Close() error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.background.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	l.mu.closed = true
	// Assigned epochs not yet flushed are written now, so that an Open after
	// a clean shutdown, which scans nothing, finds them.
	firstErr := l.epochs.Flush()
	for _, s := range l.mu.segments {
		if err := s.close(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, p := range l.mu.pendingDeletes {
		if err := p.segment.close(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	l.mu.pendingDeletes = nil
	return firstErr
}

// Delete closes the log and removes its directory.
func (l *Log) Delete() error {
	closeErr := l.Close()
	if err := l.fs.RemoveAll(l.dir); err != nil {
		return storageError("remove log dir", err)
	}
	if closeErr != nil && !errors.Is(closeErr, ErrStorage) {
		return closeErr
	}
	return nil
}
