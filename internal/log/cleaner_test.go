package log

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestCleanKeepsLatestPerKey: after a pass, every key's latest value is
// there at its original offset, older ones below the cleaned end are gone,
// the active segment is untouched, and the log reopens the same.
func TestCleanKeepsLatestPerKey(t *testing.T) {
	clock := newTestClock()
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := compactConfig()
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{Clock: clock.Now})
	m := newModel()
	for i := 0; i < 400; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%13), val(fmt.Sprintf("v%d", i))}, kv{fmt.Sprintf("k%d", (i*7)%13), val(fmt.Sprintf("w%d", i))})
	}
	sizeBefore, segsBefore, leo := l.Size(), l.NumSegments(), l.LogEndOffset()
	active := l.segmentsSnapshot()[segsBefore-1]
	stats := cleanOnce(t, testCleaner(clock), l, clock, 0)
	if stats.endOffset != active.baseOffset {
		t.Fatalf("cleaned to %d, active segment starts at %d", stats.endOffset, active.baseOffset)
	}
	if l.LogEndOffset() != leo || l.segmentsSnapshot()[l.NumSegments()-1] != active {
		t.Fatal("cleaning changed the log end or the active segment")
	}
	checkCompacted(t, l, m, stats.endOffset, false)
	if l.Size() >= sizeBefore/4 {
		t.Fatalf("size %d -> %d: not compacted", sizeBefore, l.Size())
	}
	// Groups are sized by what they held before, as in Kafka: the small
	// cleaned segments merge on the next pass.
	again := cleanOnce(t, testCleaner(clock), l, clock, 0)
	if again.endOffset != stats.endOffset || l.NumSegments() >= segsBefore/2 {
		t.Fatalf("second pass: end %d, segments %d -> %d", again.endOffset, segsBefore, l.NumSegments())
	}
	got := checkCompacted(t, l, m, stats.endOffset, false)
	checkLog(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, clean := range []bool{true, false} {
		l2 := openLog(t, vfs.Default, dir, cfg, OpenOptions{Clock: clock.Now, HadCleanShutdown: clean})
		again, _ := readRecords(t, l2)
		if len(again) != len(got) || l2.LogEndOffset() != leo {
			t.Fatalf("reopened (clean=%v): %d records LEO %d, want %d LEO %d", clean, len(again), l2.LogEndOffset(), len(got), leo)
		}
		checkLog(t, l2)
		l2.Close()
	}
}

// TestCleanWithGaps: a log whose offsets already have gaps (a follower's
// copy of a compacted log, and an earlier pass) cleans again correctly, and
// a second pass from the checkpoint only dedupes what is new.
func TestCleanWithGaps(t *testing.T) {
	clock := newTestClock()
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), compactConfig(), OpenOptions{Clock: clock.Now})
	defer l.Close()
	m := newModel()
	next := int64(0)
	for i := 0; i < 120; i++ {
		// Follower appends with holes of 0 to 4 offsets between batches.
		next += int64(i % 5)
		b := withBaseOffset(keyedBatch(t, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%9), val(fmt.Sprint(i))}), next, 0)
		if err := l.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
		m.records[next] = loggedRecord{offset: next, key: fmt.Sprintf("k%d", i%9), value: val(fmt.Sprint(i)), timestamp: clock.Now().UnixMilli()}
		next++
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	// endBefore maps each segment's base offset to the end of the segment
	// before it; a cleaned segment must end where the segments it replaced
	// did.
	endBefore := func() map[int64]int64 {
		out := map[int64]int64{}
		segs := l.segmentsSnapshot()
		for i := 0; i+1 < len(segs); i++ {
			end, err := segs[i].readNextOffset()
			if err != nil {
				t.Fatal(err)
			}
			out[segs[i+1].baseOffset] = end
		}
		return out
	}
	ends := endBefore()
	c := testCleaner(clock)
	first := cleanOnce(t, c, l, clock, 0)
	checkCompacted(t, l, m, first.endOffset, false)
	for i := 0; i < 150; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%4), val(fmt.Sprint("again", i))})
	}
	second := cleanOnce(t, c, l, clock, first.endOffset)
	if second.endOffset <= first.endOffset {
		t.Fatalf("second pass ended at %d, first at %d", second.endOffset, first.endOffset)
	}
	checkCompacted(t, l, m, second.endOffset, false)
	checkLog(t, l)
	for next, end := range endBefore() {
		if want, ok := ends[next]; ok && want != end {
			t.Fatalf("segment before %d ends at %d, before cleaning at %d", next, end, want)
		}
	}
}

