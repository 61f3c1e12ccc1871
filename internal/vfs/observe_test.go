package vfs

import (
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestObserveSyncs(t *testing.T) {
	var mu sync.Mutex
	seen := map[SyncKind]int{}
	fsys := ObserveSyncs(Default, func(kind SyncKind, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if took < 0 {
			t.Errorf("%v sync took %v", kind, took)
		}
		seen[kind]++
	})
	dir := t.TempDir()
	f, err := fsys.Create(filepath.Join(dir, "00000000000000000000.index"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	m, err := Map(f, 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	m.Bytes()[0] = 1
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []SyncKind{SyncFile, SyncDir, SyncMapping} {
		if seen[kind] != 1 {
			t.Errorf("%v syncs observed: %d, want 1", kind, seen[kind])
		}
	}

	// What sendfile needs still passes through.
	if f.Fd() == 0 {
		t.Error("wrapped file has no descriptor")
	}
	sc, ok := f.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		t.Fatal("wrapped file lost SyscallConn")
	}
	if _, err := sc.SyscallConn(); err != nil {
		t.Errorf("SyscallConn of an os file: %v", err)
	}
}
