package log

// Future logs: moving a partition's log to another log dir of the same
// broker while it is served (AlterReplicaLogDirs), as Kafka does.
//
// The copy is written to a future log in the destination dir, named
//
//	<log dir>/<topic>-<partition>.<32 hex digits>-future
//
// and filled by the caller from the current log (package partition). Once
// it has caught up, with appends to the current log held off, the caller
// asks ReplaceCurrentWithFuture to swap them: the future dir is renamed to
// <topic>-<partition> in the destination dir first, then the old dir to
// <topic>-<partition>.<hex>-delete, which goes after file.delete.delay.ms
// as a deleted partition does. A crash between the two renames leaves the
// partition in two dirs, which the next start refuses to load, as Kafka
// does. A future dir found at startup is loaded as the future log of its
// partition, so the move resumes.

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

var (
	// ErrLogDirNotFound: the dir is not one of log.dirs (LOG_DIR_NOT_FOUND
	// upstream).
	ErrLogDirNotFound = errors.New("log: log dir not found in the config")
	// ErrLogDirOffline: the dir is configured but cannot be used
	// (KAFKA_STORAGE_ERROR upstream).
	ErrLogDirOffline = errors.New("log: log dir is offline")
)

const (
	futureDirSuffix = "-future"
	deleteDirSuffix = "-delete"
)

// suffixedDirName is a new name for a future (or deleted) partition dir.
func suffixedDirName(tp TopicPartition, suffix string) string {
	id := RandomUUID()
	return tp.String() + "." + hex.EncodeToString(id[:]) + suffix
}

// parseSuffixedDirName parses <topic>-<partition>.<32 hex>-<suffix>.
func parseSuffixedDirName(name, suffix string) (TopicPartition, bool) {
	base, ok := strings.CutSuffix(name, suffix)
	if !ok {
		return TopicPartition{}, false
	}
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || len(base)-i-1 != 32 {
		return TopicPartition{}, false
	}
	if _, err := hex.DecodeString(base[i+1:]); err != nil {
		return TopicPartition{}, false
	}
	return parsePartitionDirName(base[:i])
}

// FutureDirNameLength is the length of tp's future dir name; Kafka refuses
// a move when it exceeds 255 bytes (the file name limit).
func FutureDirNameLength(tp TopicPartition) int {
	return len(tp.String()) + 1 + 32 + len(futureDirSuffix)
}

// ResolveDir returns the configured log dir that path names, comparing
// absolute paths (clients send the absolute paths DescribeLogDirs lists),
// or ErrLogDirNotFound.
func (m *Manager) ResolveDir(path string) (string, error) {
	want := filepath.Clean(path)
	for _, d := range m.dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		if abs == want || d == path {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrLogDirNotFound, path)
}

// DirOnline reports whether a configured log dir can take logs: it exists
// as a directory and no log in it has failed with a storage error (Kafka
// takes a whole dir offline on an I/O error in it).
func (m *Manager) DirOnline(dir string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dirOnlineLocked(dir)
}

func (m *Manager) dirOnlineLocked(dir string) bool {
	st, err := m.fs.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	for _, ml := range m.mu.logs {
		if ml.logDir == dir && ml.log.Err() != nil {
			return false
		}
	}
	for _, ml := range m.mu.futures {
		if ml.logDir == dir && ml.log.Err() != nil {
			return false
		}
	}
	return true
}

// LogDir returns the log dir holding tp's current log, or "".
func (m *Manager) LogDir(tp TopicPartition) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml, ok := m.mu.logs[tp]; ok {
		return ml.logDir
	}
	return ""
}

// SetPreferredDir makes dir, a configured log dir, where tp's log is
// created next, once. At most maxPreferredDirs are remembered; requests
// naming more partitions than that are not remembered.
func (m *Manager) SetPreferredDir(tp TopicPartition, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.preferredDirs == nil {
		m.mu.preferredDirs = map[TopicPartition]string{}
	}
	if _, ok := m.mu.preferredDirs[tp]; ok || len(m.mu.preferredDirs) < maxPreferredDirs {
		m.mu.preferredDirs[tp] = dir
	}
}

// maxPreferredDirs bounds the partitions SetPreferredDir remembers.
const maxPreferredDirs = 100000

// Future returns tp's future log and the dir it is in, or nil.
func (m *Manager) Future(tp TopicPartition) (*Log, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml, ok := m.mu.futures[tp]; ok {
		return ml.log, ml.logDir
	}
	return nil, ""
}

// Futures returns every future log by partition.
func (m *Manager) Futures() map[TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]*Log, len(m.mu.futures))
	for tp, ml := range m.mu.futures {
		out[tp] = ml.log
	}
	return out
}

