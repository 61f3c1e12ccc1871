package log

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"sync"
	"time"
)

// logCleaner runs the cleaner threads over a Manager's compacted logs
// (Kafka's LogCleaner and LogCleanerManager). Each thread repeatedly takes
// the dirtiest log whose dirty ratio exceeds min.cleanable.dirty.ratio (or
// that holds a record older than max.compaction.lag.ms), cleans it, and
// records how far it got in its dir's cleaner-offset-checkpoint; it sleeps
// log.cleaner.backoff.ms when no log qualifies. A log whose cleaning failed
// for any reason but a storage error or an abort is left alone until
// restart, as in Kafka ("uncleanable").
type logCleaner struct {
	m         *Manager
	opts      CleanerOptions
	throttler *throttler

	mu struct {
		sync.Mutex
		// inProgress are the partitions a thread is cleaning.
		inProgress map[TopicPartition]bool
		// uncleanable are logs whose cleaning failed.
		uncleanable map[*Log]bool
		// checkpoints holds each log dir's cleaner-offset-checkpoint, read
		// on first use.
		checkpoints map[string]map[TopicPartition]cleanerCheckpoint
		// openTxns bounds, for a while, the cleanable section of logs whose
		// last pass stopped at an open transaction (the role of Kafka's last
		// stable offset), so they are not picked again for nothing.
		openTxns map[*Log]openTxnBound
		// passes counts finished passes; lastStats describes the last.
		passes    int
		lastStats cleanStats
	}
}

// openTxnBound is the first offset of an open transaction a pass found,
// trusted until expiresMs (a backoff later), when the log is scanned again.
type openTxnBound struct {
	offset, expiresMs int64
}

// cleanerCheckpoint is a partition's first dirty offset and the log it was
// recorded for (nil when read from disk: adopted by the first log seen).
type cleanerCheckpoint struct {
	offset int64
	log    *Log
}

func newLogCleaner(m *Manager, opts CleanerOptions) *logCleaner {
	opts = opts.withDefaults()
	c := &logCleaner{m: m, opts: opts, throttler: newThrottler(opts.IOMaxBytesPerSecond, m.opts.Clock)}
	c.mu.inProgress = map[TopicPartition]bool{}
	c.mu.uncleanable = map[*Log]bool{}
	c.mu.checkpoints = map[string]map[TopicPartition]cleanerCheckpoint{}
	c.mu.openTxns = map[*Log]openTxnBound{}
	return c
}

// start runs the threads until ctx ends.
func (c *logCleaner) start(ctx context.Context) {
	c.throttler.ctx = ctx
	for i := 0; i < c.opts.Threads; i++ {
		t := newCleanerThread(i, c.opts, c.throttler, c.m.opts.Clock, c.m.logger.With("cleaner", i))
		c.m.background.Add(1)
		go func() {
			defer c.m.background.Done()
			timer := time.NewTimer(0)
			defer timer.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
				if c.cleanFilthiest(ctx, t) {
					timer.Reset(0)
				} else {
					timer.Reset(time.Duration(c.opts.BackoffMs) * time.Millisecond)
				}
			}
		}()
	}
}

// cleanFilthiest cleans the dirtiest log, if one qualifies, and reports
// whether it made progress.
func (c *logCleaner) cleanFilthiest(ctx context.Context, t *cleanerThread) bool {
	target, tp, logDir, ok := c.grabFilthiest(c.m.opts.Clock())
	if !ok {
		return false
	}
	stats, err := t.clean(ctx, target)
	c.doneCleaning(tp, logDir, target, stats, err)
	return err == nil && stats.endOffset > target.firstDirtyOffset
}

// logToClean is a candidate log and its dirty section (Kafka's LogToClean).
type logToClean struct {
	target                     cleanTarget
	cleanBytes, cleanableBytes int64
	needCompactionNow          bool
}

func (ltc logToClean) totalBytes() int64 { return ltc.cleanBytes + ltc.cleanableBytes }

func (ltc logToClean) ratio() float64 {
	if ltc.totalBytes() == 0 {
		return 0
	}
	return float64(ltc.cleanableBytes) / float64(ltc.totalBytes())
}

