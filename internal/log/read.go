package log

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Region is a byte range of a segment file, for sendfile(2): Length bytes at
// Offset of File, holding whole batches.
type Region struct {
	File   vfs.File
	Offset int64
	Length int64
}

// ReadResult is what Read found.
type ReadResult struct {
	// Regions hold whole batches in offset order. The files stay open until
	// file.delete.delay.ms after their segment is deleted, so a reader may
	// send them after Read returns; Close (and Delete) close them at once.
	Regions []Region
	// FirstOffset is the base offset of the first batch returned, or the
	// requested offset when nothing was.
	FirstOffset int64
	// Bytes is the total length of Regions.
	Bytes int64
	// LogStartOffset and LogEndOffset are the log's bounds when read.
	LogStartOffset, LogEndOffset int64
}

// Special timestamps of ListOffsets.
const (
	LatestTimestamp   int64 = -1
	EarliestTimestamp int64 = -2
	MaxTimestamp      int64 = -3
)

// Read returns the batches from the one containing offset onward, up to
// maxBytes, holding only offsets below upperBound (the high watermark or the
// last stable offset). With minOneBatch the first batch is returned even if
// larger than maxBytes (KIP-74). A batch that starts below offset is returned
// whole; clients skip the records before the offset they asked for. An offset
// outside [LogStartOffset, LogEndOffset] returns ErrOffsetOutOfRange.
func (l *Log) Read(offset int64, maxBytes int32, upperBound int64, minOneBatch bool) (ReadResult, error) {
	r, err := l.read(offset, maxBytes, upperBound, minOneBatch)
	if errors.Is(err, ErrClosed) {
		// A segment in our snapshot was deleted and closed meanwhile: the
		// second attempt sees the log without it (and the new start offset).
		r, err = l.read(offset, maxBytes, upperBound, minOneBatch)
	}
	return r, err
}

func (l *Log) read(offset int64, maxBytes int32, upperBound int64, minOneBatch bool) (ReadResult, error) {
	leo := l.logEndOffset.Load()
	l.mu.RLock()
	segs, start, closed := l.mu.segments, l.mu.logStartOffset, l.mu.closed
	l.mu.RUnlock()
	result := ReadResult{FirstOffset: offset, LogStartOffset: start, LogEndOffset: leo}
	if closed {
		return result, ErrClosed
	}
	if offset < start || offset > leo {
		return result, fmt.Errorf("%w: offset %d, log %s has [%d, %d]", ErrOffsetOutOfRange, offset, l.dir, start, leo)
	}
	if localStart := segs[0].baseOffset; offset < localStart {
		return result, fmt.Errorf("%w: offset %d, log %s has [%d, %d] locally", ErrOffsetInRemoteTier, offset, l.dir, localStart, leo)
	}
	upperBound = min(upperBound, leo)
	if offset >= upperBound {
		return result, nil
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].baseOffset > offset }) - 1
	remaining := int64(max(maxBytes, 0))
	target := offset
	for i = max(i, 0); i < len(segs); i++ {
		s := segs[i]
		target = max(target, s.baseOffset)
		r, first, reachedEnd, err := s.read(target, remaining, upperBound, minOneBatch && result.Bytes == 0)
		if err != nil {
			return result, err
		}
		if r.Length > 0 {
			if result.Bytes == 0 {
				result.FirstOffset = first
			}
			result.Regions = append(result.Regions, r)
			result.Bytes += r.Length
			remaining -= r.Length
		}
		if !reachedEnd || remaining <= 0 {
			break
		}
	}
	return result, nil
}

// read returns the whole batches of the segment from the one holding target,
// within maxBytes and below upperBound. reachedEnd reports that the read
// stopped only because the segment ended, so the next segment may continue it.
func (s *segment) read(target, maxBytes, upperBound int64, minOneBatch bool) (r Region, firstOffset int64, reachedEnd bool, err error) {
	size := s.size.Load()
	if size == 0 {
		return r, 0, true, nil
	}
	file, err := s.file()
	if err != nil {
		return r, 0, false, err
	}
	oi, _, err := s.indexes()
	if err != nil {
		return r, 0, false, err
	}
	sc := newHeaderScanner(file, size)
	defer sc.release()
	start, h, found, err := s.findBatch(sc, oi, target)
	if err != nil || !found {
		return r, 0, err == nil, err
	}
	if h.LastOffset() >= upperBound {
		return r, 0, false, nil
	}
	firstEnd := start + int64(h.Size())
	limit := min(size, start+maxBytes)
	if firstEnd > limit {
		if !minOneBatch {
			return r, 0, false, nil
		}
		return Region{File: file, Offset: start, Length: firstEnd - start}, h.BaseOffset, false, nil
	}
	// Skip ahead with the index, then scan the few batches up to the bound.
	pos := max(firstEnd, oi.scanHint(limit, upperBound))
	reachedEnd = true
	for {
		next, err := sc.headerAt(pos)
		if err == io.EOF {
			break
		}
		if err != nil {
			return r, 0, false, err
		}
		if pos+int64(next.Size()) > limit || next.LastOffset() >= upperBound {
			reachedEnd = false
			break
		}
		pos += int64(next.Size())
	}
	return Region{File: file, Offset: start, Length: pos - start}, h.BaseOffset, reachedEnd, nil
}

// AppendTo appends the bytes of every region to dst.
func (r ReadResult) AppendTo(dst []byte) ([]byte, error) {
	for _, region := range r.Regions {
		n := len(dst)
		dst = slices.Grow(dst, int(region.Length))[:n+int(region.Length)]
		if _, err := region.File.ReadAt(dst[n:], region.Offset); err != nil {
			return dst[:n], storageError("read region", err)
		}
	}
	return dst, nil
}

