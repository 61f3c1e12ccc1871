package log

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// ManagerOptions configure a Manager, with Kafka's broker config names and
// defaults.
type ManagerOptions struct {
	// ClusterID and NodeID are written to, and checked against, each log
	// dir's meta.properties.
	ClusterID string
	NodeID    int32
	// BrokerEpoch goes into the clean shutdown marker (-1 when unknown).
	BrokerEpoch int64
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// Logger; slog.Default when nil.
	Logger *slog.Logger
	// TopicConfig returns the storage config for a topic's logs found at
	// startup; DefaultConfig when nil.
	TopicConfig func(topic string) Config
	// RetentionCheckIntervalMs is log.retention.check.interval.ms (300000).
	RetentionCheckIntervalMs int64
	// FlushSchedulerIntervalMs is log.flush.scheduler.interval.ms: how often
	// flush.ms is checked (Kafka's default, math.MaxInt64, never checks).
	FlushSchedulerIntervalMs int64
	// FlushOffsetCheckpointIntervalMs is log.flush.offset.checkpoint.interval.ms (60000).
	FlushOffsetCheckpointIntervalMs int64
	// FlushStartOffsetCheckpointIntervalMs is
	// log.flush.start.offset.checkpoint.interval.ms (60000).
	FlushStartOffsetCheckpointIntervalMs int64
	// RecoveryThreadsPerDataDir is num.recovery.threads.per.data.dir (2):
	// logs of one dir loaded in parallel.
	RecoveryThreadsPerDataDir int
	// SkipTopics names topics whose partition dirs the manager leaves alone:
	// the metadata log, which the Raft quorum opens itself.
	SkipTopics map[string]bool
	// DeletionCheckIntervalMs is how often files of deleted segments and
	// partitions are checked against file.delete.delay.ms (1000).
	DeletionCheckIntervalMs int64
	// Cleaner configures the log cleaner that compacts logs with
	// cleanup.policy=compact (cleaner_manager.go); off in the zero value.
	Cleaner CleanerOptions
}

func (o ManagerOptions) withDefaults() ManagerOptions {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.TopicConfig == nil {
		o.TopicConfig = func(string) Config { return DefaultConfig() }
	}
	if o.RetentionCheckIntervalMs <= 0 {
		o.RetentionCheckIntervalMs = 300000
	}
	if o.FlushSchedulerIntervalMs <= 0 {
		o.FlushSchedulerIntervalMs = math.MaxInt64
	}
	if o.FlushOffsetCheckpointIntervalMs <= 0 {
		o.FlushOffsetCheckpointIntervalMs = 60000
	}
	if o.FlushStartOffsetCheckpointIntervalMs <= 0 {
		o.FlushStartOffsetCheckpointIntervalMs = 60000
	}
	if o.RecoveryThreadsPerDataDir <= 0 {
		o.RecoveryThreadsPerDataDir = 2
	}
	if o.DeletionCheckIntervalMs <= 0 {
		o.DeletionCheckIntervalMs = 1000
	}
	return o
}

// Manager owns the log dirs (log.dirs): their meta.properties, checkpoint
// files and clean shutdown markers, every partition log in them, and the
// background work over those logs.
type Manager struct {
	fs     vfs.FS
	dirs   []string
	opts   ManagerOptions
	logger *slog.Logger

	// hadCleanShutdown records, per dir, whether the marker was present at
	// startup.
	hadCleanShutdown map[string]bool

	// checkpointMu serialises checkpoint writes.
	checkpointMu sync.Mutex

	mu struct {
		sync.Mutex
		logs map[TopicPartition]*managedLog
		// futures are the logs being filled in another dir to replace
		// logs' entry of the same partition (future.go).
		// Invariant: a future's logDir differs from its current log's.
		futures map[TopicPartition]*managedLog
		// preferredDirs are where the next log of a partition is created
		// (an AlterReplicaLogDirs for a replica not hosted yet).
		preferredDirs map[TopicPartition]string
		// deletedDirs are partition dirs renamed *-delete awaiting removal.
		deletedDirs []deletedDir
		closed      bool
		cancel      context.CancelFunc
	}
	background sync.WaitGroup
	// cleaner compacts the logs with cleanup.policy=compact.
	cleaner *logCleaner
}

