// Package vfs is the single seam through which Samsa's storage touches the
// filesystem. Production code uses Default (the operating system); tests wrap
// it in a FaultFS to inject ENOSPC, EIO and torn writes on chosen operations
// and paths.
//
// The package imports nothing internal.
//
// Conventions:
//   - File.Sync is fdatasync(2): file data and the metadata needed to read it
//     back (its size), not timestamps.
//   - FS.SyncDir fsyncs a directory so that creations, renames and removals of
//     its entries survive a crash.
//   - Memory mapping goes through Map, which uses mmap(2) when the File can be
//     mapped (it implements Mapper) and otherwise falls back to a heap copy that
//     is written back on Flush.
package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// File is an open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	io.Closer
	// Sync flushes the file's data to stable storage (fdatasync).
	Sync() error
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Allocate reserves disk blocks for [offset, offset+length) so later
	// writes there cannot fail for lack of space. Where the filesystem cannot
	// reserve blocks it extends the file instead, as Truncate would.
	Allocate(offset, length int64) error
	Stat() (fs.FileInfo, error)
	// Fd is the operating-system descriptor, for sendfile(2); 0 when the file
	// has none.
	Fd() uintptr
	Name() string
}

// FS is a filesystem.
type FS interface {
	// OpenFile opens name with os.OpenFile's flags and permissions.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Create creates or truncates name for reading and writing.
	Create(name string) (File, error)
	// Open opens name read-only.
	Open(name string) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldName, newName string) error
	MkdirAll(name string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the directory's entries durable.
	SyncDir(name string) error
	Truncate(name string, size int64) error
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &osFile{File: f}, nil
}

func (o osFS) Create(name string) (File, error) {
	return o.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (o osFS) Open(name string) (File, error) { return o.OpenFile(name, os.O_RDONLY, 0) }

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) Rename(oldName, newName string) error         { return os.Rename(oldName, newName) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) Truncate(name string, size int64) error       { return os.Truncate(name, size) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if closeErr := d.Close(); err == nil {
		err = closeErr
	}
	return err
}

type osFile struct {
	*os.File
}

func (f *osFile) Sync() error {
	for {
		err := unix.Fdatasync(int(f.File.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

func (f *osFile) Allocate(offset, length int64) error {
	if length <= 0 {
		return nil
	}
	err := unix.Fallocate(int(f.File.Fd()), 0, offset, length)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		// The filesystem cannot reserve blocks: extend the file sparsely.
		st, statErr := f.File.Stat()
		if statErr != nil {
			return statErr
		}
		if st.Size() < offset+length {
			return f.File.Truncate(offset + length)
		}
		return nil
	}
	return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: err}
}

// Map memory-maps the first length bytes of the file (see Mapper).
func (f *osFile) Map(length int, writable bool) (Mapping, error) {
	return mmapFile(f, length, writable)
}
