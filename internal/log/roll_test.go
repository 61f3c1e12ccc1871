package log

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

func TestRollOnSegmentBytesTrimsIndexes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 2000
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{})
	defer l.Close()
	batch := makeBatch(1, 400, 1000) // ~480 bytes
	for i := 0; i < 4; i++ {
		mustAppend(t, l, batch, 0)
	}
	if l.NumSegments() != 1 {
		t.Fatalf("4 batches of %d bytes rolled early: %d segments", len(batch), l.NumSegments())
	}
	mustAppend(t, l, batch, 0)
	if l.NumSegments() != 2 {
		t.Fatalf("segments %d, want 2", l.NumSegments())
	}
	// The closed segment's indexes are trimmed to their entries.
	st, _ := os.Stat(segmentFileName(dir, 0, indexFileSuffix))
	if st.Size()%8 != 0 || st.Size() >= int64(cfg.SegmentIndexBytes) {
		t.Fatalf("closed index not trimmed: %d bytes", st.Size())
	}
	st, _ = os.Stat(segmentFileName(dir, 0, timeIndexFileSuffix))
	if st.Size() != 12 {
		// Every batch has the same max timestamp: one entry only.
		t.Fatalf("closed time index %d bytes", st.Size())
	}
	// The active segment's indexes are preallocated.
	st, _ = os.Stat(segmentFileName(dir, 4, indexFileSuffix))
	if st.Size() != int64(cfg.SegmentIndexBytes) {
		t.Fatalf("active index %d bytes, want %d", st.Size(), cfg.SegmentIndexBytes)
	}
	// The roll flushes the closed segment in the background.
	deadline := time.Now().Add(5 * time.Second)
	for l.RecoveryPoint() != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("recovery point %d, want 4", l.RecoveryPoint())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRollOnSegmentMs(t *testing.T) {
	clock := newTestClock()
	cfg := smallConfig()
	cfg.SegmentMs = 1000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	defer l.Close()
	ts := clock.Now().UnixMilli()
	mustAppend(t, l, makeBatch(1, 10, ts), 0)
	mustAppend(t, l, makeBatch(1, 10, ts+1000), 0) // exactly segment.ms later: no roll
	if l.NumSegments() != 1 {
		t.Fatal("rolled too early")
	}
	mustAppend(t, l, makeBatch(1, 10, ts+1001), 0)
	if l.NumSegments() != 2 {
		t.Fatalf("segments %d after segment.ms", l.NumSegments())
	}
	// A segment whose first batch has no timestamp rolls by the wall clock.
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(1, 10, -1), 0)
	clock.Advance(1500 * time.Millisecond)
	mustAppend(t, l, makeBatch(1, 10, -1), 0)
	if l.NumSegments() != 4 {
		t.Fatalf("segments %d after wall-clock segment.ms", l.NumSegments())
	}
}

func TestRollOnFullIndex(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentIndexBytes = 48 // 6 offset entries, 4 time entries
	cfg.IndexIntervalBytes = 0
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	for i := 0; i < 20; i++ {
		mustAppend(t, l, makeBatch(1, 10, int64(1000+i)), 0)
	}
	if l.NumSegments() < 4 {
		t.Fatalf("segments %d: a full index must roll", l.NumSegments())
	}
	checkLog(t, l)
}

func TestRollOnRelativeOffsetOverflow(t *testing.T) {
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), smallConfig(), OpenOptions{})
	defer l.Close()
	if err := l.AppendAsFollower(withBaseOffset(makeBatch(1, 10, 1), 0, 0)); err != nil {
		t.Fatal(err)
	}
	far := int64(math.MaxInt32) + 10
	if err := l.AppendAsFollower(withBaseOffset(makeBatch(2, 10, 2), far, 0)); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != 2 || l.LogEndOffset() != far+2 {
		t.Fatalf("segments %d LEO %d", l.NumSegments(), l.LogEndOffset())
	}
	if _, err := os.Stat(segmentFileName(l.Dir(), far, logFileSuffix)); err != nil {
		t.Fatalf("new segment not at the batch's base offset: %v", err)
	}
	checkLog(t, l)
}

