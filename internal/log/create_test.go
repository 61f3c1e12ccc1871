package log

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// logState is what a log exposes after opening, for comparing two opens.
type logState struct {
	start, end, recoveryPoint, highWatermark int64
	segments                                 int
	snapshots                                int
	epoch                                    int32
	hasEpoch                                 bool
}

// emptyState is a new log's.
var emptyState = logState{segments: 1, epoch: -1}

func stateOf(t *testing.T, l *Log) logState {
	t.Helper()
	snaps, err := l.ProducerSnapshotOffsets()
	if err != nil {
		t.Fatal(err)
	}
	epoch, ok := l.LatestEpoch()
	return logState{
		start: l.LogStartOffset(), end: l.LogEndOffset(), recoveryPoint: l.RecoveryPoint(),
		highWatermark: l.HighWatermark(), segments: l.NumSegments(), snapshots: len(snaps),
		epoch: epoch, hasEpoch: ok,
	}
}

// TestCreateFreshLog: a log Manager.Create makes in a new directory (which
// skips listing and recovery) is in the state Open reaches on the same
// directory, and a crash right after creation (no clean shutdown) recovers to
// it as well.
func TestCreateFreshLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	clock := newTestClock()
	m, err := NewManager(vfs.Default, []string{dir}, managerOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.LoadAll(); err != nil {
		t.Fatal(err)
	}
	tp := TopicPartition{"fresh", 0}
	topicID := [16]byte{9, 8, 7}
	l, err := m.Create(tp, topicID, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	created := stateOf(t, l)
	want := emptyState
	if created != want {
		t.Fatalf("created log state %+v, want %+v", created, want)
	}

	// Reopened as after a crash (no clean shutdown marker, recovery from 0).
	again := openLog(t, vfs.Default, l.Dir(), smallConfig(), OpenOptions{})
	if got := stateOf(t, again); got != created {
		t.Fatalf("reopened state %+v, created %+v", got, created)
	}
	again.Close()

	// The fresh log works as any other: appends, producer snapshots, roll.
	for i := 0; i < 5; i++ {
		mustAppend(t, l, makeBatch(3, 100, clock.Now().UnixMilli()), 2)
	}
	if err := l.WriteProducerSnapshot(l.LogEndOffset(), []byte("state")); err != nil {
		t.Fatal(err)
	}
	if offs, err := l.ProducerSnapshotOffsets(); err != nil || len(offs) != 1 || offs[0] != 15 {
		t.Fatalf("snapshots after write: %v %v", offs, err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(2, 100, clock.Now().UnixMilli()), 3)
	l.UpdateHighWatermark(l.LogEndOffset())
	before := stateOf(t, l)
	checkLog(t, l)
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}

	m2, err := NewManager(vfs.Default, []string{dir}, managerOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Shutdown()
	logs, err := m2.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	l2 := logs[tp]
	if l2 == nil {
		t.Fatalf("log not loaded: %v", logs)
	}
	after := stateOf(t, l2)
	// A clean shutdown flushes everything (and writes no producer snapshot
	// itself: the partition does).
	before.recoveryPoint = before.end
	if after != before {
		t.Fatalf("after restart %+v, before %+v", after, before)
	}
	checkLog(t, l2)
	if got, err := ReadPartitionMetadata(vfs.Default, l2.Dir()); err != nil || got != topicID {
		t.Fatalf("partition.metadata %x %v", got, err)
	}
}

// TestCreateFreshLogFaults: a creation that fails part way (each step of it
// faulted in turn, as a crash there would leave it) leaves a directory that
// the next start loads and a retried Create completes.
func TestCreateFreshLogFaults(t *testing.T) {
	for _, f := range []vfs.Fault{
		{Ops: vfs.OpMkdir, PathContains: "fresh-0"},
		{Ops: vfs.OpWrite, PathContains: PartitionMetadataFile},
		{Ops: vfs.OpSync, PathContains: PartitionMetadataFile},
		{Ops: vfs.OpRename, PathContains: PartitionMetadataFile},
		{Ops: vfs.OpSyncDir, PathContains: "fresh-0"},
		{Ops: vfs.OpOpen, PathContains: ".log"},
		{Ops: vfs.OpAllocate, PathContains: ".log"},
		{Ops: vfs.OpOpen, PathContains: ".index"},
		{Ops: vfs.OpOpen, PathContains: ".timeindex"},
		{Ops: vfs.OpMap, PathContains: ".index"},
	} {
		t.Run(fmt.Sprintf("%s-%d", f.PathContains, f.Ops), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			clock := newTestClock()
			ffs := vfs.NewFaultFS(vfs.Default)
			m, err := NewManager(ffs, []string{dir}, managerOptions(clock))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.LoadAll(); err != nil {
				t.Fatal(err)
			}
			tp := TopicPartition{"fresh", 0}
			f.Err, f.Times = vfs.ErrIO, 1
			ffs.Inject(f)
			cfg := smallConfig()
			cfg.Preallocate = true
			if _, err := m.Create(tp, [16]byte{1}, cfg); !errors.Is(err, ErrStorage) {
				t.Fatalf("Create with fault: %v", err)
			}
			if ffs.Injected() != 1 {
				t.Fatalf("fault fired %d times", ffs.Injected())
			}
			// No Shutdown: the process stops here.

			m2, err := NewManager(vfs.Default, []string{dir}, managerOptions(clock))
			if err != nil {
				t.Fatal(err)
			}
			defer m2.Shutdown()
			if _, err := m2.LoadAll(); err != nil {
				t.Fatalf("LoadAll after failed creation: %v", err)
			}
			l, err := m2.Create(tp, [16]byte{1}, cfg)
			if err != nil {
				t.Fatalf("Create again: %v", err)
			}
			if got := stateOf(t, l); got != emptyState {
				t.Fatalf("state %+v", got)
			}
			mustAppend(t, l, makeBatch(2, 50, clock.Now().UnixMilli()), 0)
			checkLog(t, l)
		})
	}
}