type managedLog struct {
	log    *Log
	logDir string
}

type deletedDir struct {
	log   *Log
	path  string
	dueMs int64
}

// NewManager opens the log dirs, creating them and their meta.properties as
// needed, and checks that existing ones belong to this cluster and node.
func NewManager(fsys vfs.FS, dirs []string, opts ManagerOptions) (*Manager, error) {
	if len(dirs) == 0 {
		return nil, errors.New("log: no log dirs")
	}
	opts = opts.withDefaults()
	m := &Manager{fs: fsys, dirs: append([]string(nil), dirs...), opts: opts, logger: opts.Logger, hadCleanShutdown: map[string]bool{}}
	m.mu.logs = map[TopicPartition]*managedLog{}
	m.cleaner = newLogCleaner(m, opts.Cleaner)
	for _, dir := range dirs {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return nil, storageError("create log dir", err)
		}
		meta, err := ReadMetaProperties(fsys, dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			meta = MetaProperties{Version: 1, ClusterID: opts.ClusterID, NodeID: opts.NodeID, DirectoryID: RandomUUID()}
			if err := WriteMetaProperties(fsys, dir, meta, opts.Clock()); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case meta.ClusterID != opts.ClusterID && opts.ClusterID != "":
			return nil, fmt.Errorf("log: dir %s belongs to cluster %q, not %q", dir, meta.ClusterID, opts.ClusterID)
		case meta.NodeID != opts.NodeID:
			return nil, fmt.Errorf("log: dir %s belongs to node %d, not %d", dir, meta.NodeID, opts.NodeID)
		}
		clean, err := hasCleanShutdownMarker(fsys, dir)
		if err != nil {
			return nil, err
		}
		m.hadCleanShutdown[dir] = clean
	}
	return m, nil
}

// Dirs returns the log dirs.
func (m *Manager) Dirs() []string { return append([]string(nil), m.dirs...) }

