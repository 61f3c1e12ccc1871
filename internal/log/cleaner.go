package log

// # Log compaction
//
// A compacted log (cleanup.policy=compact) keeps at least the latest record
// of every key. Its head, from the first dirty offset (the cleaner's
// checkpoint) to the end, may hold several records per key; its tail, below
// the first dirty offset, was cleaned before. One cleaning pass of a log
// (Kafka's Cleaner.doClean):
//
//  1. scans the batch headers of the whole log for the producers writing to
//     it: the last batch of each, and the transactions still open;
//  2. reads the dirty section [first dirty offset, first uncleanable offset)
//     and maps each key to its latest offset (offset_map.go), skipping
//     aborted transactions, until the map is full; the section it covered
//     ends at endOffset. The first uncleanable offset is the base of a
//     segment: never past the active segment, the high watermark, the first
//     open transaction, or a segment younger than min.compaction.lag.ms;
//  3. groups the segments below endOffset into runs that fit one segment
//     (segment.bytes, segment.index.bytes, 32-bit relative offsets), and
//     rewrites each run into one new segment with what batchFilter keeps
//     (cleaner_filter.go), then swaps it in (cleaner_swap.go);
//  4. records endOffset as the new first dirty offset in
//     cleaner-offset-checkpoint (cleaner_manager.go).
//
// Offsets never change: a cleaned log has gaps where records went.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// checkDoneEveryBatches is how often (in batches read) a pass checks that
// it should go on: shutdown, the log closed or deleted.
const checkDoneEveryBatches = 64

// cleanerThread is the working state of one cleaner thread: its offset map
// and I/O buffers, reused from pass to pass.
type cleanerThread struct {
	id        int
	offsets   *offsetMap
	throttler *throttler
	clock     func() time.Time
	logger    *slog.Logger
	// ioBufferBytes is the size of each of the read and write buffers.
	ioBufferBytes int
	readBuf       []byte
	writeBuf      []byte
	// producerExpirationMs is producer.id.expiration.ms.
	producerExpirationMs int64
}

func newCleanerThread(id int, opts CleanerOptions, throttler *throttler, clock func() time.Time, logger *slog.Logger) *cleanerThread {
	dedupeBytes, ioBufferBytes := opts.perThread()
	return &cleanerThread{
		id:                   id,
		offsets:              newOffsetMap(dedupeBytes, opts.DedupeBufferLoadFactor),
		throttler:            throttler,
		clock:                clock,
		logger:               logger,
		ioBufferBytes:        ioBufferBytes,
		producerExpirationMs: opts.ProducerIDExpirationMs,
	}
}

// cleanStats describes one pass.
type cleanStats struct {
	// endOffset is the first offset the pass did not clean: the next first
	// dirty offset.
	endOffset int64
	// mapBytesRead and mapRecordsRead count what building the offset map
	// read; bytesRead, bytesWritten, recordsRead and recordsKept what the
	// rewrite read and wrote.
	mapBytesRead, mapRecordsRead int64
	bytesRead, bytesWritten      int64
	recordsRead, recordsKept     int64
	segmentsReplaced             int
	bufferUtilization            float64
	mapDuration, duration        time.Duration
	// openTxnOffset is the first offset of the oldest open transaction the
	// pass found (-1 for none): nothing from there on can be cleaned until
	// it ends.
	openTxnOffset int64
}

// cleanTarget is the log and range one pass cleans.
type cleanTarget struct {
	log *Log
	// firstDirtyOffset and firstUncleanableOffset bound the dirty section;
	// firstUncleanableOffset is a segment base offset.
	firstDirtyOffset, firstUncleanableOffset int64
	// isCurrent reports whether the log is still the one the manager holds
	// (nil: always).
	isCurrent func() bool
}