// grabFilthiest picks the log to clean next and marks it in progress.
func (c *logCleaner) grabFilthiest(now time.Time) (cleanTarget, TopicPartition, string, bool) {
	nowMs := now.UnixMilli()
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *logToClean
	var bestTP TopicPartition
	var bestDir string
	for tp, ml := range c.m.managedLogs() {
		l := ml.log
		cfg := l.Config()
		if !cfg.Compaction.Enabled || c.mu.inProgress[tp] || c.mu.uncleanable[l] || l.Err() != nil {
			continue
		}
		checkpoint, ok := c.checkpointLocked(ml.logDir, tp, l)
		firstDirty, force := firstDirtyOffset(l, checkpoint, ok)
		if force {
			c.setCheckpointLocked(ml.logDir, tp, l, firstDirty)
		}
		openTxn := int64(-1)
		if b, ok := c.mu.openTxns[l]; ok && b.expiresMs > nowMs {
			openTxn = b.offset
		}
		ltc, err := newLogToClean(l, firstDirty, nowMs, openTxn)
		if errors.Is(err, ErrClosed) {
			continue // a segment went meanwhile; look again next time
		}
		if err != nil {
			c.m.logger.Warn("log cleaner cannot size log; marking it uncleanable", "partition", tp, "err", err)
			c.mu.uncleanable[l] = true
			continue
		}
		if ltc.totalBytes() == 0 || !((ltc.needCompactionNow && ltc.cleanableBytes > 0) || ltc.ratio() > cfg.Compaction.MinCleanableDirtyRatio) {
			continue
		}
		if best == nil || ltc.ratio() > best.ratio() {
			tp, dir := tp, ml.logDir
			ltc.target.isCurrent = func() bool { return c.m.Get(tp) == l }
			best, bestTP, bestDir = &ltc, tp, dir
		}
	}
	if best == nil {
		return cleanTarget{}, TopicPartition{}, "", false
	}
	c.mu.inProgress[bestTP] = true
	return best.target, bestTP, bestDir, true
}

// firstDirtyOffset is where cleaning resumes: the checkpoint, or the log
// start when there is none or it is out of the log's range (force: the
// checkpoint must be rewritten).
func firstDirtyOffset(l *Log, checkpoint int64, ok bool) (offset int64, force bool) {
	logStart := l.LogStartOffset()
	switch {
	case !ok:
		return logStart, false
	case checkpoint < logStart:
		return logStart, true
	case checkpoint > l.LogEndOffset():
		l.logger.Warn("cleaner checkpoint beyond log end; cleaning from the log start", "checkpoint", checkpoint, "log_end_offset", l.LogEndOffset())
		return logStart, true
	}
	return checkpoint, false
}

// newLogToClean sizes the dirty section of l from firstDirty (Kafka's
// cleanableOffsets, calculateCleanableBytes and maxCompactionDelay). openTxn
// is the first offset of a transaction known to be open, or -1.
func newLogToClean(l *Log, firstDirty, nowMs, openTxn int64) (logToClean, error) {
	cfg := l.Config().Compaction
	segs := l.segmentsSnapshot()
	active := len(segs) - 1
	// The first uncleanable offset: never the active segment, nothing at or
	// above the high watermark or an open transaction, no segment younger
	// than the minimum lag.
	uncleanable := min(l.HighWatermark(), segs[active].baseOffset)
	if openTxn >= 0 {
		uncleanable = min(uncleanable, openTxn)
	}
	if cfg.MinCompactionLagMs > 0 {
		for i := segmentFor(segs, firstDirty); i < active; i++ {
			largest, err := segs[i].maxTimestampSoFar()
			if err != nil {
				return logToClean{}, err
			}
			if largest.timestamp > nowMs-cfg.MinCompactionLagMs {
				uncleanable = min(uncleanable, segs[i].baseOffset)
				break
			}
		}
	}
	uncleanable = max(uncleanable, firstDirty)
	// Round down to a segment base.
	firstUncleanable := segs[active].baseOffset
	if uncleanable < firstUncleanable {
		firstUncleanable = segs[segmentFor(segs, uncleanable)].baseOffset
	}
	ltc := logToClean{target: cleanTarget{log: l, firstDirtyOffset: firstDirty, firstUncleanableOffset: firstUncleanable}}
	from := min(firstDirty, firstUncleanable)
	for i, s := range segs {
		next := int64(math.MaxInt64)
		if i+1 < len(segs) {
			next = segs[i+1].baseOffset
		}
		if s.baseOffset < firstDirty {
			ltc.cleanBytes += s.size.Load()
		}
		if s.baseOffset < firstUncleanable && next > from {
			ltc.cleanableBytes += s.size.Load()
		}
	}
	if cfg.MaxCompactionLagMs < math.MaxInt64 && ltc.cleanableBytes > 0 {
		delay, err := maxCompactionDelay(segs, firstDirty, nowMs, cfg.MaxCompactionLagMs)
		if err != nil {
			return logToClean{}, err
		}
		ltc.needCompactionNow = delay > 0
	}
	return ltc, nil
}

