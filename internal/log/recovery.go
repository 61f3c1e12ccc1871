package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Open opens the log in dir, creating it if needed.
//
// After a clean shutdown (opts.HadCleanShutdown) nothing is scanned: the
// closed segments are only listed, and their indexes open on first use. After
// a crash every segment from the one holding opts.RecoveryPoint onward is
// re-validated batch by batch (CRC included), its indexes rebuilt, and the log
// cut at the first torn or corrupt batch; segments after a cut are removed.
func Open(fsys vfs.FS, dir string, cfg Config, opts OpenOptions) (*Log, error) {
	opts = opts.withDefaults()
	cfg = cfg.normalized()
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, storageError("create log dir", err)
	}
	l := &Log{fs: fsys, dir: dir, clock: opts.Clock, logger: opts.Logger.With("log", filepath.Base(dir))}
	l.mu.config = cfg
	nowMs := l.nowMs()

	sizes, err := l.listSegmentFiles()
	if err != nil {
		return nil, err
	}
	epochs, epochErr := openEpochCache(fsys, filepath.Join(dir, LeaderEpochCheckpointFile))
	if epochErr != nil && !errors.Is(epochErr, ErrCorrupt) {
		return nil, epochErr
	}
	l.epochs = epochs

	bases := make([]int64, 0, len(sizes))
	for base := range sizes {
		bases = append(bases, base)
	}
	slices.Sort(bases)
	segs := make([]*segment, 0, max(len(bases), 1))
	for _, base := range bases {
		segs = append(segs, newSegment(fsys, dir, base, sizes[base], cfg, l.jitterMs(cfg), nowMs))
	}
	if len(segs) == 0 {
		seg, err := createSegment(fsys, dir, max(opts.LogStartOffset, 0), cfg, l.jitterMs(cfg), nowMs)
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
		l.dirDirty.Store(true)
	}

	recovered := false
	if !opts.HadCleanShutdown && len(bases) > 0 {
		if segs, err = l.recoverSegments(segs, opts.RecoveryPoint); err != nil {
			closeAll(segs)
			return nil, err
		}
		recovered = true
	}
	active := segs[len(segs)-1]
	if err := l.openActive(active, recovered); err != nil {
		closeAll(segs)
		return nil, err
	}
	leo, err := active.readNextOffset()
	if err != nil {
		closeAll(segs)
		return nil, err
	}
	logStart := max(opts.LogStartOffset, segs[0].baseOffset)
	l.mu.remoteStartHint = -1
	if opts.LogStartOffset >= 0 && opts.LogStartOffset < segs[0].baseOffset {
		// The checkpointed start lies in the remote tier, if the log is
		// tiered; the server may only know at its first UpdateConfig.
		if cfg.RemoteStorage {
			logStart = opts.LogStartOffset
		} else {
			l.mu.remoteStartHint = opts.LogStartOffset
		}
	}
	if logStart > leo {
		// The checkpointed start is past everything on disk (the log was
		// emptied by DeleteRecords before a crash): start over there.
		l.logger.Info("log start offset beyond log end; starting empty", "log_start_offset", logStart, "log_end_offset", leo)
		for _, s := range segs {
			if err := s.deleteFiles(); err != nil {
				return nil, err
			}
		}
		seg, err := createSegment(fsys, dir, logStart, cfg, l.jitterMs(cfg), nowMs)
		if err != nil {
			return nil, err
		}
		segs, leo = []*segment{seg}, logStart
		l.dirDirty.Store(true)
	}
	l.mu.segments = segs
	l.mu.logStartOffset = logStart
	l.logEndOffset.Store(leo)

	if epochErr != nil {
		l.logger.Warn("leader epoch checkpoint unreadable; rebuilding from batch headers", "err", epochErr)
		if err := l.rebuildEpochCache(segs); err != nil {
			closeAll(segs)
			return nil, err
		}
	}
	if err := epochs.TruncateFromEnd(leo); err != nil {
		closeAll(segs)
		return nil, err
	}
	epochStart := logStart
	if l.mu.remoteStartHint >= 0 {
		// Keep the epochs of the remote tier for the first UpdateConfig.
		epochStart = l.mu.remoteStartHint
	}
	if err := epochs.TruncateFromStart(epochStart); err != nil {
		closeAll(segs)
		return nil, err
	}
	if opts.HadCleanShutdown {
		l.recoveryPoint.Store(leo)
	} else {
		l.recoveryPoint.Store(min(max(opts.RecoveryPoint, 0), leo))
	}
	l.highWatermark.Store(min(max(opts.HighWatermark, logStart), leo))
	l.lastFlushMs.Store(nowMs)
	return l, nil
}

