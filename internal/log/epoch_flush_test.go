package log

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestNewEpochAppendTouchesNoCheckpoint: the first append of a new leader
// epoch changes the epoch cache in memory only (no file operation on
// leader-epoch-checkpoint in the produce path, KAFKA-15046); Flush and Close
// write it.
func TestNewEpochAppendTouchesNoCheckpoint(t *testing.T) {
	ffs := vfs.NewFaultFS(vfs.Default)
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openLog(t, ffs, dir, smallConfig(), OpenOptions{})
	// Every operation on the checkpoint fails: an append that touched it
	// would fail the log.
	ffs.Inject(vfs.Fault{Ops: vfs.OpAny, PathContains: LeaderEpochCheckpointFile, Err: vfs.ErrIO})
	for epoch := int32(0); epoch < 5; epoch++ {
		mustAppend(t, l, makeBatch(2, 30, 1), epoch)
	}
	if injected := ffs.Injected(); injected != 0 {
		t.Fatalf("appends touched the checkpoint %d times", injected)
	}
	if err := l.MaybeAssignEpochStartOffset(5, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	ffs.Clear()
	want := l.EpochCache().Entries()
	if len(want) != 6 {
		t.Fatalf("entries %v", want)
	}
	if _, err := os.Stat(filepath.Join(dir, LeaderEpochCheckpointFile)); !os.IsNotExist(err) {
		t.Fatalf("checkpoint written before a flush: %v", err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	onDisk, err := openEpochCache(vfs.Default, filepath.Join(dir, LeaderEpochCheckpointFile))
	if err != nil || !equalEntries(onDisk.Entries(), want) {
		t.Fatalf("after Flush the checkpoint holds %v (%v), want %v", onDisk.Entries(), err, want)
	}

	// An epoch assigned after the last flush is written by Close, so an Open
	// after a clean shutdown (which scans nothing) still knows it.
	mustAppend(t, l, makeBatch(1, 30, 1), 6)
	want = l.EpochCache().Entries()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{HadCleanShutdown: true})
	defer l2.Close()
	if got := l2.EpochCache().Entries(); !equalEntries(got, want) {
		t.Fatalf("after a clean restart: %v, want %v", got, want)
	}
}

// TestCrashWithStaleEpochCheckpoint: a crash after appends whose epochs were
// never checkpointed loses no epoch. The checkpoint holds every epoch below
// the recovery point (flushTo writes it before moving the recovery point);
// recovery re-derives the rest from the batches it re-scans from the
// recovery point. Entries beyond the recovered log end are truncated.
func TestCrashWithStaleEpochCheckpoint(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 4 << 10 // several rolls, each flushing in the background
	dir := filepath.Join(t.TempDir(), "orig", "t-0")
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{})
	for i := 0; i < 120; i++ {
		mustAppend(t, l, makeBatch(1+i%3, 40, 1), int32(i/10))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	flushedEntries := l.EpochCache().Entries()
	flushedEnd := l.LogEndOffset()
	// More epochs, never flushed: the checkpoint on disk is now stale. (A
	// fresh segment, so that no roll flushes them.)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	for epoch := int32(20); epoch < 23; epoch++ {
		mustAppend(t, l, makeBatch(2, 40, 1), epoch)
	}
	want := l.EpochCache().Entries()
	// A crash now: copy the files as they are (the page cache survives a
	// process crash), with the recovery point the log would have checkpointed.
	l.background.Wait()
	recoveryPoint := l.RecoveryPoint()
	crashed := filepath.Join(t.TempDir(), "crashed", "t-0")
	copyDir(t, dir, crashed)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The roll's background flush may have checkpointed the new epochs
	// already; a crash before it did leaves the checkpoint of the explicit
	// Flush, so the crashed copy gets that one.
	stale, err := openEpochCache(vfs.Default, filepath.Join(crashed, LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Clear(); err != nil {
		t.Fatal(err)
	}
	for _, e := range flushedEntries {
		if err := stale.Assign(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	if err := stale.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(stale.Entries()) >= len(want) {
		t.Fatalf("test setup: checkpoint %v is not stale (want %v)", stale.Entries(), want)
	}
	recovered := openLog(t, vfs.Default, crashed, cfg, OpenOptions{RecoveryPoint: recoveryPoint})
	if got := recovered.EpochCache().Entries(); !equalEntries(got, want) {
		t.Fatalf("recovered epochs %v, want %v", got, want)
	}
	recovered.Close()

	// A crash that loses the unflushed tail while a later checkpoint
	// survives (the checkpoint's entries reach past the recovered log end):
	// cut the data back to what was flushed.
	lost := filepath.Join(t.TempDir(), "lost", "t-0")
	copyDir(t, dir, lost)
	cutAfter(t, lost, flushedEnd)
	truncated := openLog(t, vfs.Default, lost, cfg, OpenOptions{RecoveryPoint: flushedEnd})
	defer truncated.Close()
	if truncated.LogEndOffset() != flushedEnd {
		t.Fatalf("recovered log end %d, want %d", truncated.LogEndOffset(), flushedEnd)
	}
	if got := truncated.EpochCache().Entries(); !equalEntries(got, flushedEntries) {
		t.Fatalf("epochs after losing the tail %v, want %v", got, flushedEntries)
	}
}

// cutAfter removes every batch at or above offset from the log in dir,
// as a crash that lost unflushed data would.
func cutAfter(t *testing.T, dir string, offset int64) {
	t.Helper()
	for _, path := range segmentFiles(t, dir, logFileSuffix) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		keep := 0
		for keep < len(data) {
			h, err := readHeader(data[keep:])
			if err != nil {
				t.Fatal(err)
			}
			if h.BaseOffset >= offset {
				break
			}
			keep += h.Size()
		}
		if keep == 0 && lastBaseOffset(t, path) >= offset {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Truncate(path, int64(keep)); err != nil {
			t.Fatal(err)
		}
	}
}
