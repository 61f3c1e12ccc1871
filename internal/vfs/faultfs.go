package vfs

import (
	"io/fs"
	"strings"
	"sync"
	"syscall"
)

// Op names a filesystem operation a Fault can match. Ops are bits, so one
// Fault can match several.
type Op uint32

const (
	OpOpen     Op = 1 << iota // OpenFile, Create, Open
	OpRead                    // File.ReadAt
	OpWrite                   // File.Write, File.WriteAt
	OpSync                    // File.Sync
	OpTruncate                // File.Truncate, FS.Truncate
	OpAllocate                // File.Allocate
	OpMap                     // Map
	OpClose                   // File.Close
	OpRemove                  // Remove, RemoveAll
	OpRename                  // Rename
	OpMkdir                   // MkdirAll
	OpReadDir                 // ReadDir
	OpStat                    // Stat, File.Stat
	OpSyncDir                 // SyncDir

	// OpAny matches every operation.
	OpAny Op = 1<<iota - 1
)

// Common errors, for injection and for the in-memory filesystem.
var (
	ErrNoSpace  = syscall.ENOSPC
	ErrIO       = syscall.EIO
	ErrIsDir    = syscall.EISDIR
	ErrNotEmpty = syscall.ENOTEMPTY
	ErrNotDir   = syscall.ENOTDIR
)

// Fault describes an error to inject.
type Fault struct {
	// Ops selects the operations the fault applies to.
	Ops Op
	// PathContains restricts the fault to paths containing this string; empty
	// matches every path.
	PathContains string
	// Err is returned by a matching operation (wrapped in a *fs.PathError).
	Err error
	// TornWriteBytes, for writes, is how many bytes of the write still reach
	// the inner file before Err is returned; 0 writes nothing.
	TornWriteBytes int
	// Skip lets the first Skip matching operations through untouched.
	Skip int
	// Times is how many times the fault fires before it retires; 0 means
	// forever.
	Times int
}

// FaultFS wraps an FS and injects Faults. It is safe for concurrent use.
type FaultFS struct {
	inner FS

	mu struct {
		sync.Mutex
		faults []*activeFault
		// disableMap makes Map fall back to a heap copy.
		disableMap bool
		injected   int
	}
}

type activeFault struct {
	Fault
	seen  int
	fired int
}

// NewFaultFS wraps inner. With no faults injected it behaves exactly as inner.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{inner: inner} }

// Inject adds a fault.
func (f *FaultFS) Inject(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.faults = append(f.mu.faults, &activeFault{Fault: fault})
}

// Clear removes every fault.
func (f *FaultFS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.faults = nil
}

// Injected is how many operations have failed by injection so far.
func (f *FaultFS) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.injected
}

// DisableMmap makes Map on this filesystem's files use the heap fallback.
func (f *FaultFS) DisableMmap(disable bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.disableMap = disable
}

// check returns the fault that fires for op on path, if any.
func (f *FaultFS) check(op Op, path string) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.mu.faults {
		if a.Ops&op == 0 || (a.PathContains != "" && !strings.Contains(path, a.PathContains)) {
			continue
		}
		if a.Times > 0 && a.fired >= a.Times {
			continue
		}
		a.seen++
		if a.seen <= a.Skip {
			continue
		}
		a.fired++
		f.mu.injected++
		fault := a.Fault
		return &fault
	}
	return nil
}

func opName(op Op) string {
	switch op {
	case OpOpen:
		return "open"
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpSync:
		return "sync"
	case OpTruncate:
		return "truncate"
	case OpAllocate:
		return "allocate"
	case OpMap:
		return "mmap"
	case OpClose:
		return "close"
	case OpRemove:
		return "remove"
	case OpRename:
		return "rename"
	case OpMkdir:
		return "mkdir"
	case OpReadDir:
		return "readdir"
	case OpStat:
		return "stat"
	case OpSyncDir:
		return "syncdir"
	}
	return "op"
}

func (f *FaultFS) fail(op Op, path string) error {
	if fault := f.check(op, path); fault != nil {
		return &fs.PathError{Op: opName(op) + " (injected)", Path: path, Err: fault.Err}
	}
	return nil
}