// LoadAll opens every partition log in every dir, in parallel (bounded per
// dir), recovering them if the dir was not shut down cleanly, and then
// removes the clean shutdown markers. Logs that fail to load are left out and
// their errors joined in the returned error.
func (m *Manager) LoadAll() (map[TopicPartition]*Log, error) {
	var errs []error
	for _, dir := range m.dirs {
		if err := m.loadDir(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return m.All(), errors.Join(errs...)
}

func (m *Manager) loadDir(dir string) error {
	recoveryPoints, err := ReadOffsetCheckpoint(m.fs, filepath.Join(dir, RecoveryPointCheckpointFile))
	if err != nil {
		m.logger.Warn("recovery point checkpoint unreadable; recovering every segment", "dir", dir, "err", err)
		recoveryPoints = map[TopicPartition]int64{}
	}
	logStarts, err := ReadOffsetCheckpoint(m.fs, filepath.Join(dir, LogStartOffsetCheckpointFile))
	if err != nil {
		m.logger.Warn("log start offset checkpoint unreadable", "dir", dir, "err", err)
		logStarts = map[TopicPartition]int64{}
	}
	highWatermarks, err := ReadOffsetCheckpoint(m.fs, filepath.Join(dir, ReplicationCheckpointFile))
	if err != nil {
		m.logger.Warn("replication checkpoint unreadable", "dir", dir, "err", err)
		highWatermarks = map[TopicPartition]int64{}
	}
	entries, err := m.fs.ReadDir(dir)
	if err != nil {
		return storageError("list log dir", err)
	}
	clean := m.hadCleanShutdown[dir]
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		errs  []error
		sem   = make(chan struct{}, m.opts.RecoveryThreadsPerDataDir)
	)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		path := filepath.Join(dir, name)
		if strings.HasSuffix(name, "-delete") {
			if err := m.fs.RemoveAll(path); err != nil {
				m.logger.Warn("removing deleted partition dir", "path", path, "err", err)
			}
			continue
		}
		if ftp, ok := parseSuffixedDirName(name, futureDirSuffix); ok && !m.opts.SkipTopics[ftp.Topic] {
			if err := m.loadFuture(dir, path, ftp, clean, recoveryPoints[ftp], logStarts[ftp]); err != nil {
				errMu.Lock()
				errs = append(errs, fmt.Errorf("loading %s: %w", path, err))
				errMu.Unlock()
			}
			continue
		}
		if strings.HasSuffix(name, "-future") || strings.HasSuffix(name, "-stray") {
			m.logger.Warn("ignoring partition dir", "path", path)
			continue
		}
		tp, ok := parsePartitionDirName(name)
		if !ok || m.opts.SkipTopics[tp.Topic] {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := m.loadLog(dir, path, tp, clean, recoveryPoints[tp], logStarts[tp], highWatermarks[tp])
			if err != nil {
				errMu.Lock()
				errs = append(errs, fmt.Errorf("loading %s: %w", path, err))
				errMu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// From now on a crash must be detected at the next startup.
	return removeCleanShutdownMarker(m.fs, dir)
}

func (m *Manager) loadLog(logDir, path string, tp TopicPartition, clean bool, recoveryPoint, logStart, highWatermark int64) error {
	l, err := Open(m.fs, path, m.opts.TopicConfig(tp.Topic), OpenOptions{
		Clock: m.opts.Clock, Logger: m.logger, HadCleanShutdown: clean,
		RecoveryPoint: recoveryPoint, LogStartOffset: logStart, HighWatermark: highWatermark,
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if other, ok := m.mu.logs[tp]; ok {
		l.Close()
		return fmt.Errorf("log: %s found in both %s and %s", tp, other.logDir, logDir)
	}
	m.mu.logs[tp] = &managedLog{log: l, logDir: logDir}
	return nil
}

// Create returns the log for tp, creating it in the online log dir with the
// fewest partitions and writing its partition.metadata.
func (m *Manager) Create(tp TopicPartition, topicID [16]byte, cfg Config) (*Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	if ml, ok := m.mu.logs[tp]; ok {
		return ml.log, nil
	}
	counts := map[string]int{}
	for _, ml := range m.mu.logs {
		counts[ml.logDir]++
	}
	// The online dir with the fewest partitions, as Kafka places them
	// (offline dirs take none), unless AlterReplicaLogDirs named one.
	logDir := ""
	for _, d := range m.dirs {
		if (logDir == "" || counts[d] < counts[logDir]) && (len(m.dirs) == 1 || m.dirOnlineLocked(d)) {
			logDir = d
		}
	}
	if d, ok := m.mu.preferredDirs[tp]; ok {
		delete(m.mu.preferredDirs, tp)
		if m.dirOnlineLocked(d) {
			logDir = d
		}
	}
	if logDir == "" {
		return nil, fmt.Errorf("%w: every log dir is offline", ErrStorage)
	}
	path := filepath.Join(logDir, tp.String())
	// A directory that does not exist yet is created empty, and the log
	// opens without listing or recovering it (openNew).
	_, statErr := m.fs.Stat(path)
	fresh := errors.Is(statErr, fs.ErrNotExist)
	// A directory left by an earlier topic of the same name is moved aside.
	if !fresh {
		if old, err := ReadPartitionMetadata(m.fs, path); err == nil && old != topicID {
			m.logger.Warn("partition dir belongs to an older topic; deleting it", "path", path, "topic_id", EncodeUUID(old))
			id := RandomUUID()
			stale := filepath.Join(logDir, tp.String()+"."+hex.EncodeToString(id[:])+"-delete")
			if err := m.fs.Rename(path, stale); err != nil {
				return nil, storageError("rename stale partition dir", err)
			}
			if err := m.fs.RemoveAll(stale); err != nil {
				m.logger.Warn("removing stale partition dir", "path", stale, "err", err)
			}
		}
	}
	if err := m.fs.MkdirAll(path, 0o755); err != nil {
		return nil, storageError("create partition dir", err)
	}
	if err := WritePartitionMetadata(m.fs, path, topicID); err != nil {
		return nil, err
	}
	openLog := openNew
	if !fresh {
		// Not a clean open: the directory already held data; recover it.
		openLog = Open
	}
	l, err := openLog(m.fs, path, cfg, OpenOptions{Clock: m.opts.Clock, Logger: m.logger})
	if err != nil {
		return nil, err
	}
	m.mu.logs[tp] = &managedLog{log: l, logDir: logDir}
	return l, nil
}

// Get returns the log for tp, or nil.
func (m *Manager) Get(tp TopicPartition) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml, ok := m.mu.logs[tp]; ok {
		return ml.log
	}
	return nil
}

// All returns every log.
func (m *Manager) All() map[TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]*Log, len(m.mu.logs))
	for tp, ml := range m.mu.logs {
		out[tp] = ml.log
	}
	return out
}

// Delete removes tp's log: its directory is renamed
// <topic>-<partition>.<id>-delete at once and removed, with its files
// closed, after file.delete.delay.ms.
func (m *Manager) Delete(tp TopicPartition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fl, ok := m.mu.futures[tp]; ok {
		m.abandonFutureLocked(tp, fl)
	}
	ml, ok := m.mu.logs[tp]
	if !ok {
		return nil
	}
	delete(m.mu.logs, tp)
	id := RandomUUID()
	path := filepath.Join(ml.logDir, tp.String()+"."+hex.EncodeToString(id[:])+"-delete")
	if err := m.fs.Rename(ml.log.Dir(), path); err != nil {
		ml.log.Close()
		return storageError("rename deleted partition dir", err)
	}
	if err := m.fs.SyncDir(ml.logDir); err != nil {
		m.logger.Warn("syncing log dir", "dir", ml.logDir, "err", err)
	}
	due := m.opts.Clock().UnixMilli() + ml.log.Config().FileDeleteDelayMs
	m.mu.deletedDirs = append(m.mu.deletedDirs, deletedDir{log: ml.log, path: path, dueMs: due})
	return nil
}

// removeDeletedDirs removes partition dirs whose delay has passed (all of
// them when all is set).
func (m *Manager) removeDeletedDirs(nowMs int64, all bool) error {
	m.mu.Lock()
	var due []deletedDir
	kept := m.mu.deletedDirs[:0]
	for _, d := range m.mu.deletedDirs {
		if all || d.dueMs <= nowMs {
			due = append(due, d)
		} else {
			kept = append(kept, d)
		}
	}
	m.mu.deletedDirs = kept
	m.mu.Unlock()
	var errs []error
	for _, d := range due {
		d.log.Close()
		if err := m.fs.RemoveAll(d.path); err != nil {
			errs = append(errs, storageError("remove partition dir", err))
		}
	}
	return errors.Join(errs...)
}

// logsByDir groups the logs by log dir.
func (m *Manager) logsByDir() map[string]map[TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]map[TopicPartition]*Log, len(m.dirs))
	for _, d := range m.dirs {
		out[d] = map[TopicPartition]*Log{}
	}
	for tp, ml := range m.mu.logs {
		out[ml.logDir][tp] = ml.log
	}
	// A future log is in another dir than its partition's current log, so
	// it has that dir's checkpoint entry for the partition to itself.
	for tp, ml := range m.mu.futures {
		out[ml.logDir][tp] = ml.log
	}
	return out
}

