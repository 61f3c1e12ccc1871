package log

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// copyDir copies the regular files of src into a new dir.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func segmentFiles(t testing.TB, dir, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// checkLog verifies every batch reads back whole and valid, offsets are
// contiguous from the log start, and every offset can be located.
func checkLog(t testing.TB, l *Log) []record.Header {
	t.Helper()
	hs := readAll(t, l, l.LogStartOffset())
	next := l.LogStartOffset()
	for _, h := range hs {
		if h.LastOffset() < next {
			t.Fatalf("batch %d..%d goes backwards (next %d)", h.BaseOffset, h.LastOffset(), next)
		}
		next = h.LastOffset() + 1
	}
	if len(hs) > 0 && next != l.LogEndOffset() {
		t.Fatalf("last batch ends at %d, LEO %d", next, l.LogEndOffset())
	}
	for _, h := range hs {
		r, err := l.Read(h.LastOffset(), 1, l.LogEndOffset(), true)
		if err != nil || r.FirstOffset != h.BaseOffset {
			t.Fatalf("Read(%d) first offset %d, want %d (%v)", h.LastOffset(), r.FirstOffset, h.BaseOffset, err)
		}
	}
	return hs
}

// writeTestLog writes batches into a fresh log and closes it.
func writeTestLog(t testing.TB, dir string, cfg Config, batches int) {
	t.Helper()
	clock := newTestClock()
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{Clock: clock.Now})
	for i := 0; i < batches; i++ {
		mustAppend(t, l, makeBatch(1+i%4, 40+i%50, clock.Now().UnixMilli()+int64(i)), int32(i/10))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCrashAtEveryByteOfLastBatch cuts the last segment at every byte of its
// last batch and checks recovery keeps exactly the whole batches before it.
func TestCrashAtEveryByteOfLastBatch(t *testing.T) {
	base := filepath.Join(t.TempDir(), "orig", "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 4 << 10
	writeTestLog(t, base, cfg, 120)
	logs := segmentFiles(t, base, logFileSuffix)
	if len(logs) < 3 {
		t.Fatalf("want several segments, got %d", len(logs))
	}
	last := logs[len(logs)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	// Find the start of the last batch.
	var lastStart int
	var lastHeader record.Header
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err != nil {
			t.Fatal(err)
		}
		lastStart, lastHeader = pos, h
		pos += h.Size()
	}
	lastBase := lastBaseOffset(t, last)
	dir := filepath.Join(t.TempDir(), "work", "t-0")
	copyDir(t, base, dir)
	for cut := lastStart; cut < len(data); cut++ {
		// Restore the files recovery may change, cutting the last segment.
		restoreFiles(t, base, dir)
		if err := os.Truncate(filepath.Join(dir, filepath.Base(last)), int64(cut)); err != nil {
			t.Fatal(err)
		}
		// A crash leaves the active index preallocated with zeros.
		idx := filepath.Join(dir, filepath.Base(last[:len(last)-len(logFileSuffix)])+indexFileSuffix)
		if err := os.Truncate(idx, 4<<10); err != nil {
			t.Fatal(err)
		}
		l := openLog(t, vfs.Default, dir, cfg, OpenOptions{RecoveryPoint: lastBase})
		if l.LogEndOffset() != lastHeader.BaseOffset {
			t.Fatalf("cut at %d: LEO %d, want %d", cut, l.LogEndOffset(), lastHeader.BaseOffset)
		}
		if cut == lastStart || cut == len(data)-1 {
			checkLog(t, l)
		}
		// The same epoch as the cut batch: no checkpoint write (and fsync) per cut.
		r := mustAppend(t, l, makeBatch(2, 10, 0), lastHeader.PartitionLeaderEpoch)
		if r.BaseOffset != lastHeader.BaseOffset {
			t.Fatalf("cut at %d: append at %d, want %d", cut, r.BaseOffset, lastHeader.BaseOffset)
		}
		if e, _ := l.LatestEpoch(); e != lastHeader.PartitionLeaderEpoch {
			t.Fatalf("latest epoch %d", e)
		}
		checkLogFrom(t, l, lastBase)
		l.Close()
	}
}

func lastBaseOffset(t testing.TB, path string) int64 {
	base, _, ok := parseSegmentFileName(filepath.Base(path))
	if !ok {
		t.Fatalf("bad segment name %s", path)
	}
	return base
}

// restoreFiles makes dst hold exactly src's files again, rewriting only those
// whose size or content changed.
func restoreFiles(t testing.TB, src, dst string) {
	t.Helper()
	want := map[string][]byte{}
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want[e.Name()] = b
	}
	got, _ := os.ReadDir(dst)
	for _, e := range got {
		b, ok := want[e.Name()]
		if !ok {
			os.Remove(filepath.Join(dst, e.Name()))
			continue
		}
		cur, err := os.ReadFile(filepath.Join(dst, e.Name()))
		if err == nil && string(cur) == string(b) {
			delete(want, e.Name())
		}
	}
	for name, b := range want {
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLogFrom verifies the batches from offset on.
func checkLogFrom(t testing.TB, l *Log, from int64) {
	t.Helper()
	next := from
	for _, h := range readAll(t, l, from) {
		if h.LastOffset() < next {
			t.Fatalf("batch %d..%d goes backwards", h.BaseOffset, h.LastOffset())
		}
		next = h.LastOffset() + 1
	}
	if next != l.LogEndOffset() {
		t.Fatalf("batches end at %d, LEO %d", next, l.LogEndOffset())
	}
}

// TestRecoveryCorruptMiddleSegment: corruption in a closed segment cuts the
// log there and drops later segments.
func TestRecoveryCorruptMiddleSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 4 << 10
	writeTestLog(t, dir, cfg, 120)
	logs := segmentFiles(t, dir, logFileSuffix)
	victim := logs[1]
	data, _ := os.ReadFile(victim)
	h, _ := record.ParseHeader(data)
	second := h.Size()
	data[second+100] ^= 0xff // inside the second batch's records
	os.WriteFile(victim, data, 0o644)
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{})
	defer l.Close()
	if l.NumSegments() != 2 {
		t.Fatalf("segments %d, want 2", l.NumSegments())
	}
	if l.LogEndOffset() != h.LastOffset()+1 {
		t.Fatalf("LEO %d, want %d", l.LogEndOffset(), h.LastOffset()+1)
	}
	checkLog(t, l)
	if got := segmentFiles(t, dir, logFileSuffix); len(got) != 2 {
		t.Fatalf("files left: %v", got)
	}
}

// TestCleanShutdownOpensNoClosedSegment: after a clean shutdown, Open must
// not touch closed segments' files; their indexes open on first read.
func TestCleanShutdownOpensNoClosedSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 4 << 10
	writeTestLog(t, dir, cfg, 120)
	logs := segmentFiles(t, dir, logFileSuffix)
	first := filepath.Base(logs[0])
	firstBase := first[:20]
	ffs := vfs.NewFaultFS(vfs.Default)
	ffs.Inject(vfs.Fault{Ops: vfs.OpOpen | vfs.OpRead | vfs.OpStat, PathContains: firstBase, Err: vfs.ErrIO})
	l := openLog(t, ffs, dir, cfg, OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	if ffs.Injected() != 0 {
		t.Fatalf("Open touched the first segment %d times", ffs.Injected())
	}
	if _, err := l.Read(0, 100, l.LogEndOffset(), true); !errors.Is(err, ErrStorage) {
		t.Fatalf("read of faulty segment: %v", err)
	}
	ffs.Clear()
	checkLog(t, l)
}

// TestMissingAndCorruptIndexRebuilt: a closed segment's missing or garbage
// index is rebuilt on first use.
func TestMissingAndCorruptIndexRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 4 << 10
	writeTestLog(t, dir, cfg, 120)
	indexes := segmentFiles(t, dir, indexFileSuffix)
	want, _ := os.ReadFile(indexes[0])
	if len(want) == 0 {
		t.Fatal("expected index entries")
	}
	os.Remove(indexes[0])
	os.WriteFile(indexes[1], []byte("garbage!garbage!"), 0o644)
	tindexes := segmentFiles(t, dir, timeIndexFileSuffix)
	os.WriteFile(tindexes[2], []byte("not a multiple"), 0o644)
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{HadCleanShutdown: true})
	checkLog(t, l)
	l.Close()
	got, _ := os.ReadFile(indexes[0])
	if string(got) != string(want) {
		t.Fatalf("rebuilt index differs: %x vs %x", got, want)
	}
}