func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if err := f.fail(OpOpen, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner, name: name}, nil
}

func (f *FaultFS) Create(name string) (File, error) {
	if err := f.fail(OpOpen, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner, name: name}, nil
}

func (f *FaultFS) Open(name string) (File, error) {
	if err := f.fail(OpOpen, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner, name: name}, nil
}

func (f *FaultFS) Remove(name string) error {
	if err := f.fail(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

func (f *FaultFS) RemoveAll(name string) error {
	if err := f.fail(OpRemove, name); err != nil {
		return err
	}
	return f.inner.RemoveAll(name)
}

func (f *FaultFS) Rename(oldName, newName string) error {
	if err := f.fail(OpRename, oldName); err != nil {
		return err
	}
	return f.inner.Rename(oldName, newName)
}

func (f *FaultFS) MkdirAll(name string, perm fs.FileMode) error {
	if err := f.fail(OpMkdir, name); err != nil {
		return err
	}
	return f.inner.MkdirAll(name, perm)
}

func (f *FaultFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.fail(OpReadDir, name); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(name)
}

func (f *FaultFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.fail(OpStat, name); err != nil {
		return nil, err
	}
	return f.inner.Stat(name)
}

func (f *FaultFS) SyncDir(name string) error {
	if err := f.fail(OpSyncDir, name); err != nil {
		return err
	}
	return f.inner.SyncDir(name)
}

func (f *FaultFS) Truncate(name string, size int64) error {
	if err := f.fail(OpTruncate, name); err != nil {
		return err
	}
	return f.inner.Truncate(name, size)
}

type faultFile struct {
	fs    *FaultFS
	inner File
	name  string
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

// tornWrite writes the first TornWriteBytes of p through write, then fails.
func (f *faultFile) tornWrite(fault *Fault, p []byte, write func([]byte) (int, error)) (int, error) {
	n := 0
	if keep := min(fault.TornWriteBytes, len(p)); keep > 0 {
		var err error
		if n, err = write(p[:keep]); err != nil {
			return n, err
		}
	}
	return n, &fs.PathError{Op: "write (injected)", Path: f.name, Err: fault.Err}
}

func (f *faultFile) Write(p []byte) (int, error) {
	if fault := f.fs.check(OpWrite, f.name); fault != nil {
		return f.tornWrite(fault, p, f.inner.Write)
	}
	return f.inner.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if fault := f.fs.check(OpWrite, f.name); fault != nil {
		return f.tornWrite(fault, p, func(b []byte) (int, error) { return f.inner.WriteAt(b, off) })
	}
	return f.inner.WriteAt(p, off)
}

func (f *faultFile) Close() error {
	err := f.fs.fail(OpClose, f.name)
	// The descriptor is released either way, as close(2) does.
	if closeErr := f.inner.Close(); err == nil {
		err = closeErr
	}
	return err
}

func (f *faultFile) Sync() error {
	if err := f.fs.fail(OpSync, f.name); err != nil {
		return err
	}
	return f.inner.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.fail(OpTruncate, f.name); err != nil {
		return err
	}
	return f.inner.Truncate(size)
}

func (f *faultFile) Allocate(offset, length int64) error {
	if err := f.fs.fail(OpAllocate, f.name); err != nil {
		return err
	}
	return f.inner.Allocate(offset, length)
}

func (f *faultFile) Stat() (fs.FileInfo, error) {
	if err := f.fs.fail(OpStat, f.name); err != nil {
		return nil, err
	}
	return f.inner.Stat()
}

func (f *faultFile) Fd() uintptr  { return f.inner.Fd() }
func (f *faultFile) Name() string { return f.name }

// Map maps through the inner file, so index writes bypass write faults just
// as stores to a real mapping bypass write(2).
func (f *faultFile) Map(length int, writable bool) (Mapping, error) {
	if err := f.fs.fail(OpMap, f.name); err != nil {
		return nil, err
	}
	f.fs.mu.Lock()
	disabled := f.fs.mu.disableMap
	f.fs.mu.Unlock()
	if disabled {
		return copyMap(f, length, writable)
	}
	return Map(f.inner, length, writable)
}