// openNew opens the log of a directory that was just created and is known
// to be empty (Manager.Create made it): there is nothing to list, remove or
// recover, so it only creates the first segment at opts.LogStartOffset. It
// ends in the state Open reaches on the same directory. The new files'
// directory entries are synced at the first flush, as after any roll.
func openNew(fsys vfs.FS, dir string, cfg Config, opts OpenOptions) (*Log, error) {
	opts = opts.withDefaults()
	cfg = cfg.normalized()
	l := &Log{fs: fsys, dir: dir, clock: opts.Clock, logger: opts.Logger.With("log", filepath.Base(dir))}
	l.mu.config = cfg
	nowMs := l.nowMs()
	l.epochs = &EpochCache{fs: fsys, path: filepath.Join(dir, LeaderEpochCheckpointFile)}
	start := max(opts.LogStartOffset, 0)
	seg, err := createSegmentFiles(newSegment(fsys, dir, start, 0, cfg, l.jitterMs(cfg), nowMs), cfg)
	if err != nil {
		return nil, err
	}
	l.dirDirty.Store(true)
	if err := l.openActive(seg, false); err != nil {
		seg.close()
		return nil, err
	}
	l.mu.segments = []*segment{seg}
	l.mu.logStartOffset = start
	l.mu.remoteStartHint = -1
	l.logEndOffset.Store(start)
	l.recoveryPoint.Store(start)
	l.highWatermark.Store(start)
	l.lastFlushMs.Store(nowMs)
	l.noSnapshots.Store(true)
	// The segment has no transaction index file yet.
	l.ext.mu.txnIndexes = map[*segment][]AbortedTxn{seg: nil}
	return l, nil
}

func closeAll(segs []*segment) {
	for _, s := range segs {
		s.close()
	}
}

// listSegmentFiles returns the size of every .log file by base offset,
// after finishing or rolling back an interrupted cleaning (cleaner_swap.go)
// and removing what a previous run left half done: *.deleted and *.tmp
// files, and index files without a log file.
func (l *Log) listSegmentFiles() (map[int64]int64, error) {
	if err := l.recoverInterruptedSwaps(); err != nil {
		return nil, err
	}
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, storageError("list log dir", err)
	}
	sizes := make(map[int64]int64)
	var indexFiles []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		if strings.HasSuffix(name, deletedFileSuffix) || strings.HasSuffix(name, cleanedFileSuffix) ||
			strings.HasSuffix(name, swapFileSuffix) || strings.HasSuffix(name, ".tmp") {
			if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, storageError("remove leftover file", err)
			}
			continue
		}
		base, suffix, ok := parseSegmentFileName(name)
		if !ok {
			continue
		}
		switch suffix {
		case logFileSuffix:
			info, err := e.Info()
			if err != nil {
				return nil, storageError("stat segment", err)
			}
			sizes[base] = info.Size()
		case indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix:
			indexFiles = append(indexFiles, name)
		}
	}
	for _, name := range indexFiles {
		base, _, _ := parseSegmentFileName(name)
		if _, ok := sizes[base]; !ok {
			l.logger.Info("removing index without segment", "file", name)
			if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, storageError("remove orphan index", err)
			}
		}
	}
	return sizes, nil
}

// recoverSegments re-validates every segment from the one holding
// recoveryPoint. At the first torn or corrupt batch the segment is cut there
// and every later segment removed.
func (l *Log) recoverSegments(segs []*segment, recoveryPoint int64) ([]*segment, error) {
	first := 0
	for i, s := range segs {
		if s.baseOffset <= recoveryPoint {
			first = i
		}
	}
	for i := first; i < len(segs); i++ {
		limit := int64(-1)
		if i+1 < len(segs) {
			limit = segs[i+1].baseOffset
		}
		truncated, err := segs[i].recover(limit, l.epochs, l.logger)
		if err != nil {
			return segs, err
		}
		if truncated > 0 && i+1 < len(segs) {
			l.logger.Warn("removing segments after corruption", "base_offset", segs[i].baseOffset, "removed", len(segs)-i-1)
			for _, later := range segs[i+1:] {
				if err := later.deleteFiles(); err != nil {
					return segs, err
				}
			}
			segs = segs[:i+1]
			l.dirDirty.Store(true)
		}
	}
	return segs, nil
}