// clean runs one pass over target.
func (c *cleanerThread) clean(ctx context.Context, target cleanTarget) (cleanStats, error) {
	start := c.clock()
	stats := cleanStats{endOffset: target.firstDirtyOffset, openTxnOffset: -1}
	l := target.log
	if target.isCurrent == nil {
		target.isCurrent = func() bool { return true }
	}
	checkDone := func() error {
		if ctx.Err() != nil || !target.isCurrent() {
			return errCleaningAborted
		}
		l.mu.RLock()
		closed := l.mu.closed
		l.mu.RUnlock()
		if closed {
			return errCleaningAborted
		}
		return nil
	}
	cfg := l.Config()
	nowMs := start.UnixMilli()
	segs := l.segmentsSnapshot()
	producers, err := scanProducers(ctx, segs)
	if err != nil {
		return stats, err
	}
	upper := target.firstUncleanableOffset
	stats.openTxnOffset = producers.firstOpenTxnOffset
	if open := producers.firstOpenTxnOffset; open >= 0 && open < upper {
		upper = segs[segmentFor(segs, open)].baseOffset
	}
	if upper <= target.firstDirtyOffset {
		return stats, nil
	}
	if err := c.buildOffsetMap(l, segs, target.firstDirtyOffset, upper, &stats, checkDone); err != nil {
		return stats, err
	}
	stats.mapDuration = c.clock().Sub(start)
	if c.offsets.latestOffset < target.firstDirtyOffset {
		return stats, fmt.Errorf("log: the offset map (%d keys) cannot hold the keys of one batch at offset %d; "+
			"raise log.cleaner.dedupe.buffer.size or lower log.cleaner.threads", c.offsets.maxEntries, target.firstDirtyOffset)
	}
	endOffset := c.offsets.latestOffset + 1
	groups, err := groupSegments(segs, endOffset, upper, cfg)
	if err != nil {
		return stats, err
	}
	filter := &batchFilter{
		offsets: c.offsets, txns: newCleanedTxns(), producers: producers,
		nowMs: nowMs, deleteRetentionMs: cfg.Compaction.DeleteRetentionMs,
		producerExpirationMs: c.producerExpirationMs,
	}
	for _, g := range groups {
		if err := c.cleanGroup(l, cfg, g, filter, &stats, checkDone, target.isCurrent); err != nil {
			return stats, err
		}
		stats.segmentsReplaced += len(g.segments)
	}
	stats.endOffset = endOffset
	stats.bufferUtilization = c.offsets.utilization()
	stats.duration = c.clock().Sub(start)
	return stats, nil
}

// buildOffsetMap maps the keys of [start, end) to their latest offsets
// (Kafka's Cleaner.buildOffsetMap), stopping when the map is full.
func (c *cleanerThread) buildOffsetMap(l *Log, segs []*segment, start, end int64, stats *cleanStats, checkDone func() error) error {
	c.offsets.clear()
	aborted, err := l.CollectAbortedTxns(start, end)
	if err != nil {
		return err
	}
	txns := newCleanedTxns()
	txns.addAborted(aborted)
	for i := segmentFor(segs, start); i < len(segs) && segs[i].baseOffset < end; i++ {
		s := segs[i]
		nextBase := end
		if i+1 < len(segs) {
			nextBase = min(segs[i+1].baseOffset, end)
		}
		full, err := c.mapSegment(s, start, txns, stats, checkDone)
		if err != nil || full {
			return abortIfClosed(s, err)
		}
		// Offsets missing at the segment's end (a gap) are covered too.
		c.offsets.updateLatestOffset(nextBase - 1)
	}
	return nil
}

// mapSegment adds the records of s at or above start to the offset map and
// reports whether the map filled up.
func (c *cleanerThread) mapSegment(s *segment, start int64, txns *cleanedTxns, stats *cleanStats, checkDone func() error) (bool, error) {
	oi, _, err := s.indexes()
	if err != nil {
		return false, err
	}
	file, err := s.file()
	if err != nil {
		return false, err
	}
	_, pos := oi.lookup(start)
	reader := c.newReader(file, s.size.Load())
	for n := 0; ; n++ {
		if n%checkDoneEveryBatches == 0 {
			if err := checkDone(); err != nil {
				return false, err
			}
		}
		batch, h, err := reader.next(pos)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		c.throttler.maybeThrottle(len(batch))
		pos += int64(len(batch))
		stats.mapBytesRead += int64(len(batch))
		if h.LastOffset() < start {
			continue
		}
		if h.IsControl() {
			typ, hasRecord, err := controlRecordType(batch, 0)
			if err != nil {
				return false, fmt.Errorf("%w: control batch at offset %d: %w", ErrCorrupt, h.BaseOffset, err)
			}
			txns.onControl(&h, typ, hasRecord)
		} else if !txns.onData(&h) {
			full := false
			err := record.Records(batch, 0, func(r record.Record) error {
				stats.mapRecordsRead++
				offset := h.BaseOffset + int64(r.OffsetDelta)
				if r.Key == nil || offset < start {
					return nil
				}
				if c.offsets.full() || !c.offsets.put(r.Key, offset) {
					full = true
					return errStopRecords
				}
				return nil
			})
			if full {
				return true, nil
			}
			if err != nil {
				return false, fmt.Errorf("%w: batch at offset %d: %w", ErrCorrupt, h.BaseOffset, err)
			}
		}
		c.offsets.updateLatestOffset(h.LastOffset())
	}
}