// TestRecoveryRemovesLeftovers: *.deleted, *.tmp and orphan indexes go.
func TestRecoveryRemovesLeftovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	writeTestLog(t, dir, smallConfig(), 10)
	for _, name := range []string{"00000000000000000500.log.deleted", "leader-epoch-checkpoint.tmp", "00000000000000000900.index"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	l := openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	for _, name := range []string{"00000000000000000500.log.deleted", "leader-epoch-checkpoint.tmp", "00000000000000000900.index"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s still there", name)
		}
	}
}

// TestCorruptEpochCheckpointRebuilt: an unreadable leader-epoch-checkpoint is
// rebuilt from the batches.
func TestCorruptEpochCheckpointRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	writeTestLog(t, dir, smallConfig(), 35)
	os.WriteFile(filepath.Join(dir, LeaderEpochCheckpointFile), []byte("0\n7\nnonsense\n"), 0o644)
	l := openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	entries := l.EpochCache().Entries()
	if len(entries) != 4 || entries[3].Epoch != 3 {
		t.Fatalf("rebuilt epochs %v", entries)
	}
}

func FuzzRecover(f *testing.F) {
	// In memory: each case starts from a fresh copy of the template log.
	template := vfs.NewMem()
	const dir = "/data/t-0"
	cfg := smallConfig()
	cfg.SegmentBytes = 2 << 10
	writeTestLogFS(f, template, dir, cfg, 40)
	files := readFiles(f, template, dir)
	var logs []string
	for name := range files {
		if filepath.Ext(name) == logFileSuffix {
			logs = append(logs, name)
		}
	}
	sort.Strings(logs)
	f.Add(uint8(0), uint32(0), []byte{0xff}, false)
	f.Add(uint8(1), uint32(8), []byte{0x7f, 0xff, 0xff, 0xff}, false)
	f.Add(uint8(2), uint32(100), []byte{}, true)
	f.Add(uint8(0), uint32(16), []byte{3}, false)
	f.Add(uint8(1), uint32(23), []byte{0x80, 0, 0, 0}, false)
	f.Fuzz(func(t *testing.T, segment uint8, pos uint32, patch []byte, truncate bool) {
		fsys := vfs.NewMem()
		fsys.MkdirAll(dir, 0o755)
		victim := logs[int(segment)%len(logs)]
		for name, b := range files {
			data := append([]byte(nil), b...)
			if name == victim {
				p := int(pos % uint32(len(data)+1))
				if truncate {
					data = data[:p]
				} else {
					for i, c := range patch {
						if p+i < len(data) {
							data[p+i] = c
						} else {
							data = append(data, c)
						}
					}
				}
			}
			w, _ := fsys.Create(dir + "/" + name)
			w.Write(data)
			w.Close()
		}
		l, err := Open(fsys, dir, cfg, OpenOptions{Logger: quietLogger})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer l.Close()
		checkLog(t, l)
		leo := l.LogEndOffset()
		r := mustAppend(t, l, makeBatch(1, 5, 0), 100)
		if r.BaseOffset != leo {
			t.Fatalf("append at %d, LEO was %d", r.BaseOffset, leo)
		}
	})
}

// writeTestLogFS is writeTestLog on any filesystem.
func writeTestLogFS(t testing.TB, fsys vfs.FS, dir string, cfg Config, batches int) {
	t.Helper()
	clock := newTestClock()
	l := openLog(t, fsys, dir, cfg, OpenOptions{Clock: clock.Now})
	for i := 0; i < batches; i++ {
		mustAppend(t, l, makeBatch(1+i%4, 40+i%50, clock.Now().UnixMilli()+int64(i)), int32(i/10))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// readFiles returns the contents of every file in dir.
func readFiles(t testing.TB, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		f, err := fsys.Open(dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		info, _ := f.Stat()
		b := make([]byte, info.Size())
		f.ReadAt(b, 0)
		f.Close()
		out[e.Name()] = b
	}
	return out
}
