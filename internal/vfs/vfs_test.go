package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestDefaultFileOps(t *testing.T) { testFileOps(t, Default, t.TempDir()) }

func TestMemFileOps(t *testing.T) {
	mem := NewMem()
	if err := mem.MkdirAll("/data/x", 0o755); err != nil {
		t.Fatal(err)
	}
	testFileOps(t, mem, "/data/x")
	// Directory renames move their contents.
	f, _ := mem.Create("/data/x/f")
	f.Write([]byte("abc"))
	f.Close()
	if err := mem.Rename("/data/x", "/data/y"); err != nil {
		t.Fatal(err)
	}
	if st, err := mem.Stat("/data/y/f"); err != nil || st.Size() != 3 {
		t.Fatalf("renamed dir content: %v", err)
	}
	if err := mem.Remove("/data/y"); err == nil {
		t.Fatal("removed a non-empty dir")
	}
	if err := mem.RemoveAll("/data"); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("/data/y/f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
}

func testFileOps(t *testing.T, fsys FS, dir string) {
	Default := fsys
	path := filepath.Join(dir, "a")
	f, err := Default.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("J"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Allocate(5, 1000); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Stat(); st.Size() != 1005 {
		t.Fatalf("size after Allocate %d", st.Size())
	}
	if err := f.Truncate(5); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "Jello" {
		t.Fatalf("read %q %v", buf, err)
	}
	if f.Name() != path {
		t.Fatalf("name %s", f.Name())
	}
	f.Close()
	if err := Default.Rename(path, path+"2"); err != nil {
		t.Fatal(err)
	}
	if err := Default.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := Default.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "a2" {
		t.Fatalf("ReadDir %v %v", entries, err)
	}
	if err := Default.Truncate(path+"2", 2); err != nil {
		t.Fatal(err)
	}
	if st, _ := Default.Stat(path + "2"); st.Size() != 2 {
		t.Fatal("FS.Truncate")
	}
	if err := Default.Remove(path + "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Open(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
}

func testMapping(t *testing.T, fsys FS) {
	dir := t.TempDir()
	fsys.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "m")
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	m, err := Map(f, 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	copy(m.Bytes()[100:], "mapped")
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, fsys, path)
	if string(got[100:106]) != "mapped" {
		t.Fatalf("flushed bytes %q", got[100:106])
	}
	copy(m.Bytes()[200:], "closed")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got = readAll(t, fsys, path)
	if string(got[200:206]) != "closed" {
		t.Fatalf("bytes after close %q", got[200:206])
	}
	if err := m.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	empty, err := Map(f, 0, false)
	if err != nil || len(empty.Bytes()) != 0 {
		t.Fatalf("empty map: %v", err)
	}
	empty.Close()
}

func TestMapMmap(t *testing.T) { testMapping(t, Default) }

func TestMapMem(t *testing.T) { testMapping(t, NewMem()) }

func TestMapFallback(t *testing.T) {
	ffs := NewFaultFS(Default)
	ffs.DisableMmap(true)
	testMapping(t, ffs)
}

func TestFaultFS(t *testing.T) {
	ffs := NewFaultFS(Default)
	dir := t.TempDir()
	ffs.Inject(Fault{Ops: OpWrite, PathContains: ".log", Err: ErrNoSpace, TornWriteBytes: 3, Skip: 1, Times: 1})
	f, err := ffs.Create(filepath.Join(dir, "x.log"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("first")); err != nil {
		t.Fatalf("skipped write failed: %v", err)
	}
	n, err := f.Write([]byte("second"))
	if n != 3 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("torn write: %d %v", n, err)
	}
	if _, err := f.Write([]byte("third")); err != nil {
		t.Fatalf("retired fault still fires: %v", err)
	}
	f.Close()
	if got, _ := os.ReadFile(filepath.Join(dir, "x.log")); string(got) != "firstsecthird" {
		t.Fatalf("content %q", got)
	}
	if ffs.Injected() != 1 {
		t.Fatalf("injected %d", ffs.Injected())
	}
	// Path filter, and every op kind.
	ffs.Inject(Fault{Ops: OpAny, PathContains: "bad", Err: ErrIO})
	if _, err := ffs.Create(filepath.Join(dir, "bad")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("create: %v", err)
	}
	for name, err := range map[string]error{
		"mkdir":   ffs.MkdirAll(filepath.Join(dir, "bad"), 0o755),
		"remove":  ffs.Remove(filepath.Join(dir, "bad")),
		"rename":  ffs.Rename(filepath.Join(dir, "bad"), filepath.Join(dir, "c")),
		"syncdir": ffs.SyncDir(filepath.Join(dir, "bad")),
	} {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ffs.Create(filepath.Join(dir, "good")); err != nil {
		t.Fatalf("unmatched path failed: %v", err)
	}
	ffs.Clear()
	if _, err := ffs.Create(filepath.Join(dir, "bad")); err != nil {
		t.Fatalf("after Clear: %v", err)
	}
}

func readAll(t *testing.T, fsys FS, path string) []byte {
	t.Helper()
	f, err := fsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}
