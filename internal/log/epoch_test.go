package log

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

func newEpochCache(t *testing.T) *EpochCache {
	t.Helper()
	c, err := openEpochCache(vfs.Default, filepath.Join(t.TempDir(), LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEpochCacheAssign(t *testing.T) {
	c := newEpochCache(t)
	for _, e := range []EpochEntry{{2, 6}, {3, 8}, {3, 9} /* later start: ignored */, {5, 12}} {
		if err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	want := []EpochEntry{{2, 6}, {3, 8}, {5, 12}}
	if got := c.Entries(); !equalEntries(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	// A new entry removes those it contradicts.
	c.Assign(4, 10)
	if got := c.Entries(); !equalEntries(got, []EpochEntry{{2, 6}, {3, 8}, {4, 10}}) {
		t.Fatalf("after (4,10): %v", got)
	}
	c.Assign(6, 7)
	if got := c.Entries(); !equalEntries(got, []EpochEntry{{2, 6}, {6, 7}}) {
		t.Fatalf("after (6,7): %v", got)
	}
	if err := c.Assign(-1, 5); err == nil {
		t.Fatal("negative epoch accepted")
	}
	// Assign changes memory only; Flush persists, and the file reads back.
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	d, err := openEpochCache(vfs.Default, c.path)
	if err != nil || !equalEntries(d.Entries(), c.Entries()) {
		t.Fatalf("reloaded %v %v", d.Entries(), err)
	}
}

func equalEntries(a, b []EpochEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEpochCacheEndOffsetFor follows Kafka's LeaderEpochFileCacheTest cases.
func TestEpochCacheEndOffsetFor(t *testing.T) {
	c := newEpochCache(t)
	if e, o := c.EndOffsetFor(0, 0); e != UndefinedEpoch || o != UndefinedEpochOffset {
		t.Fatalf("empty: (%d, %d)", e, o)
	}
	c.Assign(2, 6)
	c.Assign(3, 8)
	c.Assign(5, 12)
	for _, tc := range []struct {
		requested, epoch int32
		offset           int64
	}{
		{UndefinedEpoch, UndefinedEpoch, UndefinedEpochOffset},
		{5, 5, 20}, // latest: the log end offset
		{3, 3, 12}, // next epoch's start
		{4, 3, 12}, // unknown epoch between: previous epoch, next start
		{2, 2, 8},  // first
		{1, 1, 6},  // before the first: requested epoch, first start
		{6, UndefinedEpoch, UndefinedEpochOffset}, // newer than any
	} {
		e, o := c.EndOffsetFor(tc.requested, 20)
		if e != tc.epoch || o != tc.offset {
			t.Errorf("EndOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.requested, e, o, tc.epoch, tc.offset)
		}
	}
	if e, ok := c.EpochForOffset(9); !ok || e != 3 {
		t.Errorf("EpochForOffset(9) = %d %v", e, ok)
	}
	if _, ok := c.EpochForOffset(5); ok {
		t.Error("EpochForOffset(5) found")
	}
}

func TestEpochCacheTruncate(t *testing.T) {
	c := newEpochCache(t)
	c.Assign(2, 6)
	c.Assign(3, 8)
	c.Assign(5, 12)
	c.TruncateFromEnd(9)
	if got := c.Entries(); !equalEntries(got, []EpochEntry{{2, 6}, {3, 8}}) {
		t.Fatalf("from end 9: %v", got)
	}
	c.TruncateFromEnd(8)
	if got := c.Entries(); !equalEntries(got, []EpochEntry{{2, 6}}) {
		t.Fatalf("from end 8: %v", got)
	}
	c.Assign(3, 8)
	c.Assign(5, 12)
	c.TruncateFromStart(9)
	if got := c.Entries(); !equalEntries(got, []EpochEntry{{3, 9}, {5, 12}}) {
		t.Fatalf("from start 9: %v", got)
	}
	c.TruncateFromStart(12)
	if got := c.Entries(); !equalEntries(got, []EpochEntry{{5, 12}}) {
		t.Fatalf("from start 12: %v", got)
	}
	c.Clear()
	if len(c.Entries()) != 0 {
		t.Fatal("not cleared")
	}
	b, _ := os.ReadFile(c.path)
	if string(b) != "0\n0\n" {
		t.Fatalf("cleared file %q", b)
	}
}

func TestLogAssignsEpochOnAppend(t *testing.T) {
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), smallConfig(), OpenOptions{})
	defer l.Close()
	mustAppend(t, l, makeBatch(3, 10, 1), 1)
	mustAppend(t, l, makeBatch(3, 10, 1), 1)
	mustAppend(t, l, makeBatch(3, 10, 1), 4)
	if got := l.EpochCache().Entries(); !equalEntries(got, []EpochEntry{{1, 0}, {4, 6}}) {
		t.Fatalf("epochs %v", got)
	}
	if e, o := l.EndOffsetForEpoch(1); e != 1 || o != 6 {
		t.Fatalf("EndOffsetForEpoch(1) = (%d, %d)", e, o)
	}
	if e, o := l.EndOffsetForEpoch(4); e != 4 || o != 9 {
		t.Fatalf("EndOffsetForEpoch(4) = (%d, %d)", e, o)
	}
	if err := l.MaybeAssignEpochStartOffset(7, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if e, _ := l.LatestEpoch(); e != 7 {
		t.Fatalf("latest %d", e)
	}
}
