package log

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestAppendFaults: ENOSPC or EIO on the segment write fails the append with
// ErrStorage, leaves the log readable up to the last good batch, and makes
// it refuse further appends. A torn write leaves nothing visible.
func TestAppendFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault vfs.Fault
		errno syscall.Errno
	}{
		{"enospc", vfs.Fault{Ops: vfs.OpWrite, PathContains: ".log", Err: vfs.ErrNoSpace}, syscall.ENOSPC},
		{"eio", vfs.Fault{Ops: vfs.OpWrite, PathContains: ".log", Err: vfs.ErrIO}, syscall.EIO},
		{"torn", vfs.Fault{Ops: vfs.OpWrite, PathContains: ".log", Err: vfs.ErrIO, TornWriteBytes: 70}, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ffs := vfs.NewFaultFS(vfs.Default)
			dir := filepath.Join(t.TempDir(), "t-0")
			l := openLog(t, ffs, dir, smallConfig(), OpenOptions{})
			for i := 0; i < 10; i++ {
				mustAppend(t, l, makeBatch(2, 50, 1), 0)
			}
			ffs.Inject(tc.fault)
			_, err := l.Append(makeBatch(2, 50, 1), 0)
			if !errors.Is(err, ErrStorage) || !errors.Is(err, tc.errno) {
				t.Fatalf("append error %v, want ErrStorage and %v", err, tc.errno)
			}
			ffs.Clear()
			if l.LogEndOffset() != 20 {
				t.Fatalf("LEO %d", l.LogEndOffset())
			}
			if hs := checkLog(t, l); len(hs) != 10 {
				t.Fatalf("read %d batches", len(hs))
			}
			if _, err := l.Append(makeBatch(1, 5, 1), 0); !errors.Is(err, ErrStorage) {
				t.Fatalf("append after failure: %v", err)
			}
			if l.Err() == nil {
				t.Fatal("Err() nil after failure")
			}
			l.Close()
			// The next start recovers to the last good batch.
			l2 := openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{})
			defer l2.Close()
			if l2.LogEndOffset() != 20 {
				t.Fatalf("recovered LEO %d", l2.LogEndOffset())
			}
			checkLog(t, l2)
		})
	}
}

// TestRollFaults: failing to create the next segment fails the append
// cleanly.
func TestRollFaults(t *testing.T) {
	ffs := vfs.NewFaultFS(vfs.Default)
	cfg := smallConfig()
	cfg.SegmentBytes = 1000
	l := openLog(t, ffs, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	mustAppend(t, l, makeBatch(1, 600, 1), 0)
	ffs.Inject(vfs.Fault{Ops: vfs.OpOpen | vfs.OpAllocate, PathContains: "00000000000000000001", Err: vfs.ErrNoSpace})
	if _, err := l.Append(makeBatch(1, 600, 1), 0); !errors.Is(err, ErrStorage) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append needing a roll: %v", err)
	}
	ffs.Clear()
	if l.LogEndOffset() != 1 || l.NumSegments() != 1 {
		t.Fatalf("LEO %d segments %d", l.LogEndOffset(), l.NumSegments())
	}
	checkLog(t, l)
}

// TestFlushFault: EIO on fsync fails Flush with ErrStorage and keeps the
// recovery point.
func TestFlushFault(t *testing.T) {
	ffs := vfs.NewFaultFS(vfs.Default)
	l := openLog(t, ffs, filepath.Join(t.TempDir(), "t-0"), smallConfig(), OpenOptions{})
	defer l.Close()
	mustAppend(t, l, makeBatch(1, 60, 1), 0)
	ffs.Inject(vfs.Fault{Ops: vfs.OpSync, Err: vfs.ErrIO})
	if err := l.Flush(); !errors.Is(err, ErrStorage) {
		t.Fatalf("flush: %v", err)
	}
	if l.RecoveryPoint() != 0 {
		t.Fatalf("recovery point moved to %d", l.RecoveryPoint())
	}
	ffs.Clear()
	if _, err := l.Append(makeBatch(1, 5, 1), 0); !errors.Is(err, ErrStorage) {
		t.Fatalf("append after fsync failure: %v", err)
	}
}

// TestCheckpointFault: a failed checkpoint write leaves the old file.
func TestCheckpointFault(t *testing.T) {
	ffs := vfs.NewFaultFS(vfs.Default)
	path := filepath.Join(t.TempDir(), RecoveryPointCheckpointFile)
	old := map[TopicPartition]int64{{"a", 0}: 5}
	if err := WriteOffsetCheckpoint(ffs, path, old); err != nil {
		t.Fatal(err)
	}
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpRename} {
		ffs.Inject(vfs.Fault{Ops: op, Err: vfs.ErrNoSpace, Times: 1})
		err := WriteOffsetCheckpoint(ffs, path, map[TopicPartition]int64{{"a", 0}: 9})
		if !errors.Is(err, ErrStorage) {
			t.Fatalf("op %v: %v", op, err)
		}
		got, err := ReadOffsetCheckpoint(vfs.Default, path)
		if err != nil || got[TopicPartition{"a", 0}] != 5 {
			t.Fatalf("op %v: checkpoint now %v %v", op, got, err)
		}
	}
}

// TestMmapFallback: indexes work when files cannot be memory-mapped.
func TestMmapFallback(t *testing.T) {
	ffs := vfs.NewFaultFS(vfs.Default)
	ffs.DisableMmap(true)
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 2000
	l := openLog(t, ffs, dir, cfg, OpenOptions{})
	for i := 0; i < 40; i++ {
		mustAppend(t, l, makeBatch(2, 60, int64(i)), 0)
	}
	checkLog(t, l)
	l.Close()
	l = openLog(t, vfs.Default, dir, cfg, OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	checkLog(t, l)
	// Batch 29 holds offsets 58 and 59 with timestamps 29 and 30: the first
	// record at or after 30 is offset 59, inside the batch, as Kafka answers.
	if off, _, _, _ := l.OffsetForTimestamp(30); off != 59 {
		t.Fatalf("time index through fallback: %d", off)
	}
}