// maxCompactionDelay is how long past max.compaction.lag.ms the oldest
// dirty closed segment's first batch is (0 when none is).
func maxCompactionDelay(segs []*segment, firstDirty, nowMs, maxLagMs int64) (int64, error) {
	earliest := int64(math.MaxInt64)
	for i := segmentFor(segs, firstDirty); i < len(segs)-1; i++ {
		s := segs[i]
		if s.size.Load() == 0 {
			continue
		}
		file, err := s.file()
		if err != nil {
			return 0, err
		}
		h, err := newHeaderScanner(file, s.size.Load()).headerAt(0)
		if err == io.EOF {
			continue
		}
		if err != nil {
			return 0, err
		}
		if h.MaxTimestamp > 0 {
			earliest = min(earliest, h.MaxTimestamp)
		}
	}
	cleanUntil := nowMs - maxLagMs
	if earliest < cleanUntil {
		return cleanUntil - earliest, nil
	}
	return 0, nil
}

// doneCleaning records the outcome of a pass.
func (c *logCleaner) doneCleaning(tp TopicPartition, logDir string, target cleanTarget, stats cleanStats, err error) {
	l := target.log
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.inProgress, tp)
	if stats.openTxnOffset >= 0 {
		c.mu.openTxns[l] = openTxnBound{offset: stats.openTxnOffset, expiresMs: c.m.opts.Clock().UnixMilli() + c.opts.BackoffMs}
	} else {
		delete(c.mu.openTxns, l)
	}
	switch {
	case err == nil:
		c.mu.passes++
		c.mu.lastStats = stats
		if stats.endOffset > target.firstDirtyOffset {
			c.setCheckpointLocked(logDir, tp, l, stats.endOffset)
		}
		if stats.segmentsReplaced > 0 {
			l.logger.Info("log cleaned", "first_dirty_offset", target.firstDirtyOffset, "end_offset", stats.endOffset,
				"segments", stats.segmentsReplaced, "bytes_read", stats.bytesRead, "bytes_written", stats.bytesWritten,
				"records_read", stats.recordsRead, "records_kept", stats.recordsKept,
				"map_utilization", stats.bufferUtilization, "duration", stats.duration)
		}
	case errors.Is(err, errCleaningAborted) || errors.Is(err, ErrClosed):
		l.logger.Info("log cleaning aborted", "first_dirty_offset", target.firstDirtyOffset)
	case errors.Is(err, ErrStorage):
		// The log is offline, or the disk refused the cleaned files.
		l.logger.Error("log cleaning failed on a storage error", "err", err)
	default:
		l.logger.Warn("log cleaning failed; the log will not be cleaned again until restart", "err", err)
		c.mu.uncleanable[l] = true
	}
}

// checkpointLocked returns tp's first dirty offset from its dir's
// cleaner-offset-checkpoint.
func (c *logCleaner) checkpointLocked(logDir string, tp TopicPartition, l *Log) (int64, bool) {
	entries := c.checkpointsLocked(logDir)
	e, ok := entries[tp]
	if !ok || (e.log != nil && e.log != l) {
		// No checkpoint, or one of an earlier log of the same name.
		return 0, false
	}
	if e.log == nil {
		entries[tp] = cleanerCheckpoint{offset: e.offset, log: l}
	}
	return e.offset, true
}

