package quorum

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

func storageConfig(t *testing.T, dir string) Config {
	t.Helper()
	cfg, err := Config{NodeID: 1, Voters: []Voter{{1, "127.0.0.1:1"}, {2, "127.0.0.1:2"}}, Dir: dir, ListenAddr: "127.0.0.1:0", Logger: testLogger(t)}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mustOpenStorage(t *testing.T, cfg Config) *storage {
	t.Helper()
	s, err := openStorage(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testEntries(first, last, term uint64) []*raftpb.Entry {
	var out []*raftpb.Entry
	for i := first; i <= last; i++ {
		out = append(out, &raftpb.Entry{Index: new(i), Term: new(term), Type: new(raftpb.EntryNormal), Data: []byte(fmt.Sprintf("e%d", i))})
	}
	return out
}

// describe renders the storage's entries as index/term/data.
func describe(t *testing.T, s *storage) []string {
	t.Helper()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if last < first {
		return nil
	}
	ents, err := s.Entries(first, last+1, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, fmt.Sprintf("%d/%d/%s", e.GetIndex(), e.GetTerm(), e.GetData()))
	}
	return out
}

func TestStorageAppendTruncateSnapshotReopen(t *testing.T) {
	cfg := storageConfig(t, t.TempDir())
	s := mustOpenStorage(t, cfg)
	if hs, cs, err := s.InitialState(); err != nil || hs != nil || !slices.Equal(cs.GetVoters(), []uint64{1, 2}) {
		t.Fatalf("fresh InitialState = %v, %v, %v", hs, cs, err)
	}
	if term, err := s.Term(0); err != nil || term != 0 {
		t.Fatalf("Term(0) = %d, %v", term, err)
	}
	if err := s.append(testEntries(1, 10, 1)); err != nil {
		t.Fatal(err)
	}
	// A new leader overwrites a conflicting suffix.
	if err := s.append(testEntries(6, 8, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.setHardState(&raftpb.HardState{Term: new(uint64(2)), Vote: new(uint64(2)), Commit: new(uint64(4))}); err != nil {
		t.Fatal(err)
	}
	want := []string{"1/1/e1", "2/1/e2", "3/1/e3", "4/1/e4", "5/1/e5", "6/2/e6", "7/2/e7", "8/2/e8"}
	if got := describe(t, s); !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if ents, err := s.Entries(2, 9, 1); err != nil || len(ents) != 1 {
		t.Fatalf("Entries with a tiny maxSize = %d entries, %v; want 1", len(ents), err)
	}
	if _, err := s.Term(9); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("Term past the end: %v", err)
	}
	// A commit-only change is written at close.
	if err := s.setHardState(&raftpb.HardState{Term: new(uint64(2)), Vote: new(uint64(2)), Commit: new(uint64(7))}); err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpenStorage(t, cfg)
	if got := describe(t, s); !slices.Equal(got, want) {
		t.Fatalf("reopened entries %v, want %v", got, want)
	}
	if hs, _, _ := s.InitialState(); hs.GetTerm() != 2 || hs.GetVote() != 2 || hs.GetCommit() != 7 {
		t.Fatalf("reopened hard state %v", hs)
	}

	// A snapshot at 5 compacts the log up to it.
	if err := s.createSnapshot(5, s.base, []byte("state@5")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Entries(5, 6, 1<<20); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Entries below the snapshot: %v", err)
	}
	if term, err := s.Term(5); err != nil || term != 1 {
		t.Fatalf("Term(5) = %d, %v", term, err)
	}
	s.close()
	s = mustOpenStorage(t, cfg)
	if got := describe(t, s); !slices.Equal(got, want[5:]) {
		t.Fatalf("entries after snapshot and reopen %v, want %v", got, want[5:])
	}
	if snap, _ := s.Snapshot(); snap.GetMetadata().GetIndex() != 5 || !snapshotDataIs(snap, "state@5") {
		t.Fatalf("snapshot %v", snap)
	}

	// A snapshot from the leader replaces everything.
	leaderSnap := &raftpb.Snapshot{Data: encodeSnapshotPayload(s.base, []byte("state@20")), Metadata: &raftpb.SnapshotMetadata{
		Index: new(uint64(20)), Term: new(uint64(3)), ConfState: &raftpb.ConfState{Voters: []uint64{2, 1}},
	}}
	if err := s.applySnapshot(leaderSnap); err != nil {
		t.Fatal(err)
	}
	if err := s.append(testEntries(21, 22, 3)); err != nil {
		t.Fatal(err)
	}
	s.close()
	s = mustOpenStorage(t, cfg)
	defer s.close()
	if got := describe(t, s); !slices.Equal(got, []string{"21/3/e21", "22/3/e22"}) {
		t.Fatalf("entries after the leader's snapshot %v", got)
	}
	if hs, _, _ := s.InitialState(); hs.GetCommit() != 20 {
		t.Fatalf("commit %d after a snapshot at 20, want 20", hs.GetCommit())
	}
	files, _ := listSnapshots(cfg.FS, s.dir)
	if len(files) != 1 || files[0].index != 20 {
		t.Fatalf("snapshot files %v, want only index 20", files)
	}
}

// A crash between writing a leader's snapshot and emptying the log leaves
// entries from an older history after the snapshot: they are discarded.
func TestStorageDiscardsEntriesOlderThanSnapshot(t *testing.T) {
	cfg := storageConfig(t, t.TempDir())
	s := mustOpenStorage(t, cfg)
	if err := s.append(testEntries(1, 6, 1)); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{Data: encodeSnapshotPayload(s.base, []byte("x")), Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(3)), Term: new(uint64(2)), ConfState: s.base.confState()}}
	if err := writeSnapshotFile(cfg.FS, s.dir, snap); err != nil {
		t.Fatal(err)
	}
	s.close()
	s = mustOpenStorage(t, cfg)
	defer s.close()
	if last, _ := s.LastIndex(); last != 3 || len(describe(t, s)) != 0 {
		t.Fatalf("last index %d, entries %v; want the log emptied at the snapshot", last, describe(t, s))
	}
	if err := s.append(testEntries(4, 4, 2)); err != nil {
		t.Fatal(err)
	}
}

// startSingle starts a one-voter quorum in dir.
func startSingle(t *testing.T, dir string, fsys vfs.FS, sm StateMachine, tweak func(*Config)) (*Quorum, error) {
	t.Helper()
	cfg := Config{NodeID: 1, Voters: []Voter{{1, "127.0.0.1:1"}}, ListenAddr: "127.0.0.1:0", Dir: dir, FS: fsys, Logger: testLogger(t)}
	fastConfig(&cfg)
	if tweak != nil {
		tweak(&cfg)
	}
	return Start(cfg, sm)
}

// fillSingle writes n entries with a one-voter quorum in dir and stops it.
func fillSingle(t *testing.T, dir string, n int, tweak func(*Config)) []string {
	t.Helper()
	sm := newTestSM()
	q, err := startSingle(t, dir, vfs.Default, sm, tweak)
	if err != nil {
		t.Fatal(err)
	}
	node := &testNode{id: 1, q: q, sm: sm}
	waitFor(t, startTimeout, "a leader", func() bool { return q.isLeader() })
	for i := range n {
		mustPropose(t, node, fmt.Sprintf("v%03d-%s", i, strings.Repeat("x", 1000)))
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	return sm.history()
}

// startTimeout bounds an election or a replay in these tests.
const startTimeout = 10 * time.Second

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, MetadataPartitionDir, "*.log"))
	slices.Sort(files)
	return files
}