// abortIfClosed turns an error reading s into errCleaningAborted when s was
// closed meanwhile (deleted by retention or truncation).
func abortIfClosed(s *segment, err error) error {
	if err == nil {
		return nil
	}
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	if closed || errors.Is(err, ErrClosed) {
		return errCleaningAborted
	}
	return err
}

// segmentGroup is a run of segments cleaned into one, and the segment that
// follows the run in the log.
type segmentGroup struct {
	segments []*segment
	next     *segment
}

// groupSegments splits the segments holding offsets below endOffset into
// runs whose log and indexes fit one segment and whose offsets fit 32 bits
// relative to the run's base (Kafka's groupSegmentsBySize). upper is the
// first uncleanable offset, bounding the last segment's offsets.
func groupSegments(segs []*segment, endOffset, upper int64, cfg Config) ([]segmentGroup, error) {
	n := 0
	for n < len(segs)-1 && segs[n].baseOffset < endOffset {
		n++
	}
	var groups []segmentGroup
	for i := 0; i < n; {
		first := segs[i]
		logBytes := first.size.Load()
		offsetIndexBytes, timeIndexBytes, err := indexBytes(first)
		if err != nil {
			return nil, abortIfClosed(first, err)
		}
		j := i + 1
		for ; j < n; j++ {
			s := segs[j]
			oib, tib, err := indexBytes(s)
			if err != nil {
				return nil, abortIfClosed(s, err)
			}
			lastOffset := upper - 1
			if j+1 < len(segs) {
				lastOffset = segs[j+1].baseOffset - 1
			}
			if logBytes+s.size.Load() > cfg.SegmentBytes ||
				offsetIndexBytes+oib > int64(cfg.SegmentIndexBytes) || timeIndexBytes+tib > int64(cfg.SegmentIndexBytes) ||
				(s.size.Load() > 0 && lastOffset-first.baseOffset > int64(1<<31-1)) {
				break
			}
			logBytes += s.size.Load()
			offsetIndexBytes += oib
			timeIndexBytes += tib
		}
		groups = append(groups, segmentGroup{segments: segs[i:j:j], next: segs[j]})
		i = j
	}
	return groups, nil
}

// indexBytes is the size of a closed segment's two index files.
func indexBytes(s *segment) (int64, int64, error) {
	oi, ti, err := s.indexes()
	if err != nil {
		return 0, 0, err
	}
	return int64(oi.entries.Load()) * indexEntrySize, int64(ti.entries.Load()) * timeIndexEntrySize, nil
}

// cleanGroup rewrites a run of segments into one and swaps it in.
func (c *cleanerThread) cleanGroup(l *Log, cfg Config, g segmentGroup, filter *batchFilter, stats *cleanStats, checkDone func() error, isCurrent func() bool) error {
	cleaned, err := createCleanedSegment(l.fs, l.dir, g.segments[0].baseOffset, cfg, l.nowMs())
	if err != nil {
		return err
	}
	swapped := false
	defer func() {
		if !swapped {
			if err := discardCleaned(cleaned); err != nil {
				c.logger.Warn("removing unused cleaned segment", "dir", l.dir, "base_offset", cleaned.baseOffset, "err", err)
			}
		}
	}()
	for i, s := range g.segments {
		upper := g.next.baseOffset
		if i+1 < len(g.segments) {
			upper = g.segments[i+1].baseOffset
		}
		aborted, err := l.CollectAbortedTxns(s.baseOffset, upper)
		if err != nil {
			return err
		}
		filter.txns.addAborted(aborted)
		if err := c.cleanInto(s, cleaned, cfg, filter, i == len(g.segments)-1, stats, checkDone); err != nil {
			return abortIfClosed(s, err)
		}
	}
	if err := cleaned.finishCleaned(filter.txns.takeKept()); err != nil {
		return err
	}
	if err := checkDone(); err != nil {
		return err
	}
	if err := l.replaceSegments(cleaned, g.segments, g.next, isCurrent); err != nil {
		if errors.Is(err, errCleaningAborted) || l.Err() == nil {
			return err
		}
		// The swap passed the point of no return: the files are the log's.
		swapped = true
		return err
	}
	swapped = true
	return nil
}

