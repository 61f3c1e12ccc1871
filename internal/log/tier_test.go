package log

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// tieredLog opens a log with RemoteStorage and local.retention.bytes of
// about one segment, and appends batches until it has several segments.
func tieredLog(t *testing.T, mutate func(*Config)) (*Log, *testClock) {
	t.Helper()
	clock := newTestClock()
	cfg := smallConfig()
	cfg.RemoteStorage = true
	cfg.RetentionMs, cfg.RetentionBytes = -1, -1
	cfg.LocalRetentionMs, cfg.LocalRetentionBytes = -1, 16<<10
	if mutate != nil {
		mutate(&cfg)
	}
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	t.Cleanup(func() { l.Close() })
	for range 40 {
		mustAppend(t, l, makeBatch(4, 1000, clock.Now().UnixMilli()), 0)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	if len(l.ClosedSegments()) < 4 {
		t.Fatalf("%d closed segments", len(l.ClosedSegments()))
	}
	return l, clock
}

// TestTieredLocalRetention: a tiered log deletes nothing by local
// retention until the remote log manager sets the copied offset, then only
// segments at or below it, keeping its log start offset; reads below the
// first local segment are ErrOffsetInRemoteTier, below the log start
// ErrOffsetOutOfRange; AdvanceLogStartOffset moves the start up.
func TestTieredLocalRetention(t *testing.T) {
	l, clock := tieredLog(t, nil)
	if n, err := l.EnforceRetention(clock.Now()); err != nil || n != 0 {
		t.Fatalf("unguarded tiered log deleted %d segments, %v", n, err)
	}
	closed := l.ClosedSegments()
	l.SetRemoteCopiedOffset(closed[1].EndOffset)
	if n, err := l.EnforceRetention(clock.Now()); err != nil || n != 2 {
		t.Fatalf("deleted %d segments with two copied, %v", n, err)
	}
	if start, local := l.LogStartOffset(), l.LocalLogStartOffset(); start != 0 || local != closed[2].BaseOffset {
		t.Fatalf("log start %d, local start %d, want 0 and %d", start, local, closed[2].BaseOffset)
	}
	if _, err := l.Read(0, 1<<20, l.HighWatermark(), true); !errors.Is(err, ErrOffsetInRemoteTier) || !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read in the remote tier: %v", err)
	}
	if err := l.AdvanceLogStartOffset(closed[1].BaseOffset); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(0, 1<<20, l.HighWatermark(), true); errors.Is(err, ErrOffsetInRemoteTier) || !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start: %v", err)
	}
	if err := l.AdvanceLogStartOffset(0); err != nil || l.LogStartOffset() != closed[1].BaseOffset {
		t.Fatalf("the log start moved down to %d, %v", l.LogStartOffset(), err)
	}
	// Turning tiering off makes the local start the log start.
	cfg := l.Config()
	cfg.RemoteStorage = false
	l.UpdateConfig(cfg)
	if l.LogStartOffset() != closed[2].BaseOffset {
		t.Fatalf("untiered log start %d, want %d", l.LogStartOffset(), closed[2].BaseOffset)
	}
}

// TestTieredLocalRetentionRollsActive: with local.retention.ms past, the
// active segment is rolled so it can be copied, and deleted once it is.
func TestTieredLocalRetentionRollsActive(t *testing.T) {
	l, clock := tieredLog(t, func(c *Config) { c.LocalRetentionMs, c.LocalRetentionBytes = 1000, -1 })
	l.SetRemoteCopiedOffset(l.ClosedSegments()[len(l.ClosedSegments())-1].EndOffset)
	clock.Advance(2 * time.Second)
	before := len(l.ClosedSegments())
	if _, err := l.EnforceRetention(clock.Now()); err != nil {
		t.Fatal(err)
	}
	closed := l.ClosedSegments()
	if len(closed) != 1 || closed[0].EndOffset != l.LogEndOffset()-1 {
		t.Fatalf("after local retention: %d closed segments (was %d), the last ending at %v", len(closed), before, closed)
	}
	l.SetRemoteCopiedOffset(l.LogEndOffset() - 1)
	if _, err := l.EnforceRetention(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if l.LocalLogStartOffset() != l.LogEndOffset() || l.LogStartOffset() != 0 {
		t.Fatalf("local start %d, log end %d, log start %d", l.LocalLogStartOffset(), l.LogEndOffset(), l.LogStartOffset())
	}
}

// TestTieredCopyDisableRetention: with remote.log.copy.disable, local
// segments go by retention.* without waiting for copies, and the log start
// offset moves with them, as Kafka does (KIP-950).
func TestTieredCopyDisableRetention(t *testing.T) {
	l, clock := tieredLog(t, func(c *Config) {
		c.RemoteCopyDisable = true
		c.LocalRetentionBytes = 16 << 10
	})
	if n, err := l.EnforceRetention(clock.Now()); err != nil || n == 0 {
		t.Fatalf("copy-disabled log deleted %d segments, %v", n, err)
	}
	if l.LogStartOffset() != l.LocalLogStartOffset() || l.LogStartOffset() == 0 {
		t.Fatalf("log start %d, local start %d", l.LogStartOffset(), l.LocalLogStartOffset())
	}
}

// TestTieredLogStartSurvivesReopen: a log start in the remote tier is
// checkpointed and restored at the first UpdateConfig of a log opened
// without RemoteStorage, as the server opens logs before it knows topic
// configs.
func TestTieredLogStartSurvivesReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.RemoteStorage = true
	cfg.RetentionMs, cfg.RetentionBytes, cfg.LocalRetentionMs, cfg.LocalRetentionBytes = -1, -1, -1, 16<<10
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{})
	for range 40 {
		mustAppend(t, l, makeBatch(4, 1000, 1), 0)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	l.SetRemoteCopiedOffset(l.ClosedSegments()[1].EndOffset)
	if _, err := l.EnforceRetention(time.Now()); err != nil {
		t.Fatal(err)
	}
	local := l.LocalLogStartOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openLog(t, vfs.Default, dir, DefaultConfig(), OpenOptions{LogStartOffset: 0, HadCleanShutdown: true})
	defer reopened.Close()
	if reopened.LogStartOffset() != local {
		t.Fatalf("untiered open: log start %d, want the local start %d", reopened.LogStartOffset(), local)
	}
	reopened.UpdateConfig(cfg)
	if reopened.LogStartOffset() != 0 || reopened.LocalLogStartOffset() != local {
		t.Fatalf("after UpdateConfig: log start %d, local start %d", reopened.LogStartOffset(), reopened.LocalLogStartOffset())
	}
	if entries := reopened.EpochCache().Entries(); len(entries) == 0 || entries[0].StartOffset != 0 {
		t.Fatalf("epochs of the remote tier lost: %v", entries)
	}
}
