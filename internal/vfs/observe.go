package vfs

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// SyncKind says what an observed sync made durable.
type SyncKind uint8

const (
	// SyncFile is File.Sync: fdatasync of a segment, index or checkpoint.
	SyncFile SyncKind = iota
	// SyncDir is FS.SyncDir: fsync of a directory after entries changed.
	SyncDir
	// SyncMapping is Mapping.Flush: msync of a memory-mapped index.
	SyncMapping
)

func (k SyncKind) String() string {
	switch k {
	case SyncFile:
		return "file"
	case SyncDir:
		return "dir"
	case SyncMapping:
		return "mapping"
	}
	return "unknown"
}

// SyncObserver is told how long each sync took, failed or not. It is called
// from whichever goroutine synced and must be cheap and safe for concurrent
// use.
type SyncObserver func(kind SyncKind, took time.Duration)

// ObserveSyncs returns inner with every File.Sync, FS.SyncDir and
// Mapping.Flush timed and reported to observe: the time the storage layer
// spends waiting for the disk, which is what a broker's flush latency is.
// Everything else passes straight through. Files keep what sendfile needs:
// their descriptor, and SyscallConn when inner's files have it.
func ObserveSyncs(inner FS, observe SyncObserver) FS {
	return &observedFS{FS: inner, observe: observe}
}

type observedFS struct {
	FS
	observe SyncObserver
}

func (o *observedFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &observedFile{File: f, observe: o.observe}, nil
}

func (o *observedFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return o.wrap(o.FS.OpenFile(name, flag, perm))
}

func (o *observedFS) Create(name string) (File, error) { return o.wrap(o.FS.Create(name)) }

func (o *observedFS) Open(name string) (File, error) { return o.wrap(o.FS.Open(name)) }

func (o *observedFS) SyncDir(name string) error {
	start := time.Now()
	err := o.FS.SyncDir(name)
	o.observe(SyncDir, time.Since(start))
	return err
}

type observedFile struct {
	File
	observe SyncObserver
}

func (f *observedFile) Sync() error {
	start := time.Now()
	err := f.File.Sync()
	f.observe(SyncFile, time.Since(start))
	return err
}

// Map maps through the inner file, so an mmap-able file stays mmapped.
func (f *observedFile) Map(length int, writable bool) (Mapping, error) {
	m, err := Map(f.File, length, writable)
	if err != nil {
		return nil, err
	}
	return &observedMapping{Mapping: m, observe: f.observe}, nil
}

// errNoSyscallConn makes a sender fall back to Fd, as it would for a file
// without SyscallConn.
var errNoSyscallConn = errors.New("vfs: file has no SyscallConn")

// SyscallConn lends the inner file's descriptor safely against a concurrent
// Close, when the inner file can (as *os.File can).
func (f *observedFile) SyscallConn() (syscall.RawConn, error) {
	if c, ok := f.File.(interface {
		SyscallConn() (syscall.RawConn, error)
	}); ok {
		return c.SyscallConn()
	}
	return nil, errNoSyscallConn
}

type observedMapping struct {
	Mapping
	observe SyncObserver
}

func (m *observedMapping) Flush() error {
	start := time.Now()
	err := m.Mapping.Flush()
	m.observe(SyncMapping, time.Since(start))
	return err
}