// cleanInto appends what the filter keeps of src to dst. lastInGroup marks
// the last segment of the run, whose last batch always stays.
func (c *cleanerThread) cleanInto(src, dst *segment, cfg Config, filter *batchFilter, lastInGroup bool, stats *cleanStats, checkDone func() error) error {
	file, err := src.file()
	if err != nil {
		return err
	}
	size := src.size.Load()
	reader := c.newReader(file, size)
	out := c.writeBuf[:0]
	var batches []cleanedBatch
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		if err := dst.appendCleaned(out, batches, cfg.IndexIntervalBytes); err != nil {
			return err
		}
		c.throttler.maybeThrottle(len(out))
		stats.bytesWritten += int64(len(out))
		out, batches = out[:0], batches[:0]
		return nil
	}
	for pos, n := int64(0), 0; ; n++ {
		if n%checkDoneEveryBatches == 0 {
			if err := checkDone(); err != nil {
				return err
			}
		}
		batch, h, err := reader.next(pos)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		c.throttler.maybeThrottle(len(batch))
		pos += int64(len(batch))
		stats.bytesRead += int64(len(batch))
		if _, ok := relativeOffset(dst.baseOffset, h.LastOffset()); !ok {
			return fmt.Errorf("%w: offset %d does not fit a segment based at %d", ErrCorrupt, h.LastOffset(), dst.baseOffset)
		}
		before := len(out)
		var res filterResult
		out, res, err = filter.filter(out, batch, &h, lastInGroup && pos == size)
		if err != nil {
			return err
		}
		stats.recordsRead += int64(res.recordsRead)
		stats.recordsKept += int64(res.recordsKept)
		if len(out) > before {
			kept, err := record.ParseHeader(out[before:])
			if err != nil {
				return fmt.Errorf("log: cleaner wrote a bad batch at offset %d: %w", h.BaseOffset, err)
			}
			batches = append(batches, cleanedBatch{position: before, size: len(out) - before, lastOffset: kept.LastOffset(), maxTimestamp: kept.MaxTimestamp})
		}
		if len(out) >= c.ioBufferBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	err = flush()
	if cap(out) <= 2*c.ioBufferBytes {
		c.writeBuf = out[:0]
	}
	return err
}

// newReader returns a reader of the segment file's batches using the
// thread's read buffer.
func (c *cleanerThread) newReader(file vfs.File, end int64) *cleanerReader {
	if len(c.readBuf) < c.ioBufferBytes {
		c.readBuf = make([]byte, c.ioBufferBytes)
		c.writeBuf = make([]byte, 0, c.ioBufferBytes)
	}
	return &cleanerReader{file: file, end: end, buf: c.readBuf, bufStart: -1}
}

// cleanerReader reads whole, CRC-checked batches from a segment file in
// chunks of its buffer's size; a batch larger than the buffer is read into
// one of its own.
type cleanerReader struct {
	file     vfs.File
	end      int64
	buf      []byte
	bufStart int64
	bufLen   int
}

// next returns the batch at pos (valid until the next call) or io.EOF.
func (r *cleanerReader) next(pos int64) ([]byte, record.Header, error) {
	if pos >= r.end {
		return nil, record.Header{}, io.EOF
	}
	if err := r.fill(pos, record.HeaderSize); err != nil {
		return nil, record.Header{}, err
	}
	h, err := record.ParseHeader(r.buf[pos-r.bufStart : r.bufLen])
	if err != nil {
		return nil, h, corruptError(fmt.Sprintf("%s: position %d", r.file.Name(), pos), err)
	}
	if err := r.fill(pos, h.Size()); err != nil {
		return nil, h, err
	}
	batch := r.buf[pos-r.bufStart : pos-r.bufStart+int64(h.Size())]
	if _, err := record.Verify(batch); err != nil {
		return nil, h, corruptError(fmt.Sprintf("%s: position %d", r.file.Name(), pos), err)
	}
	return batch, h, nil
}

// fill makes the buffer hold [pos, pos+n).
func (r *cleanerReader) fill(pos int64, n int) error {
	if r.bufStart >= 0 && pos >= r.bufStart && pos+int64(n) <= r.bufStart+int64(r.bufLen) {
		return nil
	}
	if pos+int64(n) > r.end {
		return corruptError(fmt.Sprintf("%s: batch at position %d needs %d bytes, segment ends at %d", r.file.Name(), pos, n, r.end), record.ErrTruncated)
	}
	if n > len(r.buf) {
		r.buf = make([]byte, n)
	}
	want := int(min(int64(len(r.buf)), r.end-pos))
	got, err := r.file.ReadAt(r.buf[:want], pos)
	r.bufStart, r.bufLen = pos, got
	if got < n {
		r.bufStart = -1
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return storageError("read segment", err)
	}
	return nil
}
