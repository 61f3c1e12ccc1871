package log

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// mutatingOps are the operations a crash test stops at: after the crash
// point none of them reaches the disk, as if the process had died there.
const mutatingOps = vfs.OpOpen | vfs.OpWrite | vfs.OpSync | vfs.OpTruncate | vfs.OpAllocate |
	vfs.OpRename | vfs.OpRemove | vfs.OpSyncDir | vfs.OpMap

// leftovers lists the temporary files of a cleaning in dir.
func leftovers(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		for _, suffix := range []string{cleanedFileSuffix, swapFileSuffix, deletedFileSuffix} {
			if strings.HasSuffix(e.Name(), suffix) {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// copyDirFS copies the files of from into a new dir to, within fsys.
func copyDirFS(t testing.TB, fsys vfs.FS, from, to string) {
	t.Helper()
	if err := fsys.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := fsys.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, err := fsys.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := src.Stat()
		data := make([]byte, st.Size())
		if _, err := src.ReadAt(data, 0); err != nil && len(data) > 0 {
			t.Fatal(err)
		}
		src.Close()
		dst, err := fsys.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Write(data); err != nil {
			t.Fatal(err)
		}
		dst.Close()
	}
}

// swapTemplate writes, in an in-memory filesystem, a compacted log of a
// few segments with many updates per key, and returns its dir and model.
func swapTemplate(t *testing.T, fsys vfs.FS, clock *testClock) (string, *model, Config) {
	dir := "/template-0"
	cfg := compactConfig()
	cfg.SegmentBytes = 1200
	l := openLog(t, fsys, dir, cfg, OpenOptions{Clock: clock.Now})
	m := newModel()
	for i := 0; i < 70; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%7), val(fmt.Sprint(i))})
		if i == 40 {
			m.appendKV(t, l, clock.Now().UnixMilli(), kv{"k3", nil})
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, m, cfg
}

// TestCleanerSwapCrash stops a cleaning pass at every filesystem change it
// makes (creating, writing, syncing, renaming and removing files) as a crash
// would, then reopens the log: it must be whole (batches readable, offsets
// increasing, indexes consistent), hold nothing that was not appended, keep
// every key's latest record, and leave no temporary file. A crash during
// that recovery is then simulated at each of its steps too.
func TestCleanerSwapCrash(t *testing.T) {
	clock := newTestClock()
	mem := vfs.NewMem()
	template, m, cfg := swapTemplate(t, mem, clock)
	completed, crashPoints := false, 0
	swapsRecovered := 0
	defer func() { t.Logf("%d crash points, %d with a swap to recover", crashPoints, swapsRecovered) }()
	for crashAt := 0; !completed; crashAt++ {
		if crashAt > 2000 {
			t.Fatal("the pass never completed")
		}
		dir := fmt.Sprintf("/t-%d", crashAt)
		copyDirFS(t, mem, template, dir)
		ffs := vfs.NewFaultFS(mem)
		l := openLog(t, ffs, dir, cfg, OpenOptions{Clock: clock.Now, HadCleanShutdown: true})
		l.UpdateHighWatermark(l.LogEndOffset())
		ffs.Inject(vfs.Fault{Ops: mutatingOps, PathContains: dir, Err: vfs.ErrIO, Skip: crashAt})
		ltc, err := newLogToClean(l, 0, clock.Now().UnixMilli(), -1)
		if err == nil {
			_, err = testCleaner(clock).clean(context.Background(), ltc.target)
		}
		completed = ffs.Injected() == 0
		crashPoints = crashAt
		if completed && err != nil {
			t.Fatalf("pass without faults failed: %v", err)
		}
		ffs.Clear()
		// The crashed process's files stay open; the new one starts over.
		swapPending := false
		for _, name := range leftovers(t, mem, dir) {
			swapPending = swapPending || strings.HasSuffix(name, swapFileSuffix)
		}
		if swapPending {
			swapsRecovered++
			// Crash the recovery too, at each step, before it finishes.
			for recoverAt := 0; ; recoverAt++ {
				rfs := vfs.NewFaultFS(mem)
				rfs.Inject(vfs.Fault{Ops: mutatingOps, PathContains: dir, Err: vfs.ErrIO, Skip: recoverAt})
				r, err := Open(rfs, dir, cfg, OpenOptions{Clock: clock.Now, Logger: quietLogger})
				if err == nil {
					r.Close()
				}
				if rfs.Injected() == 0 {
					break
				}
			}
		}
		r := openLog(t, mem, dir, cfg, OpenOptions{Clock: clock.Now})
		if left := leftovers(t, mem, dir); len(left) > 0 {
			t.Fatalf("crash at op %d: files left after recovery: %v", crashAt, left)
		}
		r.UpdateHighWatermark(r.LogEndOffset())
		checkLog(t, r)
		checkWhole(t, r, m)
		// And the recovered log cleans to the compacted state.
		stats := cleanOnce(t, testCleaner(clock), r, clock, 0)
		checkCompacted(t, r, m, stats.endOffset, false)
		r.Close()
		l.Close()
	}
}

// TestCleanerSwapAborted: a log changed under the cleaner (segments deleted
// by retention) makes the swap give up, leaving the log as it was and no
// temporary files.
func TestCleanerSwapAborted(t *testing.T) {
	clock := newTestClock()
	mem := vfs.NewMem()
	template, m, cfg := swapTemplate(t, mem, clock)
	dir := "/t-0"
	copyDirFS(t, mem, template, dir)
	l := openLog(t, mem, dir, cfg, OpenOptions{Clock: clock.Now})
	defer l.Close()
	l.UpdateHighWatermark(l.LogEndOffset())
	ltc, err := newLogToClean(l, 0, clock.Now().UnixMilli(), -1)
	if err != nil {
		t.Fatal(err)
	}
	segs := l.segmentsSnapshot()
	ltc.target.isCurrent = func() bool {
		// Retention runs while the first group is being written.
		if l.LogStartOffset() == 0 {
			if err := l.DeleteRecordsBefore(segs[1].baseOffset); err != nil {
				t.Error(err)
			}
			if _, err := l.EnforceRetention(clock.Now()); err != nil {
				t.Error(err)
			}
		}
		return true
	}
	_, err = testCleaner(clock).clean(context.Background(), ltc.target)
	if err != errCleaningAborted {
		t.Fatalf("clean after the log changed: %v, want errCleaningAborted", err)
	}
	if left := leftovers(t, mem, dir); len(left) > 0 {
		t.Fatalf("files left: %v", left)
	}
	for off := range m.records {
		if off < segs[1].baseOffset {
			delete(m.records, off)
		}
	}
	checkLog(t, l)
	checkCompacted(t, l, m, segs[1].baseOffset, false)
}
