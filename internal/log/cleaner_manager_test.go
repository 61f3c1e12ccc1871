package log

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCleanerManager: the manager's cleaner thread picks a compacted log
// whose dirty ratio passes min.cleanable.dirty.ratio, leaves a delete-policy
// log alone, records its progress in cleaner-offset-checkpoint, and resumes
// from that checkpoint after a restart.
func TestCleanerManager(t *testing.T) {
	clock := newTestClock()
	dir := filepath.Join(t.TempDir(), "d1")
	opts := managerOptions(clock)
	opts.TopicConfig = func(topic string) Config {
		if topic == "compacted" {
			return compactConfig()
		}
		return smallConfig()
	}
	opts.Cleaner = CleanerOptions{Enable: true, Threads: 1, BackoffMs: 5, DedupeBufferSize: 1 << 20, IOMaxBytesPerSecond: 1 << 30}
	m, err := NewManager(vfs.Default, []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.LoadAll(); err != nil {
		t.Fatal(err)
	}
	compacted := TopicPartition{"compacted", 0}
	plain := TopicPartition{"plain", 0}
	lc, err := m.Create(compacted, [16]byte{1}, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	lp, err := m.Create(plain, [16]byte{2}, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	mod := newModel()
	for i := 0; i < 300; i++ {
		mod.appendKV(t, lc, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%10), val(fmt.Sprint(i))})
		mustAppend(t, lp, keyedBatch(t, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%10), val(fmt.Sprint(i))}), 0)
	}
	lp.UpdateHighWatermark(lp.LogEndOffset())
	plainSize := lp.Size()
	activeBase := lc.segmentsSnapshot()[lc.NumSegments()-1].baseOffset
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	waitFor(t, "the compacted log's checkpoint", func() bool {
		off, ok := m.CleanerCheckpoint(compacted)
		return ok && off == activeBase
	})
	checkCompacted(t, lc, mod, activeBase, false)
	if lp.Size() != plainSize {
		t.Fatal("the cleaner touched a log with cleanup.policy=delete")
	}
	onDisk, err := ReadOffsetCheckpoint(vfs.Default, filepath.Join(dir, CleanerCheckpointFile))
	if err != nil || onDisk[compacted] != activeBase || len(onDisk) != 1 {
		t.Fatalf("cleaner-offset-checkpoint: %v %v", onDisk, err)
	}
	// Nothing dirty is left: the thread backs off without passes.
	passes := m.CleanerPasses()
	time.Sleep(50 * time.Millisecond)
	if m.CleanerPasses() != passes {
		t.Fatalf("cleaner ran %d more passes over a clean log", m.CleanerPasses()-passes)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}

	m2, err := NewManager(vfs.Default, []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Shutdown()
	if _, err := m2.LoadAll(); err != nil {
		t.Fatal(err)
	}
	if off, ok := m2.CleanerCheckpoint(compacted); !ok || off != activeBase {
		t.Fatalf("checkpoint after restart: %d %v", off, ok)
	}
}