func TestStartDetectsCorruptFiles(t *testing.T) {
	snapshotEvery := func(cfg *Config) { cfg.SnapshotIntervalBytes = 8 << 10 }
	cases := []struct {
		name    string
		tweak   func(*Config)
		corrupt func(t *testing.T, partitionDir string)
		want    error
		inError string
	}{
		{"garbage quorum-state", nil, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, quorumStateFile), []byte(`{"data_version":0,"nodeId":`))
		}, ErrCorrupt, quorumStateFile},
		{"quorum-state of another node", nil, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, quorumStateFile), []byte(`{"data_version":0,"nodeId":7,"leaderEpoch":1,"votedId":-1,"currentVoters":[{"voterId":1}]}`))
		}, ErrConfig, "node 7"},
		{"quorum-state of other voters", nil, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, quorumStateFile), []byte(`{"data_version":0,"nodeId":1,"leaderEpoch":1,"votedId":-1,"currentVoters":[{"voterId":1},{"voterId":2}]}`))
		}, ErrConfig, "voters"},
		{"flipped byte in the snapshot", snapshotEvery, func(t *testing.T, dir string) {
			files, _ := filepath.Glob(filepath.Join(dir, "*"+snapshotSuffix))
			if len(files) != 1 {
				t.Fatalf("snapshot files %v", files)
			}
			flipByte(t, files[0], 40)
		}, ErrCorrupt, snapshotSuffix},
		{"snapshot missing under a compacted log", func(cfg *Config) {
			cfg.SnapshotIntervalBytes, cfg.MaxProposalBytes, cfg.SegmentBytes = 8<<10, 4<<10, 1
		}, func(t *testing.T, dir string) {
			files, _ := filepath.Glob(filepath.Join(dir, "*"+snapshotSuffix))
			for _, f := range files {
				os.Remove(f)
			}
		}, ErrCorrupt, "starts at offset"},
		{"committed tail torn off", nil, func(t *testing.T, dir string) {
			files := segmentFiles(t, filepath.Dir(dir))
			last := files[len(files)-1]
			st, _ := os.Stat(last)
			if err := os.Truncate(last, st.Size()-10); err != nil {
				t.Fatal(err)
			}
		}, ErrCorrupt, "committed entries were lost"},
		{"committed entry corrupt mid-log", nil, func(t *testing.T, dir string) {
			flipByte(t, segmentFiles(t, filepath.Dir(dir))[0], 5000)
		}, ErrCorrupt, "committed entries were lost"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fillSingle(t, dir, 100, tc.tweak)
			tc.corrupt(t, filepath.Join(dir, MetadataPartitionDir))
			q, err := startSingle(t, dir, vfs.Default, newTestSM(), tc.tweak)
			if err == nil {
				q.Stop()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.inError) {
				t.Fatalf("Start: %v; want %v mentioning %q", err, tc.want, tc.inError)
			}
			t.Logf("Start: %v", err)
		})
	}
}

