package log

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestAppendReadReopen runs on the OS filesystem and in memory.
func TestAppendReadReopen(t *testing.T) {
	t.Run("os", func(t *testing.T) { testAppendReadReopen(t, vfs.Default, filepath.Join(t.TempDir(), "topic-0")) })
	t.Run("mem", func(t *testing.T) { testAppendReadReopen(t, vfs.NewMem(), "/data/topic-0") })
}

func testAppendReadReopen(t *testing.T, fsys vfs.FS, dir string) {
	clock := newTestClock()
	l := openLog(t, fsys, dir, smallConfig(), OpenOptions{Clock: clock.Now})
	var want int64
	for i := 0; i < 200; i++ {
		r := mustAppend(t, l, makeBatch(3, 100, clock.Now().UnixMilli()+int64(i)), 1)
		if r.BaseOffset != want || r.LastOffset != want+2 {
			t.Fatalf("append %d: offsets [%d, %d], want [%d, %d]", i, r.BaseOffset, r.LastOffset, want, want+2)
		}
		want += 3
	}
	if l.LogEndOffset() != 600 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	if l.NumSegments() < 3 {
		t.Fatalf("expected rolls, have %d segments", l.NumSegments())
	}
	hs := readAll(t, l, 0)
	if len(hs) != 200 {
		t.Fatalf("read %d batches", len(hs))
	}
	// A read from the middle of a batch returns that batch whole.
	r, err := l.Read(301, 1, 600, true)
	if err != nil || r.FirstOffset != 300 || len(r.Regions) != 1 {
		t.Fatalf("Read(301) = %+v, %v", r, err)
	}
	// Out of range.
	if _, err := l.Read(601, 100, 600, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read past LEO: %v", err)
	}
	if r, err := l.Read(600, 100, 600, true); err != nil || r.Bytes != 0 {
		t.Fatalf("Read at LEO: %+v %v", r, err)
	}
	// Upper bound excludes batches reaching it.
	r, err = l.Read(0, 1<<20, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.AppendTo(nil)
	hs2 := 0
	for len(b) > 0 {
		h, _ := readHeader(b)
		if h.LastOffset() >= 10 {
			t.Fatalf("batch %d..%d crosses upper bound", h.BaseOffset, h.LastOffset())
		}
		hs2++
		b = b[h.Size():]
	}
	if hs2 != 3 {
		t.Fatalf("upper bound 10: %d batches, want 3", hs2)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	for _, clean := range []bool{true, false} {
		l2 := openLog(t, fsys, dir, smallConfig(), OpenOptions{Clock: clock.Now, HadCleanShutdown: clean})
		if l2.LogEndOffset() != 600 {
			t.Fatalf("clean=%v: reopened LEO %d", clean, l2.LogEndOffset())
		}
		if got := len(readAll(t, l2, 0)); got != 200 {
			t.Fatalf("clean=%v: reopened read %d batches", clean, got)
		}
		r := mustAppend(t, l2, makeBatch(1, 10, clock.Now().UnixMilli()), 2)
		if r.BaseOffset != 600 {
			t.Fatalf("append after reopen at %d", r.BaseOffset)
		}
		if err := l2.TruncateTo(600); err != nil {
			t.Fatal(err)
		}
		if e, _ := l2.LatestEpoch(); e != 1 {
			t.Fatalf("latest epoch after truncation %d", e)
		}
		l2.Close()
	}
}