func TestAppendAsFollower(t *testing.T) {
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), smallConfig(), OpenOptions{})
	defer l.Close()
	two := append(withBaseOffset(makeBatch(3, 10, 1), 0, 4), withBaseOffset(makeBatch(2, 10, 2), 3, 5)...)
	if err := l.AppendAsFollower(two); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 5 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	if got := l.EpochCache().Entries(); len(got) != 2 || got[0] != (EpochEntry{4, 0}) || got[1] != (EpochEntry{5, 3}) {
		t.Fatalf("epochs %v", got)
	}
	if err := l.AppendAsFollower(withBaseOffset(makeBatch(1, 10, 1), 4, 5)); !errors.Is(err, ErrUnexpectedAppendOffset) {
		t.Fatalf("append below LEO: %v", err)
	}
	bad := append(withBaseOffset(makeBatch(3, 10, 1), 10, 5), withBaseOffset(makeBatch(2, 10, 2), 11, 5)...)
	if err := l.AppendAsFollower(bad); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("overlapping batches: %v", err)
	}
	// Gaps (compacted leaders) are kept.
	if err := l.AppendAsFollower(withBaseOffset(makeBatch(1, 10, 1), 20, 5)); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 21 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	r, err := l.Read(7, 1000, 21, false)
	if err != nil || r.FirstOffset != 20 {
		t.Fatalf("read in gap: first %d err %v", r.FirstOffset, err)
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	cfg := smallConfig()
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	batch := makeBatch(2, 10, 1)
	for name, in := range map[string][]byte{
		"empty":     nil,
		"truncated": batch[:len(batch)-1],
		"trailing":  append(append([]byte(nil), batch...), 1, 2, 3),
		"magic":     func() []byte { b := append([]byte(nil), batch...); b[16] = 1; return b }(),
	} {
		if _, err := l.Append(in, 0); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := l.Append(makeBatch(1, int(cfg.SegmentBytes), 1), 0); !errors.Is(err, ErrBatchTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if l.LogEndOffset() != 0 || l.Err() != nil {
		t.Fatalf("bad input changed the log: LEO %d err %v", l.LogEndOffset(), l.Err())
	}
}

func TestAppendResultAndRewrite(t *testing.T) {
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), smallConfig(), OpenOptions{})
	defer l.Close()
	mustAppend(t, l, makeBatch(5, 10, 100), 0)
	batch := makeBatch(3, 10, 500)
	r, err := l.Append(batch, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := AppendResult{BaseOffset: 5, LastOffset: 7, MaxTimestamp: 502, OffsetOfMaxTimestamp: 7, LogAppendTime: -1, Batches: 1, Records: 3, Bytes: len(batch)}
	if r != want {
		t.Fatalf("result %+v, want %+v", r, want)
	}
	h, err := record.Verify(batch)
	if err != nil || h.BaseOffset != 5 || h.PartitionLeaderEpoch != 7 {
		t.Fatalf("batch not rewritten in place with valid CRC: %+v %v", h, err)
	}
	b, _, _ := l.ReadBytes(5, 1000, 8, false)
	if string(b) != string(batch) {
		t.Fatal("stored bytes differ from the rewritten batch")
	}
}

func TestReadLimits(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 3000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	batch := makeBatch(2, 200, 1)
	size := int64(len(batch))
	for i := 0; i < 30; i++ {
		mustAppend(t, l, batch, 0)
	}
	if l.NumSegments() < 3 {
		t.Fatalf("segments %d", l.NumSegments())
	}
	// maxBytes smaller than a batch: nothing, unless minOneBatch.
	if r, _ := l.Read(0, int32(size-1), 60, false); r.Bytes != 0 {
		t.Fatalf("read %d bytes under a batch-size limit", r.Bytes)
	}
	if r, _ := l.Read(0, 1, 60, true); r.Bytes != size {
		t.Fatalf("minOneBatch read %d bytes", r.Bytes)
	}
	// Whole batches only, and reads continue across segments.
	r, err := l.Read(0, int32(size*25+size/2), 60, false)
	if err != nil || r.Bytes != size*25 || len(r.Regions) < 2 {
		t.Fatalf("read %d bytes in %d regions (%v), want %d", r.Bytes, len(r.Regions), err, size*25)
	}
	b, _ := r.AppendTo(nil)
	n := 0
	for len(b) > 0 {
		h, err := record.Verify(b)
		if err != nil || h.BaseOffset != int64(2*n) {
			t.Fatalf("batch %d: %+v %v", n, h, err)
		}
		b = b[h.Size():]
		n++
	}
	// Log start offset bound.
	if _, err := l.Read(-1, 100, 60, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatal(err)
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 3000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	// Batch i has records with timestamps 1000+10i and 1000+10i+1; batch 7 jumps.
	for i := 0; i < 40; i++ {
		ts := int64(1000 + 10*i)
		if i == 7 {
			ts = 5000
		}
		mustAppend(t, l, makeBatch(2, 100, ts), 0)
	}
	for _, tc := range []struct {
		ts, offset, timestamp int64
		found                 bool
	}{
		// Records are decoded, as Kafka does: the answer is the first
		// record at or after the target, inside its batch.
		{0, 0, 1000, true},
		{1001, 1, 1001, true},
		{1002, 2, 1010, true},
		{1071, 14, 5000, true}, // batch 7 (offsets 14-15) is the first reaching 1071
		{1081, 14, 5000, true},
		{5001, 15, 5001, true},
		{5002, -1, -1, false},
		{1391, 14, 5000, true}, // first record at or after the target in offset order, as Kafka
		{1002, 2, 1010, true},
	} {
		off, ts, found, err := l.OffsetForTimestamp(tc.ts)
		if err != nil || off != tc.offset || ts != tc.timestamp || found != tc.found {
			t.Errorf("OffsetForTimestamp(%d) = (%d, %d, %v, %v), want (%d, %d, %v)", tc.ts, off, ts, found, err, tc.offset, tc.timestamp, tc.found)
		}
	}
	if off, _, _, _ := l.OffsetForTimestamp(EarliestTimestamp); off != 0 {
		t.Errorf("earliest %d", off)
	}
	if off, _, _, _ := l.OffsetForTimestamp(LatestTimestamp); off != 80 {
		t.Errorf("latest %d", off)
	}
	if ts, off := l.MaxTimestampOffset(); ts != 5001 || off != 15 {
		t.Errorf("MaxTimestampOffset = (%d, %d)", ts, off)
	}
	// The same after a clean reopen, through lazily opened time indexes.
	l.Close()
	l = openLog(t, vfs.Default, l.Dir(), cfg, OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	if ts, off := l.MaxTimestampOffset(); ts != 5001 || off != 15 {
		t.Errorf("MaxTimestampOffset after reopen = (%d, %d)", ts, off)
	}
	if off, ts, _, _ := l.OffsetForTimestamp(1052); off != 12 || ts != 1060 {
		t.Errorf("after reopen: (%d, %d)", off, ts)
	}
}

func TestFlushMessagesAdvancesRecoveryPoint(t *testing.T) {
	cfg := smallConfig()
	cfg.FlushMessages = 3
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	mustAppend(t, l, makeBatch(2, 10, 1), 0)
	if l.RecoveryPoint() != 0 {
		t.Fatalf("flushed after 2 messages")
	}
	mustAppend(t, l, makeBatch(1, 10, 1), 0)
	if l.RecoveryPoint() != 3 {
		t.Fatalf("recovery point %d after 3 messages", l.RecoveryPoint())
	}
	// flush.ms.
	cfg.FlushMessages = math.MaxInt64
	cfg.FlushMs = 1000
	l.UpdateConfig(cfg)
	mustAppend(t, l, makeBatch(1, 10, 1), 0)
	now := time.Now()
	if err := l.FlushIfDue(now.Add(-time.Hour)); err != nil || l.RecoveryPoint() != 3 {
		t.Fatalf("flushed early: %d %v", l.RecoveryPoint(), err)
	}
	if err := l.FlushIfDue(now.Add(time.Hour)); err != nil || l.RecoveryPoint() != 4 {
		t.Fatalf("flush.ms: %d %v", l.RecoveryPoint(), err)
	}
}

func TestPreallocate(t *testing.T) {
	cfg := smallConfig()
	cfg.Preallocate = true
	cfg.SegmentBytes = 8000
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{})
	for i := 0; i < 20; i++ {
		mustAppend(t, l, makeBatch(1, 500, 1), 0)
	}
	st, _ := os.Stat(segmentFileName(dir, l.segmentsSnapshot()[l.NumSegments()-1].baseOffset, logFileSuffix))
	if st.Size() != cfg.SegmentBytes {
		t.Fatalf("active segment %d bytes, want preallocated %d", st.Size(), cfg.SegmentBytes)
	}
	st, _ = os.Stat(segmentFileName(dir, 0, logFileSuffix))
	if st.Size() == cfg.SegmentBytes {
		t.Fatal("closed segment not trimmed")
	}
	checkLog(t, l)
	l.Close()
	// Reopen cleanly and after a crash (zeros past the data).
	for _, clean := range []bool{true, false} {
		l = openLog(t, vfs.Default, dir, cfg, OpenOptions{HadCleanShutdown: clean})
		if l.LogEndOffset() != 20 {
			t.Fatalf("clean=%v LEO %d", clean, l.LogEndOffset())
		}
		mustAppend(t, l, makeBatch(1, 500, 1), 0)
		checkLog(t, l)
		l.TruncateTo(20)
		l.Close()
	}
}

// TestOnRollRemove: a removed roll hook no longer runs, the others still
// run in registration order, and removing twice is harmless.
func TestOnRollRemove(t *testing.T) {
	l := openLog(t, vfs.Default, t.TempDir(), smallConfig(), OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	var ran []string
	hook := func(name string) func(int64) { return func(int64) { ran = append(ran, name) } }
	removeA := l.OnRoll(hook("a"))
	l.OnRoll(hook("b"))
	removeC := l.OnRoll(hook("c"))
	roll := func() {
		t.Helper()
		mustAppend(t, l, makeBatch(1, 10, 1000), 0)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	roll()
	removeA()
	removeA()
	roll()
	removeC()
	roll()
	if want := []string{"a", "b", "c", "b", "c", "b"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("hooks ran %v, want %v", ran, want)
	}
	if n := l.RollHooks(); n != 1 {
		t.Fatalf("%d hooks registered, want 1", n)
	}
}