// ReadBytes is Read followed by a copy of the batches into memory, for TLS
// connections and the broker's own readers.
func (l *Log) ReadBytes(offset int64, maxBytes int32, upperBound int64, minOneBatch bool) ([]byte, ReadResult, error) {
	r, err := l.Read(offset, maxBytes, upperBound, minOneBatch)
	if err != nil || r.Bytes == 0 {
		return nil, r, err
	}
	b, err := r.AppendTo(make([]byte, 0, r.Bytes))
	return b, r, err
}

// OffsetForTimestamp finds the first record whose timestamp is >= ts (at or
// after the log start offset) and returns its offset and timestamp, decoding
// the records of the batch that holds it as Kafka does.
// EarliestTimestamp and LatestTimestamp return the log start and end
// offsets; MaxTimestamp behaves as MaxTimestampOffset. found is false when
// no record has a timestamp that late.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error) {
	l.mu.RLock()
	start := l.mu.logStartOffset
	l.mu.RUnlock()
	switch ts {
	case EarliestTimestamp:
		return start, noTimestamp, true, nil
	case LatestTimestamp:
		return l.logEndOffset.Load(), noTimestamp, true, nil
	case MaxTimestamp:
		t, o := l.MaxTimestampOffset()
		return o, t, o >= 0, nil
	}
	rec, found, err := l.RecordForTimestamp(ts)
	return rec.Offset, rec.Timestamp, found, err
}

// RecordForTimestamp finds the first record whose timestamp is >= ts (at or
// after the log start offset), decoding the batch that holds it, with the
// batch's leader epoch. found is false when no record is that late.
func (l *Log) RecordForTimestamp(ts int64) (rec TimestampedRecord, found bool, err error) {
	none := TimestampedRecord{Offset: -1, Timestamp: -1, LeaderEpoch: -1}
	l.mu.RLock()
	segs, start := l.mu.segments, l.mu.logStartOffset
	l.mu.RUnlock()
	for i, s := range segs {
		if i+1 < len(segs) && segs[i+1].baseOffset <= start {
			continue
		}
		largest, err := s.maxTimestampSoFar()
		if err != nil {
			return none, false, err
		}
		if largest.timestamp < ts {
			continue
		}
		rec, found, err := s.findOffsetByTimestamp(ts, start)
		if err != nil || found {
			return rec, found, err
		}
	}
	return none, false, nil
}

// findOffsetByTimestamp scans the segment from the time index's hint for the
// first record with timestamp >= ts at or after startingOffset. Only batches
// whose max timestamp reaches ts are decoded.
func (s *segment) findOffsetByTimestamp(ts, startingOffset int64) (TimestampedRecord, bool, error) {
	oi, ti, err := s.indexes()
	if err != nil {
		return TimestampedRecord{Offset: -1, Timestamp: -1, LeaderEpoch: -1}, false, err
	}
	_, hintOffset := ti.lookup(ts)
	_, pos := oi.lookup(max(hintOffset, startingOffset))
	return s.firstRecordFrom(pos, startingOffset,
		func(maxTimestamp int64) bool { return maxTimestamp < ts },
		func(timestamp int64) bool { return timestamp >= ts })
}

// MaxTimestampOffset returns the largest timestamp in the log and the offset
// of the first record carrying it (KIP-734, as Kafka 3.8+ answers), or
// (-1, -1) for a log without timestamps.
func (l *Log) MaxTimestampOffset() (ts, offset int64) {
	rec := l.MaxTimestampRecord()
	return rec.Timestamp, rec.Offset
}

// MaxTimestampRecord is the first record carrying the largest timestamp in
// the log, with its batch's leader epoch; offset -1 for a log without
// timestamps. A segment whose time index cannot be read is skipped (and the
// error logged).
func (l *Log) MaxTimestampRecord() TimestampedRecord {
	best := timestampOffset{noTimestamp, -1}
	var bestSegment *segment
	for _, s := range l.segmentsSnapshot() {
		if s.size.Load() == 0 {
			continue
		}
		m, err := s.maxTimestampSoFar()
		if err != nil {
			l.logger.Warn("reading segment max timestamp", "dir", l.dir, "base_offset", s.baseOffset, "err", err)
			continue
		}
		if m.timestamp > best.timestamp {
			best, bestSegment = m, s
		}
	}
	fallback := TimestampedRecord{Offset: best.offset, Timestamp: best.timestamp, LeaderEpoch: -1}
	if bestSegment == nil {
		return fallback
	}
	// The time index names the last offset of the batch holding the
	// largest timestamp; the record is found by decoding that batch.
	oi, _, err := bestSegment.indexes()
	if err != nil {
		l.logger.Warn("reading segment offset index", "dir", l.dir, "base_offset", bestSegment.baseOffset, "err", err)
		return fallback
	}
	_, pos := oi.lookup(best.offset)
	rec, found, err := bestSegment.firstRecordFrom(pos, bestSegment.baseOffset,
		func(maxTimestamp int64) bool { return maxTimestamp < best.timestamp },
		func(timestamp int64) bool { return timestamp == best.timestamp })
	if err != nil {
		l.logger.Warn("finding the record with the largest timestamp", "dir", l.dir, "base_offset", bestSegment.baseOffset, "err", err)
	}
	if err != nil || !found {
		return fallback
	}
	return rec
}
