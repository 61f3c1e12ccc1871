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

// TestCleanerOpenTransaction: a log whose oldest transaction is still open
// is cleaned only up to it, is not picked again and again for nothing, and
// is cleaned further once the transaction ends.
func TestCleanerOpenTransaction(t *testing.T) {
	clock := newTestClock()
	opts := managerOptions(clock)
	opts.TopicConfig = func(string) Config { return compactConfig() }
	opts.Cleaner = CleanerOptions{Enable: true, Threads: 1, BackoffMs: 20, DedupeBufferSize: 1 << 20}
	m, err := NewManager(vfs.Default, []string{filepath.Join(t.TempDir(), "d1")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	tp := TopicPartition{"compacted", 0}
	l, err := m.Create(tp, [16]byte{1}, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	mod := newModel()
	for i := 0; i < 100; i++ {
		mod.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%5), val(fmt.Sprint(i))})
	}
	open := mustAppend(t, l, keyedBatchOpts(t, producerOpts(5, 0, 0, true), clock.Now().UnixMilli(), kv{"t", val("open")}), 0)
	for i := 0; i < 100; i++ {
		mod.appendKV(t, l, clock.Now().UnixMilli(), kv{fmt.Sprintf("k%d", i%5), val(fmt.Sprint("after", i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	segs := l.segmentsSnapshot()
	holder := segs[segmentFor(segs, open.BaseOffset)].baseOffset
	waitFor(t, "cleaning up to the open transaction", func() bool {
		off, ok := m.CleanerCheckpoint(tp)
		return ok && off == holder
	})
	passes := m.CleanerPasses()
	time.Sleep(200 * time.Millisecond)
	if extra := m.CleanerPasses() - passes; extra > 12 {
		t.Fatalf("%d passes in 200 ms over a log blocked by an open transaction", extra)
	}
	appendMarkerTo(t, l, 5)
	clock.Advance(time.Second) // past the backoff that keeps the log's open transaction in mind
	active := l.segmentsSnapshot()[l.NumSegments()-1].baseOffset
	waitFor(t, "cleaning past the ended transaction", func() bool {
		off, ok := m.CleanerCheckpoint(tp)
		return ok && off == active
	})
}
