package log

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// retentionLog writes 30 batches of 2 records, ~3 per segment, with
// timestamps two minutes apart starting an hour before the clock.
func retentionLog(t *testing.T, cfg Config) (*Log, *testClock) {
	t.Helper()
	clock := newTestClock()
	cfg.SegmentBytes = 1200
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	t.Cleanup(func() { l.Close() })
	start := clock.Now().Add(-time.Hour).UnixMilli()
	for i := 0; i < 30; i++ {
		mustAppend(t, l, makeBatch(2, 300, start+int64(i)*120_000), 0)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	return l, clock
}

func TestRetentionByTime(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = (30 * time.Minute).Milliseconds()
	l, clock := retentionLog(t, cfg)
	segs := l.NumSegments()
	n, err := l.EnforceRetention(clock.Now())
	if err != nil || n == 0 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	if l.NumSegments() != segs-n {
		t.Fatalf("segments %d, want %d", l.NumSegments(), segs-n)
	}
	// Every remaining segment but the first has data newer than 30 minutes;
	// the log start offset moved to the first remaining segment.
	first := l.segmentsSnapshot()[0]
	if l.LogStartOffset() != first.baseOffset {
		t.Fatalf("log start %d, first segment %d", l.LogStartOffset(), first.baseOffset)
	}
	m, _ := first.maxTimestampSoFar()
	if clock.Now().UnixMilli()-m.timestamp > cfg.RetentionMs {
		t.Fatal("kept an expired segment")
	}
	if _, err := l.Read(0, 100, l.LogEndOffset(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below log start: %v", err)
	}
	checkLog(t, l)
	// Later, everything expires: the active segment is rolled and deleted too.
	clock.Advance(2 * time.Hour)
	if _, err := l.EnforceRetention(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != 1 || l.LogStartOffset() != 60 || l.LogEndOffset() != 60 || l.Size() != 0 {
		t.Fatalf("after full expiry: %d segments, start %d, end %d, size %d", l.NumSegments(), l.LogStartOffset(), l.LogEndOffset(), l.Size())
	}
	r := mustAppend(t, l, makeBatch(1, 10, clock.Now().UnixMilli()), 0)
	if r.BaseOffset != 60 {
		t.Fatalf("append after expiry at %d", r.BaseOffset)
	}
}

func TestRetentionBySize(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = -1
	cfg.RetentionBytes = 3000
	l, clock := retentionLog(t, cfg)
	if _, err := l.EnforceRetention(clock.Now()); err != nil {
		t.Fatal(err)
	}
	// Whole segments only: what is left exceeds retention.bytes by less than
	// the oldest segment, and deleting one more would go below it.
	segs := l.segmentsSnapshot()
	if excess := l.Size() - 3000; excess >= segs[0].size.Load() {
		t.Fatalf("size %d: could have deleted another segment", l.Size())
	}
	if len(segs) == 1 {
		t.Fatal("deleted everything")
	}
	checkLog(t, l)
}

func TestRetentionStopsAtHighWatermark(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = 1
	l, clock := retentionLog(t, cfg)
	l.UpdateHighWatermark(10)
	if _, err := l.EnforceRetention(clock.Now()); err != nil {
		t.Fatal(err)
	}
	segs := l.segmentsSnapshot()
	if len(segs) < 2 || segs[1].baseOffset <= 10 && segs[0].baseOffset > 10 {
		t.Fatalf("retention passed the high watermark")
	}
	if l.LogStartOffset() > 10 {
		t.Fatalf("log start %d beyond high watermark 10", l.LogStartOffset())
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = -1
	l, _ := retentionLog(t, cfg)
	l.EpochCache().Assign(3, 30)
	if err := l.DeleteRecordsBefore(l.LogEndOffset() + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("beyond HW: %v", err)
	}
	if err := l.DeleteRecordsBefore(25); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 25 {
		t.Fatalf("log start %d", l.LogStartOffset())
	}
	if first := l.segmentsSnapshot()[0]; first.baseOffset > 25 || l.segmentsSnapshot()[1].baseOffset <= 25 {
		t.Fatalf("segments below the log start offset kept or too many deleted")
	}
	// Reads below 25 fail; a read at 25 returns the batch holding it whole.
	if _, err := l.Read(24, 100, 60, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatal(err)
	}
	r, err := l.Read(25, 100, 60, true)
	if err != nil || r.FirstOffset != 24 {
		t.Fatalf("read at log start: first %d %v", r.FirstOffset, err)
	}
	if got := l.EpochCache().Entries(); got[0] != (EpochEntry{0, 25}) {
		t.Fatalf("epochs %v", got)
	}
	// Going backwards is a no-op.
	if err := l.DeleteRecordsBefore(10); err != nil || l.LogStartOffset() != 25 {
		t.Fatalf("%v %d", err, l.LogStartOffset())
	}
}

// TestDeletedSegmentStaysReadable: a region from a segment deleted by
// retention stays readable until file.delete.delay.ms passes.
func TestDeletedSegmentStaysReadable(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = 1
	cfg.FileDeleteDelayMs = 60_000
	l, clock := retentionLog(t, cfg)
	r, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := r.AppendTo(nil)
	if _, err := l.EnforceRetention(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() == 0 {
		t.Fatal("nothing deleted")
	}
	deleted, _ := filepath.Glob(filepath.Join(l.Dir(), "*.deleted"))
	if len(deleted) == 0 {
		t.Fatal("no .deleted files")
	}
	got, err := r.AppendTo(nil)
	if err != nil || string(got) != string(want) {
		t.Fatalf("region unreadable after deletion: %v", err)
	}
	clock.Advance(61 * time.Second)
	if err := l.RemoveDeletedSegments(clock.Now()); err != nil {
		t.Fatal(err)
	}
	deleted, _ = filepath.Glob(filepath.Join(l.Dir(), "*.deleted"))
	if len(deleted) != 0 {
		t.Fatalf("left %v", deleted)
	}
	if _, err := r.AppendTo(nil); err == nil {
		t.Fatal("region still readable after its file was closed")
	}
}

func TestTruncateTo(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = -1
	l, _ := retentionLog(t, cfg)
	l.EpochCache().Assign(1, 20)
	l.EpochCache().Assign(2, 40)
	segs := l.NumSegments()
	// Mid-batch: the batch holding offset 31 (30..31) goes whole.
	if err := l.TruncateTo(31); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 30 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	if l.NumSegments() >= segs {
		t.Fatal("no segment removed")
	}
	if got := l.EpochCache().Entries(); len(got) != 2 || got[1] != (EpochEntry{1, 20}) {
		t.Fatalf("epochs %v", got)
	}
	if l.HighWatermark() != 30 || l.RecoveryPoint() > 30 {
		t.Fatalf("hw %d rp %d", l.HighWatermark(), l.RecoveryPoint())
	}
	checkLog(t, l)
	r := mustAppend(t, l, makeBatch(2, 300, 1), 3)
	if r.BaseOffset != 30 {
		t.Fatalf("append after truncation at %d", r.BaseOffset)
	}
	checkLog(t, l)
	// Truncating into a closed segment makes it active again.
	if err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 4 {
		for _, s := range l.segmentsSnapshot() {
			t.Logf("segment %d size %d", s.baseOffset, s.size.Load())
		}
		t.Fatalf("segments %d LEO %d", l.NumSegments(), l.LogEndOffset())
	}
	for i := 0; i < 10; i++ {
		mustAppend(t, l, makeBatch(2, 300, 1), 3)
	}
	checkLog(t, l)
	l.Close()
	l2 := openLog(t, vfs.Default, l.Dir(), cfg, OpenOptions{HadCleanShutdown: true})
	defer l2.Close()
	if l2.LogEndOffset() != 24 {
		t.Fatalf("reopened LEO %d", l2.LogEndOffset())
	}
	checkLog(t, l2)
}

// TestTruncateToLogEndDropsEmptyEpoch: truncating at or past the log end
// cuts no batch but drops an epoch that starts at the log end, the trace of
// a leadership that wrote nothing.
func TestTruncateToLogEndDropsEmptyEpoch(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = -1
	l, _ := retentionLog(t, cfg)
	leo := l.LogEndOffset()
	l.EpochCache().Assign(1, 20)
	for _, offset := range []int64{leo, leo + 10} {
		l.EpochCache().Assign(2, leo)
		if err := l.TruncateTo(offset); err != nil {
			t.Fatal(err)
		}
		got := l.EpochCache().Entries()
		if l.LogEndOffset() != leo || len(got) == 0 || got[len(got)-1] != (EpochEntry{1, 20}) {
			t.Fatalf("truncate to %d: LEO %d (was %d), epochs %v", offset, l.LogEndOffset(), leo, got)
		}
	}
	checkLog(t, l)
}

func TestTruncateFullyAndStartAt(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = -1
	l, _ := retentionLog(t, cfg)
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1000 || l.NumSegments() != 1 || l.Size() != 0 {
		t.Fatalf("start %d end %d segs %d", l.LogStartOffset(), l.LogEndOffset(), l.NumSegments())
	}
	if len(l.EpochCache().Entries()) != 0 {
		t.Fatal("epochs kept")
	}
	if err := l.AppendAsFollower(withBaseOffset(makeBatch(2, 10, 1), 1000, 9)); err != nil {
		t.Fatal(err)
	}
	checkLog(t, l)
	// Starting at an offset some deleted segment had as its base.
	if err := l.TruncateFullyAndStartAt(0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(1, 10, 1), 0)
	checkLog(t, l)
	if _, err := os.Stat(segmentFileName(l.Dir(), 0, logFileSuffix)); err != nil {
		t.Fatal(err)
	}
}