// CreateFuture returns tp's future log in dir, creating it empty at
// logStartOffset when there is none; a future log in another dir is
// abandoned first. dir must be a configured, online log dir other than
// the one holding tp's current log (which must exist).
func (m *Manager) CreateFuture(tp TopicPartition, topicID [16]byte, dir string, logStartOffset int64) (*Log, error) {
	if !m.DirOnline(dir) {
		return nil, fmt.Errorf("%w: %s", ErrLogDirOffline, dir)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	current, ok := m.mu.logs[tp]
	if !ok {
		return nil, fmt.Errorf("log: no log for %s to move", tp)
	}
	if current.logDir == dir {
		return nil, fmt.Errorf("log: %s is already in %s", tp, dir)
	}
	if ml, ok := m.mu.futures[tp]; ok {
		if ml.logDir == dir {
			return ml.log, nil
		}
		m.abandonFutureLocked(tp, ml)
	}
	path := filepath.Join(dir, suffixedDirName(tp, futureDirSuffix))
	if err := m.fs.MkdirAll(path, 0o755); err != nil {
		return nil, storageError("create future partition dir", err)
	}
	if err := WritePartitionMetadata(m.fs, path, topicID); err != nil {
		return nil, err
	}
	l, err := openNew(m.fs, path, current.log.Config(), OpenOptions{Clock: m.opts.Clock, Logger: m.logger, LogStartOffset: logStartOffset})
	if err != nil {
		return nil, err
	}
	if m.mu.futures == nil {
		m.mu.futures = map[TopicPartition]*managedLog{}
	}
	m.mu.futures[tp] = &managedLog{log: l, logDir: dir}
	return l, nil
}

// AbandonFuture deletes tp's future log, if any: the move was cancelled or
// the partition went.
func (m *Manager) AbandonFuture(tp TopicPartition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml, ok := m.mu.futures[tp]; ok {
		m.abandonFutureLocked(tp, ml)
	}
}

// AbandonFutureLog deletes tp's future log if it is still l (and not one
// created for a later move).
func (m *Manager) AbandonFutureLog(tp TopicPartition, l *Log) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml, ok := m.mu.futures[tp]; ok && ml.log == l {
		m.abandonFutureLocked(tp, ml)
	}
}

func (m *Manager) abandonFutureLocked(tp TopicPartition, ml *managedLog) {
	delete(m.mu.futures, tp)
	path := filepath.Join(ml.logDir, suffixedDirName(tp, deleteDirSuffix))
	if err := m.fs.Rename(ml.log.Dir(), path); err != nil {
		m.logger.Warn("renaming abandoned future log", "partition", tp, "err", err)
		ml.log.Close()
		return
	}
	due := m.opts.Clock().UnixMilli() + ml.log.Config().FileDeleteDelayMs
	m.mu.deletedDirs = append(m.mu.deletedDirs, deletedDir{log: ml.log, path: path, dueMs: due})
}

// ReplaceCurrentWithFuture makes tp's future log its current log and
// schedules the old one for deletion; it returns the new current log,
// reopened under its final path. The caller must hold off every write to
// both logs and have brought the future log level with the current one.
func (m *Manager) ReplaceCurrentWithFuture(tp TopicPartition) (*Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	current, ok := m.mu.logs[tp]
	future, fok := m.mu.futures[tp]
	if !ok || !fok {
		return nil, fmt.Errorf("log: %s has no current and future log to swap", tp)
	}
	if f, c := future.log.LogEndOffset(), current.log.LogEndOffset(); f != c {
		return nil, fmt.Errorf("log: future log of %s ends at %d, the current at %d", tp, f, c)
	}
	highWatermark := current.log.HighWatermark()
	logStart := max(current.log.LogStartOffset(), future.log.LogStartOffset())
	if err := future.log.Flush(); err != nil {
		return nil, err
	}
	if err := future.log.Close(); err != nil {
		return nil, err
	}
	finalPath := filepath.Join(future.logDir, tp.String())
	if err := m.fs.Rename(future.log.Dir(), finalPath); err != nil {
		delete(m.mu.futures, tp)
		return nil, storageError("rename future partition dir", err)
	}
	delete(m.mu.futures, tp)
	if err := m.fs.SyncDir(future.logDir); err != nil {
		m.logger.Warn("syncing log dir", "dir", future.logDir, "err", err)
	}
	deletePath := filepath.Join(current.logDir, suffixedDirName(tp, deleteDirSuffix))
	if err := m.fs.Rename(current.log.Dir(), deletePath); err != nil {
		return nil, storageError("rename replaced partition dir", err)
	}
	if err := m.fs.SyncDir(current.logDir); err != nil {
		m.logger.Warn("syncing log dir", "dir", current.logDir, "err", err)
	}
	due := m.opts.Clock().UnixMilli() + current.log.Config().FileDeleteDelayMs
	m.mu.deletedDirs = append(m.mu.deletedDirs, deletedDir{log: current.log, path: deletePath, dueMs: due})
	delete(m.mu.logs, tp)
	end := future.log.LogEndOffset()
	l, err := Open(m.fs, finalPath, current.log.Config(), OpenOptions{
		Clock: m.opts.Clock, Logger: m.logger, HadCleanShutdown: true,
		RecoveryPoint: end, LogStartOffset: logStart, HighWatermark: min(highWatermark, end),
	})
	if err != nil {
		return nil, err
	}
	l.UpdateHighWatermark(min(highWatermark, l.LogEndOffset()))
	// Retention stays held back by what the remote tier holds, until the
	// next tier task tells the new log itself.
	l.remote.copiedOffset.Store(current.log.remote.copiedOffset.Load())
	l.remote.guarded.Store(current.log.remote.guarded.Load())
	m.mu.logs[tp] = &managedLog{log: l, logDir: future.logDir}
	return l, nil
}

// loadFuture opens a future dir found at startup as its partition's future
// log.
func (m *Manager) loadFuture(logDir, path string, tp TopicPartition, clean bool, recoveryPoint, logStart int64) error {
	l, err := Open(m.fs, path, m.opts.TopicConfig(tp.Topic), OpenOptions{
		Clock: m.opts.Clock, Logger: m.logger, HadCleanShutdown: clean,
		RecoveryPoint: recoveryPoint, LogStartOffset: logStart,
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.futures == nil {
		m.mu.futures = map[TopicPartition]*managedLog{}
	}
	if other, ok := m.mu.futures[tp]; ok {
		l.Close()
		return fmt.Errorf("log: future log of %s found in both %s and %s", tp, other.logDir, logDir)
	}
	m.mu.futures[tp] = &managedLog{log: l, logDir: logDir}
	return nil
}
