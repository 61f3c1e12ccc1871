package log

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

func TestOffsetIndexAppendLookupTruncate(t *testing.T) {
	dir := t.TempDir()
	x, err := openOffsetIndex(vfs.Default, filepath.Join(dir, "a.index"), 100, 80, true)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	if x.maxEntries() != 10 {
		t.Fatalf("max entries %d", x.maxEntries())
	}
	if o, p := x.lookup(500); o != 100 || p != 0 {
		t.Fatalf("empty lookup (%d, %d)", o, p)
	}
	for i := int64(0); i < 10; i++ {
		if err := x.append(100+10*i+5, 1000*i+1000); err != nil {
			t.Fatal(err)
		}
	}
	if !x.isFull() {
		t.Fatal("not full")
	}
	if err := x.append(1000, 1); err == nil {
		t.Fatal("append to full index succeeded")
	}
	for _, tc := range []struct{ target, offset, pos int64 }{
		{99, 100, 0}, {100, 100, 0}, {104, 100, 0}, {105, 105, 1000}, {114, 105, 1000}, {115, 115, 2000}, {10_000, 195, 10000},
	} {
		if o, p := x.lookup(tc.target); o != tc.offset || p != tc.pos {
			t.Errorf("lookup(%d) = (%d, %d), want (%d, %d)", tc.target, o, p, tc.offset, tc.pos)
		}
	}
	x.truncateTo(125) // entry 125 itself goes
	if x.entries.Load() != 2 {
		t.Fatalf("entries after truncateTo(125): %d", x.entries.Load())
	}
	x.truncateTo(120) // no entry at 120: keep those below
	if x.entries.Load() != 2 {
		t.Fatalf("entries after truncateTo(120): %d", x.entries.Load())
	}
	if err := x.append(100, 1); err == nil {
		t.Fatal("append of non-increasing offset succeeded")
	}
	if err := x.trimToValidSize(); err != nil {
		t.Fatal(err)
	}
	x.close()
	y, err := openOffsetIndex(vfs.Default, filepath.Join(dir, "a.index"), 100, 80, false)
	if err != nil {
		t.Fatal(err)
	}
	defer y.close()
	if y.entries.Load() != 2 {
		t.Fatalf("reopened entries %d", y.entries.Load())
	}
	if err := y.sanityCheck(5000); err != nil {
		t.Fatal(err)
	}
	if err := y.sanityCheck(1500); err == nil {
		t.Fatal("sanity check passed with position past the log")
	}
}

func TestTimeIndex(t *testing.T) {
	x, err := openTimeIndex(vfs.Default, filepath.Join(t.TempDir(), "a.timeindex"), 50, 48, true)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	for _, e := range []struct{ ts, off int64 }{{1000, 55}, {1000, 60}, {999, 61}, {2000, 70}, {3000, 80}} {
		err := x.maybeAppend(e.ts, e.off, false)
		if e.ts == 999 {
			if err == nil {
				t.Fatal("decreasing timestamp accepted")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if x.entries.Load() != 3 {
		t.Fatalf("entries %d (equal timestamps must not add)", x.entries.Load())
	}
	if !x.isFull() {
		t.Fatal("time index keeps one slot for the closing entry: expected full at 3 of 4")
	}
	if err := x.maybeAppend(4000, 90, false); err != errIndexFull {
		t.Fatalf("append to full: %v", err)
	}
	if err := x.maybeAppend(4000, 90, true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, ts, off int64 }{{999, -1, 50}, {1000, 1000, 55}, {2500, 2000, 70}, {9999, 4000, 90}} {
		if ts, off := x.lookup(tc.target); ts != tc.ts || off != tc.off {
			t.Errorf("lookup(%d) = (%d, %d), want (%d, %d)", tc.target, ts, off, tc.ts, tc.off)
		}
	}
	x.truncateTo(80)
	if ts, off := x.lastEntry(); ts != 2000 || off != 70 {
		t.Fatalf("last after truncate (%d, %d)", ts, off)
	}
}

// FuzzIndexLookup checks binary search against a linear scan.
func FuzzIndexLookup(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5}, int64(3))
	f.Add([]byte{}, int64(0))
	f.Add([]byte{0, 0, 9, 200}, int64(-5))
	// In memory: the fuzzer runs thousands of cases a second.
	mem := vfs.NewMem()
	f.Fuzz(func(t *testing.T, gaps []byte, target int64) {
		if len(gaps) > 500 {
			gaps = gaps[:500]
		}
		x, err := openOffsetIndex(mem, "/f.index", 1000, int32(8*(len(gaps)+1)), true)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			x.close()
			mem.Remove("/f.index")
		}()
		var offsets, positions []int64
		off, pos := int64(1000), int64(0)
		for _, g := range gaps {
			off += int64(g) + 1
			pos += int64(g)*7 + 1
			if err := x.append(off, pos); err != nil {
				t.Fatal(err)
			}
			offsets, positions = append(offsets, off), append(positions, pos)
		}
		target = 1000 + target%(off-1000+10)
		wantOff, wantPos := int64(1000), int64(0)
		for i := range offsets {
			if offsets[i] <= target {
				wantOff, wantPos = offsets[i], positions[i]
			}
		}
		if o, p := x.lookup(target); o != wantOff || p != wantPos {
			t.Fatalf("lookup(%d) = (%d, %d), want (%d, %d)", target, o, p, wantOff, wantPos)
		}
		// scanHint: largest slot satisfying both bounds.
		maxPos := target - 1000
		hint := int64(0)
		for i := range offsets {
			if offsets[i] < target && positions[i] <= maxPos {
				hint = positions[i]
			}
		}
		if got := x.scanHint(maxPos, target); got != hint {
			t.Fatalf("scanHint(%d, %d) = %d, want %d", maxPos, target, got, hint)
		}
		// The mapped bytes are Kafka's format.
		x.mu.RLock()
		for i := range offsets {
			e := x.mu.data[i*8:]
			if int64(binary.BigEndian.Uint32(e))+1000 != offsets[i] || int64(binary.BigEndian.Uint32(e[4:])) != positions[i] {
				t.Fatalf("entry %d bytes %x", i, e[:8])
			}
		}
		x.mu.RUnlock()
	})
}