// TestCleanTombstoneExpiry: a tombstone stays, stamped with a delete horizon
// of now + delete.retention.ms, until a pass after the horizon removes it;
// older values of its key go at the first pass.
func TestCleanTombstoneExpiry(t *testing.T) {
	clock := newTestClock()
	cfg := compactConfig()
	cfg.Compaction.DeleteRetentionMs = 60_000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	defer l.Close()
	m := newModel()
	for i := 0; i < 50; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{"gone", val(fmt.Sprint(i))}, kv{fmt.Sprintf("k%d", i%5), val(fmt.Sprint(i))})
	}
	tomb := m.appendKV(t, l, clock.Now().UnixMilli(), kv{"gone", nil}).BaseOffset
	fill := func() {
		for i := 0; i < 40; i++ {
			m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%5), val(fmt.Sprint("fill", i))})
		}
	}
	fill()
	c := testCleaner(clock)
	firstPassMs := clock.Now().UnixMilli()
	firstDirty := cleanOnce(t, c, l, clock, 0).endOffset
	if firstDirty <= tomb {
		t.Fatalf("tombstone at %d not cleanable (end %d)", tomb, firstDirty)
	}
	hasTombstone := func() bool {
		got, headers := readRecords(t, l)
		for _, r := range got {
			if r.key == "gone" {
				if r.offset != tomb || r.value != nil {
					t.Fatalf("older value of a deleted key left at %d", r.offset)
				}
				for _, h := range headers {
					if h.BaseOffset <= tomb && tomb <= h.LastOffset() {
						if at, ok := h.DeleteHorizonMs(); !ok || at != firstPassMs+60_000 {
							t.Fatalf("tombstone batch horizon %d set %v", at, ok)
						}
					}
				}
				return true
			}
		}
		return false
	}
	if !hasTombstone() {
		t.Fatal("tombstone removed by the first pass")
	}
	clock.Advance(30 * time.Second)
	fill()
	firstDirty = cleanOnce(t, c, l, clock, firstDirty).endOffset
	if !hasTombstone() {
		t.Fatal("tombstone removed before delete.retention.ms")
	}
	clock.Advance(31 * time.Second)
	fill()
	end := cleanOnce(t, c, l, clock, firstDirty).endOffset
	if hasTombstone() {
		t.Fatal("tombstone kept after delete.retention.ms")
	}
	checkCompacted(t, l, m, end, true)
}