// checkpoint writes one checkpoint file per dir with value(log) for each log.
func (m *Manager) checkpoint(file string, value func(*Log) int64) error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	var errs []error
	for dir, logs := range m.logsByDir() {
		if !m.DirOnline(dir) {
			continue // an offline dir takes no writes, as in Kafka
		}
		offsets := make(map[TopicPartition]int64, len(logs))
		for tp, l := range logs {
			offsets[tp] = value(l)
		}
		if err := WriteOffsetCheckpoint(m.fs, filepath.Join(dir, file), offsets); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CheckpointRecoveryPoints writes recovery-point-offset-checkpoint in each dir.
func (m *Manager) CheckpointRecoveryPoints() error {
	return m.checkpoint(RecoveryPointCheckpointFile, (*Log).RecoveryPoint)
}

// CheckpointLogStartOffsets writes log-start-offset-checkpoint in each dir.
func (m *Manager) CheckpointLogStartOffsets() error {
	return m.checkpoint(LogStartOffsetCheckpointFile, (*Log).LogStartOffset)
}

// CheckpointHighWatermarks writes replication-offset-checkpoint in each dir.
func (m *Manager) CheckpointHighWatermarks() error {
	return m.checkpoint(ReplicationCheckpointFile, (*Log).HighWatermark)
}

// EnforceRetention runs retention on every log and returns how many segments
// were deleted.
func (m *Manager) EnforceRetention(now time.Time) (int, error) {
	total := 0
	var errs []error
	for tp, l := range m.All() {
		n, err := l.EnforceRetention(now)
		total += n
		if err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, fmt.Errorf("%s: %w", tp, err))
		}
	}
	return total, errors.Join(errs...)
}