func (c *logCleaner) checkpointsLocked(logDir string) map[TopicPartition]cleanerCheckpoint {
	if entries, ok := c.mu.checkpoints[logDir]; ok {
		return entries
	}
	entries := map[TopicPartition]cleanerCheckpoint{}
	offsets, err := ReadOffsetCheckpoint(c.m.fs, filepath.Join(logDir, CleanerCheckpointFile))
	if err != nil {
		c.m.logger.Warn("cleaner checkpoint unreadable; cleaning compacted logs from their start", "dir", logDir, "err", err)
	}
	for tp, offset := range offsets {
		entries[tp] = cleanerCheckpoint{offset: offset}
	}
	c.mu.checkpoints[logDir] = entries
	return entries
}

// setCheckpointLocked records tp's first dirty offset and rewrites the
// dir's checkpoint file with the entries of the logs it still holds.
func (c *logCleaner) setCheckpointLocked(logDir string, tp TopicPartition, l *Log, offset int64) {
	entries := c.checkpointsLocked(logDir)
	entries[tp] = cleanerCheckpoint{offset: offset, log: l}
	present := c.m.logsByDir()[logDir]
	offsets := make(map[TopicPartition]int64, len(entries))
	for etp, e := range entries {
		if present[etp] == nil || (e.log != nil && present[etp] != e.log) {
			delete(entries, etp)
			continue
		}
		offsets[etp] = e.offset
	}
	if err := WriteOffsetCheckpoint(c.m.fs, filepath.Join(logDir, CleanerCheckpointFile), offsets); err != nil {
		c.m.logger.Error("writing cleaner checkpoint", "dir", logDir, "err", err)
	}
}

// managedLogs returns the logs with their dirs.
func (m *Manager) managedLogs() map[TopicPartition]*managedLog {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]*managedLog, len(m.mu.logs))
	for tp, ml := range m.mu.logs {
		out[tp] = ml
	}
	return out
}

// CleanerCheckpoint returns tp's first dirty offset: everything below it has
// been compacted. ok is false before the first pass over tp.
func (m *Manager) CleanerCheckpoint(tp TopicPartition) (offset int64, ok bool) {
	m.mu.Lock()
	ml := m.mu.logs[tp]
	m.mu.Unlock()
	if ml == nil || m.cleaner == nil {
		return 0, false
	}
	m.cleaner.mu.Lock()
	defer m.cleaner.mu.Unlock()
	return m.cleaner.checkpointLocked(ml.logDir, tp, ml.log)
}

// CleanerPasses is the number of cleaning passes finished since startup.
func (m *Manager) CleanerPasses() int {
	if m.cleaner == nil {
		return 0
	}
	m.cleaner.mu.Lock()
	defer m.cleaner.mu.Unlock()
	return m.cleaner.mu.passes
}

// throttler keeps the cleaner's I/O below log.cleaner.io.max.bytes.per.second
// (Kafka's Throttler): every checkIntervalMs it compares the bytes seen with
// the time passed and sleeps off any excess. All threads share one, so the
// bound is the broker's.
type throttler struct {
	bytesPerSecond float64
	clock          func() time.Time
	// ctx ends sleeps at shutdown; set before the threads start.
	ctx context.Context

	mu struct {
		sync.Mutex
		periodStart time.Time
		observed    float64
	}
}

// throttleCheckInterval is how often the rate is compared (Kafka: 300 ms).
const throttleCheckInterval = 300 * time.Millisecond

func newThrottler(bytesPerSecond float64, clock func() time.Time) *throttler {
	t := &throttler{bytesPerSecond: bytesPerSecond, clock: clock, ctx: context.Background()}
	t.mu.periodStart = clock()
	return t
}

// maybeThrottle accounts for n bytes of I/O, sleeping if the rate is above
// the bound.
func (t *throttler) maybeThrottle(n int) {
	if t == nil || t.bytesPerSecond >= math.MaxFloat64 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.observed += float64(n)
	now := t.clock()
	elapsed := now.Sub(t.mu.periodStart)
	if elapsed < throttleCheckInterval {
		return
	}
	if rate := t.mu.observed / elapsed.Seconds(); rate > t.bytesPerSecond {
		wanted := time.Duration(t.mu.observed / t.bytesPerSecond * float64(time.Second))
		if sleep := wanted - elapsed; sleep > 0 {
			// The lock is held on purpose: every thread waits.
			timer := time.NewTimer(sleep)
			select {
			case <-timer.C:
			case <-t.ctx.Done():
				timer.Stop()
			}
		}
	}
	t.mu.periodStart = t.clock()
	t.mu.observed = 0
}