// recover re-validates the segment, rebuilds its indexes and cuts the file at
// the first invalid batch: torn, failing its CRC, with offsets going backwards
// or reaching limit (the next segment's base offset; -1 for none). It returns
// the bytes cut.
func (s *segment) recover(limit int64, epochs *EpochCache, logger interface {
	Warn(string, ...any)
}) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	file, err := s.fileLocked()
	if err != nil {
		return 0, err
	}
	st, err := file.Stat()
	if err != nil {
		return 0, storageError("stat segment", err)
	}
	fileSize := st.Size()
	s.closeIndexesLocked()
	for _, suffix := range []string{indexFileSuffix, timeIndexFileSuffix} {
		if err := s.fs.Remove(s.path(suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, storageError("remove index", err)
		}
	}
	if err := s.openIndexesLocked(true); err != nil {
		return 0, err
	}
	br := newBatchReader(file, fileSize)
	var pos, lastIndexed int64
	next := s.baseOffset
	maxTs := timestampOffset{noTimestamp, s.baseOffset}
	for {
		_, h, err := br.next(pos)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				return 0, err
			}
			logger.Warn("invalid batch in segment; truncating", "file", file.Name(), "position", pos, "err", err)
			break
		}
		_, fits := relativeOffset(s.baseOffset, h.LastOffset())
		if h.BaseOffset < next || !fits || (limit >= 0 && h.LastOffset() >= limit) {
			logger.Warn("batch offsets out of order in segment; truncating", "file", file.Name(), "position", pos,
				"base_offset", h.BaseOffset, "expected_at_least", next)
			break
		}
		if h.MaxTimestamp > maxTs.timestamp {
			maxTs = timestampOffset{h.MaxTimestamp, h.LastOffset()}
		}
		if pos-lastIndexed > int64(s.indexIntervalBytes) {
			if err := s.appendIndexEntriesLocked(h.LastOffset(), pos, maxTs); err != nil {
				return 0, err
			}
			lastIndexed = pos
		}
		if h.PartitionLeaderEpoch >= 0 {
			if latest, ok := epochs.LatestEpoch(); !ok || h.PartitionLeaderEpoch > latest {
				if err := epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
					return 0, err
				}
			}
		}
		next = h.LastOffset() + 1
		pos += int64(h.Size())
	}
	truncated := fileSize - pos
	if truncated > 0 {
		if err := file.Truncate(pos); err != nil {
			return 0, storageError("truncate segment", err)
		}
	}
	s.size.Store(pos)
	s.maxTimestamp.Store(&maxTs)
	s.bytesSinceLastIndexEntry = pos - lastIndexed
	s.hasRollingTimestamp = false
	s.preallocated = false
	if err := s.deactivateLocked(); err != nil {
		return 0, err
	}
	return truncated, nil
}

// openActive opens the last segment for appends: its file, and its indexes
// mapped writable at segment.index.bytes. An index that fails its sanity
// check is rebuilt by recovering the segment.
func (l *Log) openActive(s *segment, recovered bool) error {
	if _, err := s.file(); err != nil {
		return err
	}
	_, _, err := s.indexes()
	if err == nil && !recovered {
		s.mu.Lock()
		err = s.sanityCheckLocked()
		s.mu.Unlock()
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return err
		}
		l.logger.Warn("active segment index corrupt; recovering segment", "base_offset", s.baseOffset, "err", err)
		if _, err := s.recover(-1, l.epochs, l.logger); err != nil {
			return err
		}
	}
	s.bytesSinceLastIndexEntry = 0
	return s.activate()
}

// rebuildEpochCache assigns the leader epoch of every batch whose epoch is
// new, reading batch headers only.
func (l *Log) rebuildEpochCache(segs []*segment) error {
	if err := l.epochs.Clear(); err != nil {
		return err
	}
	for _, s := range segs {
		file, err := s.file()
		if err != nil {
			return err
		}
		sc := newHeaderScanner(file, s.size.Load())
		for pos := int64(0); ; {
			h, err := sc.headerAt(pos)
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("rebuilding leader epochs: %w", err)
			}
			if h.PartitionLeaderEpoch >= 0 {
				if latest, ok := l.epochs.LatestEpoch(); !ok || h.PartitionLeaderEpoch > latest {
					if err := l.epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
						return err
					}
				}
			}
			pos += int64(h.Size())
		}
	}
	return nil
}