// Start runs the background work until ctx ends or Shutdown is called:
// the log cleaner, retention every log.retention.check.interval.ms,
// flush.ms checks every log.flush.scheduler.interval.ms, recovery point and
// log start offset checkpoints, and removal of deleted files after
// file.delete.delay.ms.
func (m *Manager) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	m.mu.Lock()
	m.mu.cancel = cancel
	m.mu.Unlock()
	m.cleaner.start(ctx)
	m.every(ctx, m.opts.RetentionCheckIntervalMs, func(now time.Time) {
		if _, err := m.EnforceRetention(now); err != nil {
			m.logger.Error("retention", "err", err)
		}
	})
	m.every(ctx, m.opts.FlushSchedulerIntervalMs, func(now time.Time) {
		for tp, l := range m.All() {
			if err := l.FlushIfDue(now); err != nil && !errors.Is(err, ErrClosed) {
				m.logger.Error("flush", "partition", tp, "err", err)
			}
		}
	})
	m.every(ctx, m.opts.FlushOffsetCheckpointIntervalMs, func(time.Time) {
		if err := m.CheckpointRecoveryPoints(); err != nil {
			m.logger.Error("recovery point checkpoint", "err", err)
		}
		if err := m.CheckpointHighWatermarks(); err != nil {
			m.logger.Error("replication checkpoint", "err", err)
		}
	})
	m.every(ctx, m.opts.FlushStartOffsetCheckpointIntervalMs, func(time.Time) {
		if err := m.CheckpointLogStartOffsets(); err != nil {
			m.logger.Error("log start offset checkpoint", "err", err)
		}
	})
	m.every(ctx, m.opts.DeletionCheckIntervalMs, func(now time.Time) {
		for _, l := range m.All() {
			if err := l.RemoveDeletedSegments(now); err != nil && !errors.Is(err, ErrClosed) {
				m.logger.Error("removing deleted segments", "dir", l.Dir(), "err", err)
			}
		}
		if err := m.removeDeletedDirs(now.UnixMilli(), false); err != nil {
			m.logger.Error("removing deleted partitions", "err", err)
		}
	})
}

// every runs fn each intervalMs until ctx ends; math.MaxInt64 disables it.
func (m *Manager) every(ctx context.Context, intervalMs int64, fn func(time.Time)) {
	if intervalMs <= 0 || intervalMs >= math.MaxInt64/int64(time.Millisecond) {
		return
	}
	m.background.Add(1)
	go func() {
		defer m.background.Done()
		t := time.NewTicker(time.Duration(intervalMs) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(m.opts.Clock())
			}
		}
	}()
}

// Shutdown stops the background work, flushes and closes every log, writes
// the checkpoints, and marks each dir whose logs all closed cleanly with the
// clean shutdown marker.
func (m *Manager) Shutdown() error {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil
	}
	m.mu.closed = true
	if m.mu.cancel != nil {
		m.mu.cancel()
	}
	m.mu.Unlock()
	m.background.Wait()

	var errs []error
	cleanDirs := map[string]bool{}
	for dir, logs := range m.logsByDir() {
		clean := true
		for tp, l := range logs {
			if err := l.Flush(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", tp, err))
				clean = false
			}
		}
		cleanDirs[dir] = clean
	}
	for _, err := range []error{m.CheckpointRecoveryPoints(), m.CheckpointLogStartOffsets(), m.CheckpointHighWatermarks()} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for dir, logs := range m.logsByDir() {
		for tp, l := range logs {
			if err := l.Close(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", tp, err))
				cleanDirs[dir] = false
			}
		}
	}
	if err := m.removeDeletedDirs(0, true); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		for dir, clean := range cleanDirs {
			if clean && m.DirOnline(dir) {
				if err := writeCleanShutdownMarker(m.fs, dir, m.opts.BrokerEpoch); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}