// TestCleanCompactionLags: min.compaction.lag.ms keeps young segments out
// of the pass; max.compaction.lag.ms makes an old dirty log cleanable below
// min.cleanable.dirty.ratio.
func TestCleanCompactionLags(t *testing.T) {
	clock := newTestClock()
	cfg := compactConfig()
	cfg.Compaction.MinCompactionLagMs = 60_000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	defer l.Close()
	m := newModel()
	for i := 0; i < 100; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%3), val(fmt.Sprint(i))})
	}
	oldEnd := l.LogEndOffset()
	clock.Advance(2 * time.Minute)
	for i := 0; i < 100; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%3), val(fmt.Sprint("young", i))})
	}
	ltc, err := newLogToClean(l, 0, clock.Now().UnixMilli(), -1)
	if err != nil {
		t.Fatal(err)
	}
	if u := ltc.target.firstUncleanableOffset; u > oldEnd || u == 0 {
		t.Fatalf("first uncleanable offset %d; the young records start at %d", u, oldEnd)
	}
	stats := cleanOnce(t, testCleaner(clock), l, clock, 0)
	if stats.endOffset > oldEnd {
		t.Fatalf("cleaned into the young segments: end %d > %d", stats.endOffset, oldEnd)
	}
	checkCompacted(t, l, m, stats.endOffset, false)

	// Max lag: a log barely dirty is not cleanable, until its dirty data is
	// older than max.compaction.lag.ms.
	cfg = compactConfig()
	cfg.Compaction.MinCleanableDirtyRatio = 0.99
	cfg.Compaction.MaxCompactionLagMs = 3_600_000
	l2 := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-1"), cfg, OpenOptions{Clock: clock.Now})
	defer l2.Close()
	m2 := newModel()
	for i := 0; i < 300; i++ {
		m2.appendKV(t, l2, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i), val(fmt.Sprint(i))})
	}
	if l2.Config().SegmentMs != 3_600_000 {
		t.Fatalf("segment.ms %d, want capped at max.compaction.lag.ms", l2.Config().SegmentMs)
	}
	cleaned := cleanOnce(t, testCleaner(clock), l2, clock, 0).endOffset
	for i := 0; i < 40; i++ {
		m2.appendKV(t, l2, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i), val(fmt.Sprint("new", i))})
	}
	if err := l2.Roll(); err != nil {
		t.Fatal(err)
	}
	ltc, _ = newLogToClean(l2, cleaned, clock.Now().UnixMilli(), -1)
	if ltc.needCompactionNow || ltc.ratio() > cfg.Compaction.MinCleanableDirtyRatio || ltc.cleanableBytes == 0 {
		t.Fatalf("slightly dirty log cleanable: ratio %.2f now %v", ltc.ratio(), ltc.needCompactionNow)
	}
	clock.Advance(2 * time.Hour)
	if ltc, _ = newLogToClean(l2, cleaned, clock.Now().UnixMilli(), -1); !ltc.needCompactionNow {
		t.Fatal("dirty data past max.compaction.lag.ms does not force cleaning")
	}
}

// TestCompactAndDelete: with cleanup.policy=compact,delete both apply:
// retention.bytes removes the oldest (cleaned) segments, and a cleaner
// checkpoint left below the new log start resumes from the log start.
func TestCompactAndDelete(t *testing.T) {
	clock := newTestClock()
	cfg := compactConfig()
	cfg.RetentionDelete, cfg.RetentionBytes = true, 3000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	defer l.Close()
	m := newModel()
	for i := 0; i < 300; i++ {
		m.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%50), val(fmt.Sprint(i))})
	}
	c := testCleaner(clock)
	end := cleanOnce(t, c, l, clock, 0).endOffset
	deleted, err := l.EnforceRetention(clock.Now())
	if err != nil || deleted == 0 || l.Size() > 3000+cfg.SegmentBytes {
		t.Fatalf("retention after cleaning: deleted %d, size %d, %v", deleted, l.Size(), err)
	}
	start := l.LogStartOffset()
	if first, force := firstDirtyOffset(l, 0, true); first != start || !force {
		t.Fatalf("checkpoint below the log start resumes at %d (force %v), want %d", first, force, start)
	}
	if first, force := firstDirtyOffset(l, l.LogEndOffset()+5, true); first != start || !force {
		t.Fatalf("checkpoint past the log end resumes at %d (force %v)", first, force)
	}
	for off := range m.records {
		if off < start {
			delete(m.records, off)
		}
	}
	checkLog(t, l)
	got, _ := readRecords(t, l)
	for _, r := range got {
		if want := m.records[r.offset]; want.key != r.key || string(want.value) != string(r.value) {
			t.Fatalf("record at %d is %q=%q, appended %q=%q", r.offset, r.key, r.value, want.key, want.value)
		}
	}
	if end2 := cleanOnce(t, c, l, clock, start).endOffset; end2 < end {
		t.Fatalf("cleaning after retention ended at %d, before at %d", end2, end)
	}
}