// Garbage after the last whole batch (a torn append that was never
// acknowledged) is cut off, and everything before it survives.
func TestStartCutsTornLogTail(t *testing.T) {
	dir := t.TempDir()
	want := fillSingle(t, dir, 20, nil)
	files := segmentFiles(t, dir)
	f, err := os.OpenFile(files[len(files)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\x00\x00\x00\x00\x00\x00\x00\x99\x00\x00\x01\x00torn"))
	f.Close()

	sm := newTestSM()
	q, err := startSingle(t, dir, vfs.Default, sm, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	waitFor(t, startTimeout, "the log to be re-applied", func() bool { return slices.Equal(sm.history(), want) })
	waitFor(t, startTimeout, "a leader", func() bool { return q.isLeader() })
	mustPropose(t, &testNode{id: 1, q: q, sm: sm}, "after")
}

// A failed disk stops the quorum without taking the process down; after a
// restart on a working disk nothing acknowledged is lost.
func TestDiskFailureStopsQuorum(t *testing.T) {
	dir := t.TempDir()
	fsys := vfs.NewFaultFS(vfs.Default)
	sm := newTestSM()
	q, err := startSingle(t, dir, fsys, sm, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := &testNode{id: 1, q: q, sm: sm}
	waitFor(t, startTimeout, "a leader", func() bool { return q.isLeader() })
	mustPropose(t, node, "durable")
	want := sm.history()

	fsys.Inject(vfs.Fault{Ops: vfs.OpWrite, PathContains: ".log", Err: vfs.ErrIO})
	if _, err := q.Propose(context.Background(), [][]byte{[]byte("fails")}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Propose on a failed disk: %v, want ErrStopped", err)
	}
	if err := q.Err(); !errors.Is(err, log.ErrStorage) || !errors.Is(err, vfs.ErrIO) {
		t.Fatalf("Err() = %v, want a storage error", err)
	}
	if err := q.Stop(); err == nil {
		t.Fatal("Stop after a disk failure returned nil")
	}

	fsys.Clear()
	sm = newTestSM()
	q, err = startSingle(t, dir, fsys, sm, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	waitFor(t, startTimeout, "the log to be re-applied", func() bool {
		h := sm.history()
		return len(h) >= len(want) && slices.Equal(h[:len(want)], want)
	})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at >= int64(len(b)) {
		t.Fatalf("%s has %d bytes, cannot flip byte %d", path, len(b), at)
	}
	b[at] ^= 0xff
	writeFile(t, path, b)
}

// snapshotDataIs reports whether snap's state machine data is want.
func snapshotDataIs(snap *raftpb.Snapshot, want string) bool {
	_, data, err := decodeSnapshotPayload(snap.GetData())
	return err == nil && string(data) == want
}
