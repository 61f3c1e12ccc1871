package vfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// NewMem returns an empty in-memory filesystem, for fast tests. Files cannot
// be memory-mapped (Map falls back to a heap copy) and Fd returns 0. Safe for
// concurrent use.
func NewMem() FS {
	m := &memFS{}
	m.mu.root = &memNode{children: map[string]*memNode{}, modTime: time.Now()}
	return m
}

type memFS struct {
	mu struct {
		sync.Mutex
		root *memNode
	}
}

// memNode is a file (children == nil) or a directory.
type memNode struct {
	children map[string]*memNode
	data     []byte
	modTime  time.Time
}

func (n *memNode) isDir() bool { return n.children != nil }

// splitPath returns the cleaned components of name.
func splitPath(name string) []string {
	p := filepath.Clean("/" + name)
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// lookupLocked returns the node at name, or nil.
func (m *memFS) lookupLocked(name string) *memNode {
	n := m.mu.root
	for _, c := range splitPath(name) {
		if !n.isDir() {
			return nil
		}
		if n = n.children[c]; n == nil {
			return nil
		}
	}
	return n
}

// parentLocked returns the directory holding name and name's last component.
func (m *memFS) parentLocked(name string) (*memNode, string) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, ""
	}
	dir := m.lookupLocked("/" + strings.Join(parts[:len(parts)-1], "/"))
	if dir == nil || !dir.isDir() {
		return nil, ""
	}
	return dir, parts[len(parts)-1]
}

func (m *memFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookupLocked(name)
	switch {
	case n != nil && n.isDir():
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrIsDir}
	case n == nil && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case n != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case n == nil:
		dir, base := m.parentLocked(name)
		if dir == nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		n = &memNode{modTime: time.Now()}
		dir.children[base] = n
	}
	if flag&os.O_TRUNC != 0 {
		n.data = n.data[:0]
	}
	f := &memFile{fs: m, node: n, name: name, writable: flag&(os.O_WRONLY|os.O_RDWR) != 0}
	if flag&os.O_APPEND != 0 {
		f.offset = int64(len(n.data))
	}
	return f, nil
}

func (m *memFS) Create(name string) (File, error) {
	return m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (m *memFS) Open(name string) (File, error) { return m.OpenFile(name, os.O_RDONLY, 0) }

func (m *memFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base := m.parentLocked(name)
	if dir == nil || dir.children[base] == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if n := dir.children[base]; n.isDir() && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: ErrNotEmpty}
	}
	delete(dir.children, base)
	return nil
}

func (m *memFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dir, base := m.parentLocked(name); dir != nil {
		delete(dir.children, base)
	}
	return nil
}

func (m *memFS) Rename(oldName, newName string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fromDir, fromBase := m.parentLocked(oldName)
	if fromDir == nil || fromDir.children[fromBase] == nil {
		return &fs.PathError{Op: "rename", Path: oldName, Err: fs.ErrNotExist}
	}
	toDir, toBase := m.parentLocked(newName)
	if toDir == nil {
		return &fs.PathError{Op: "rename", Path: newName, Err: fs.ErrNotExist}
	}
	n := fromDir.children[fromBase]
	delete(fromDir.children, fromBase)
	toDir.children[toBase] = n
	return nil
}

func (m *memFS) MkdirAll(name string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.mu.root
	for _, c := range splitPath(name) {
		child := n.children[c]
		if child == nil {
			child = &memNode{children: map[string]*memNode{}, modTime: time.Now()}
			n.children[c] = child
		} else if !child.isDir() {
			return &fs.PathError{Op: "mkdir", Path: name, Err: ErrNotDir}
		}
		n = child
	}
	return nil
}

func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookupLocked(name)
	if n == nil || !n.isDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	names := make([]string, 0, len(n.children))
	for c := range n.children {
		names = append(names, c)
	}
	slices.Sort(names)
	out := make([]fs.DirEntry, len(names))
	for i, c := range names {
		out[i] = fs.FileInfoToDirEntry(n.children[c].info(c))
	}
	return out, nil
}

func (n *memNode) info(name string) memInfo {
	return memInfo{name: name, size: int64(len(n.data)), dir: n.isDir(), modTime: n.modTime}
}

func (m *memFS) Stat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookupLocked(name)
	if n == nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return n.info(filepath.Base(filepath.Clean("/" + name))), nil
}

func (m *memFS) SyncDir(name string) error {
	_, err := m.Stat(name)
	return err
}

func (m *memFS) Truncate(name string, size int64) error {
	f, err := m.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(size)
}

type memFile struct {
	fs       *memFS
	node     *memNode
	name     string
	writable bool
	offset   int64
	closed   bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	if !f.writable {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	if end := off + int64(len(p)); end > int64(len(f.node.data)) {
		f.node.data = append(f.node.data, make([]byte, end-int64(len(f.node.data)))...)
	}
	copy(f.node.data[off:], p)
	f.node.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.offset)
	f.offset += int64(n)
	return n, err
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	f.closed = true
	return nil
}

func (f *memFile) Sync() error { return nil }

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	if size <= int64(len(f.node.data)) {
		f.node.data = f.node.data[:size]
	} else {
		f.node.data = append(f.node.data, make([]byte, size-int64(len(f.node.data)))...)
	}
	return nil
}

func (f *memFile) Allocate(offset, length int64) error {
	f.fs.mu.Lock()
	size := int64(len(f.node.data))
	f.fs.mu.Unlock()
	if offset+length > size {
		return f.Truncate(offset + length)
	}
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return memInfo{name: filepath.Base(f.name), size: int64(len(f.node.data)), modTime: f.node.modTime}, nil
}

func (f *memFile) Fd() uintptr  { return 0 }
func (f *memFile) Name() string { return f.name }

type memInfo struct {
	name    string
	size    int64
	dir     bool
	modTime time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return i.modTime }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
