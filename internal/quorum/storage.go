package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// appendChunkBytes bounds the bytes of entry batches handed to the log in one
// call, so one Ready's entries never exceed a segment.
const appendChunkBytes = 1 << 20

// storage is raft.Storage over the metadata partition log, the quorum-state
// file and the latest snapshot file (see the package doc for the formats).
//
// It is confined to the goroutine that owns the raft.RawNode (and to Start
// before that goroutine runs), so it needs no lock: raft calls the
// raft.Storage methods from inside RawNode, and the driver calls the write
// methods between Ready and Advance.
type storage struct {
	fs      vfs.FS
	dir     string
	nodeID  int32
	log     *log.Log
	logger  *slog.Logger
	nowMs   func() int64
	maxSnap int

	// entries[0] is a dummy holding the index and term of the snapshot (0 and
	// 0 before the first); entries[1:] are every entry after it, also on disk.
	// Invariant: entries[i].Index == entries[0].Index + i.
	// Invariant: entry terms never decrease along entries.
	// Invariant: log.LogEndOffset() == lastIndex() (offset = index - 1).
	entries []*raftpb.Entry
	// snapshot is the latest snapshot, on disk as a .checkpoint file; its
	// metadata index is 0 when there is none.
	snapshot *raftpb.Snapshot
	// hardState is raft's latest HardState; persisted is what quorum-state
	// holds. Invariant: persisted term and vote equal hardState's.
	hardState, persisted *raftpb.HardState

	// static is controller.quorum.voters (empty when the node joins
	// through controller.quorum.bootstrap.servers); it gives endpoints to
	// voter sets read from formats that recorded ids only.
	static VoterSet
	// bootstrap is the voter set below the first snapshot: the ids of
	// quorum-state's currentVoters, written when the directory was created.
	bootstrap VoterSet
	// base is the voter set at entries[0]: the snapshot's, else bootstrap.
	base VoterSet
	// latest is the voter set after the last entry, committed or not (as
	// Kafka uses the latest VotersRecord in its log), set by the entry at
	// latestIndex (0: base). changes counts the times latest changed.
	latest      VoterSet
	latestIndex uint64
	changes     uint64
}

var _ raft.Storage = (*storage)(nil)

// openStorage loads the partition directory under cfg.Dir, creating it when
// new, and checks that it is consistent.
func openStorage(cfg Config) (*storage, error) {
	dir := filepath.Join(cfg.Dir, MetadataPartitionDir)
	if err := cfg.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: create %s: %w", log.ErrStorage, dir, err)
	}
	s := &storage{
		fs: cfg.FS, dir: dir, nodeID: cfg.NodeID, logger: cfg.Logger,
		static: staticVoterSet(cfg.Voters, cfg.ListenerName),
		nowMs:  func() int64 { return time.Now().UnixMilli() }, maxSnap: cfg.MaxSnapshotBytes,
		hardState: &raftpb.HardState{}, persisted: &raftpb.HardState{},
	}
	if err := s.loadState(); err != nil {
		return nil, err
	}
	snap, err := loadLatestSnapshot(cfg.FS, dir, cfg.MaxSnapshotBytes)
	if err != nil {
		return nil, err
	}
	s.snapshot = raftpb.EnsureSnapshot(snap)
	s.base = s.bootstrap
	if snap != nil {
		voters, _, err := decodeSnapshotPayload(snap.GetData())
		if err != nil {
			return nil, err
		}
		s.base = voters.fillEndpoints(s.static)
	}
	snapIndex, snapTerm := s.snapshot.GetMetadata().GetIndex(), s.snapshot.GetMetadata().GetTerm()
	s.entries = []*raftpb.Entry{{Index: new(snapIndex), Term: new(snapTerm)}}

	logCfg := log.DefaultConfig()
	logCfg.SegmentBytes = cfg.SegmentBytes
	logCfg.RetentionMs, logCfg.RetentionBytes, logCfg.RetentionDelete = -1, -1, false
	logCfg.FileDeleteDelayMs = 0
	s.log, err = log.Open(cfg.FS, dir, logCfg, log.OpenOptions{Logger: cfg.Logger, LogStartOffset: int64(snapIndex)})
	if err != nil {
		return nil, fmt.Errorf("open metadata log %s: %w", dir, err)
	}
	if err := s.loadEntries(); err != nil {
		s.log.Close()
		return nil, err
	}
	if commit := s.hardState.GetCommit(); commit > s.lastIndex() {
		s.log.Close()
		return nil, fmt.Errorf("%w: %s has commit index %d but the log ends at index %d: committed entries were lost",
			ErrCorrupt, filepath.Join(dir, quorumStateFile), commit, s.lastIndex())
	}
	s.recomputeLatest()
	if err := s.checkStaticVoters(snap != nil); err != nil {
		s.log.Close()
		return nil, err
	}
	return s, nil
}

// checkStaticVoters: at kraft.version 0 the voters are
// controller.quorum.voters, so a directory written for another voter set
// is refused. From kraft.version 1 the log's voter set wins.
func (s *storage) checkStaticVoters(haveSnapshot bool) error {
	if s.latest.KRaftVersion > 0 || len(s.static.Members) == 0 {
		return nil
	}
	if !slices.Equal(s.bootstrap.Voters(), s.static.Voters()) {
		return fmt.Errorf("%w: configured voters %v differ from the voters %v in %s", ErrConfig, s.static.Voters(), s.bootstrap.Voters(), quorumStateFile)
	}
	if haveSnapshot && !slices.Equal(s.base.Voters(), s.static.Voters()) {
		return fmt.Errorf("%w: snapshot voters %v differ from the configured voters %v", ErrConfig, s.base.Voters(), s.static.Voters())
	}
	return nil
}

// recomputeLatest finds the latest voter set: the last configuration change
// entry's, else base.
func (s *storage) recomputeLatest() {
	s.latest, s.latestIndex = s.base, 0
	for _, e := range s.entries[1:] {
		s.noteEntry(e)
	}
	s.changes++
}

// noteEntry makes a configuration change entry's voter set the latest.
func (s *storage) noteEntry(e *raftpb.Entry) {
	if e.GetType() != raftpb.EntryConfChangeV2 {
		return
	}
	_, _, set, err := decodeConfChangeEntry(e.GetData())
	if err != nil {
		s.logger.Warn("ignoring a configuration change entry that does not parse", "offset", e.GetIndex()-1, "err", err)
		return
	}
	s.latest, s.latestIndex = set.fillEndpoints(s.static), e.GetIndex()
	s.changes++
}

// loadState reads quorum-state, checking it belongs to this node and voter
// set.
func (s *storage) loadState() error {
	st, found, err := readQuorumState(s.fs, s.dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(s.dir, quorumStateFile), err)
	}
	if !found {
		s.bootstrap = s.static
		return nil
	}
	if st.NodeID != s.nodeID {
		return fmt.Errorf("%w: %s belongs to node %d, this is node %d", ErrConfig, s.dir, st.NodeID, s.nodeID)
	}
	var bootstrap VoterSet
	for _, id := range st.voters() {
		bootstrap = bootstrap.with(Member{ID: int32(id)})
	}
	s.bootstrap = bootstrap.fillEndpoints(s.static)
	vote := uint64(0)
	if st.VotedID > 0 {
		vote = uint64(st.VotedID)
	}
	s.hardState = &raftpb.HardState{Term: new(st.LeaderEpoch), Vote: new(vote), Commit: new(st.CommitIndex)}
	s.persisted = proto.Clone(s.hardState).(*raftpb.HardState)
	return nil
}

// loadEntries reads every entry after the snapshot from the log.
func (s *storage) loadEntries() error {
	start, end := s.log.LogStartOffset(), s.log.LogEndOffset()
	snapIndex, snapTerm := s.entries[0].GetIndex(), s.entries[0].GetTerm()
	if uint64(start) != snapIndex {
		return fmt.Errorf("%w: metadata log %s starts at offset %d but the latest snapshot ends at offset %d",
			ErrCorrupt, s.dir, start, snapIndex)
	}
	lastTerm := snapTerm
	for offset := start; offset < end; {
		data, _, err := s.log.ReadBytes(offset, appendChunkBytes, end, true)
		if err != nil {
			return fmt.Errorf("read metadata log %s at offset %d: %w", s.dir, offset, err)
		}
		if len(data) == 0 {
			return fmt.Errorf("%w: metadata log %s: no batch at offset %d", ErrCorrupt, s.dir, offset)
		}
		for len(data) > 0 {
			h, err := parseBatchSize(data)
			if err != nil {
				return fmt.Errorf("metadata log %s at offset %d: %w", s.dir, offset, err)
			}
			e, err := decodeEntryBatch(data[:h])
			if err != nil {
				return fmt.Errorf("metadata log %s: %w", s.dir, err)
			}
			data = data[h:]
			if e.GetIndex() <= uint64(offset) {
				continue // a batch Read returned whole that starts below offset
			}
			if e.GetIndex() != uint64(offset)+1 {
				return fmt.Errorf("%w: metadata log %s: entry at offset %d, want %d", ErrCorrupt, s.dir, e.GetIndex()-1, offset)
			}
			if e.GetTerm() < lastTerm {
				if offset == start {
					// The log continues an older history than the snapshot
					// installed from the leader: a crash came between writing
					// the snapshot and emptying the log. The snapshot wins.
					s.logger.Warn("discarding metadata log entries older than the snapshot", "offset", offset, "term", e.GetTerm(), "snapshot_term", snapTerm)
					if err := s.log.TruncateFullyAndStartAt(int64(snapIndex)); err != nil {
						return err
					}
					return nil
				}
				return fmt.Errorf("%w: metadata log %s: term %d at offset %d after term %d", ErrCorrupt, s.dir, e.GetTerm(), offset, lastTerm)
			}
			lastTerm = e.GetTerm()
			s.entries = append(s.entries, e)
			offset++
		}
	}
	return nil
}

// parseBatchSize returns the size of the batch at the start of data.
func parseBatchSize(data []byte) (int, error) {
	if len(data) < record.LogOverhead {
		return 0, fmt.Errorf("%w: %d bytes left, less than a batch header", ErrCorrupt, len(data))
	}
	n := record.LogOverhead + int(int32(binary.BigEndian.Uint32(data[8:])))
	if n <= record.LogOverhead || n > len(data) {
		return 0, fmt.Errorf("%w: batch of %d bytes, %d present", ErrCorrupt, n, len(data))
	}
	return n, nil
}

func (s *storage) firstIndex() uint64 { return s.entries[0].GetIndex() + 1 }
func (s *storage) lastIndex() uint64 {
	return s.entries[0].GetIndex() + uint64(len(s.entries)) - 1
}

// InitialState implements raft.Storage. The persisted commit index is a
// lower bound, raised to the snapshot index.
func (s *storage) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	hs := proto.Clone(s.hardState).(*raftpb.HardState)
	hs.Commit = new(max(hs.GetCommit(), s.entries[0].GetIndex()))
	if raft.IsEmptyHardState(hs) {
		hs = nil
	}
	return hs, s.base.confState(), nil
}

// Entries implements raft.Storage.
func (s *storage) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	first := s.entries[0].GetIndex()
	if lo <= first {
		return nil, raft.ErrCompacted
	}
	if hi > s.lastIndex()+1 || lo >= hi {
		return nil, raft.ErrUnavailable
	}
	ents := s.entries[lo-first : hi-first]
	size := uint64(proto.Size(ents[0]))
	n := 1
	for ; n < len(ents); n++ {
		size += uint64(proto.Size(ents[n]))
		if size > maxSize {
			break
		}
	}
	// The full slice expression makes an append by raft copy instead of
	// overwriting the entries that follow.
	return ents[:n:n], nil
}

// Term implements raft.Storage.
func (s *storage) Term(i uint64) (uint64, error) {
	first := s.entries[0].GetIndex()
	if i < first {
		return 0, raft.ErrCompacted
	}
	if i-first >= uint64(len(s.entries)) {
		return 0, raft.ErrUnavailable
	}
	return s.entries[i-first].GetTerm(), nil
}

// LastIndex implements raft.Storage.
func (s *storage) LastIndex() (uint64, error) { return s.lastIndex(), nil }

// FirstIndex implements raft.Storage.
func (s *storage) FirstIndex() (uint64, error) { return s.firstIndex(), nil }

// Snapshot implements raft.Storage. The data is shared, never modified.
func (s *storage) Snapshot() (*raftpb.Snapshot, error) {
	return &raftpb.Snapshot{
		Data:     s.snapshot.GetData(),
		Metadata: proto.Clone(s.snapshot.GetMetadata()).(*raftpb.SnapshotMetadata),
	}, nil
}

// append durably writes entries, first removing any entries at or after
// entries[0] (a conflicting suffix from an older leader).
func (s *storage) append(entries []*raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	first := s.firstIndex()
	if last := entries[len(entries)-1].GetIndex(); last < first {
		return nil
	}
	if entries[0].GetIndex() < first {
		entries = entries[first-entries[0].GetIndex():]
	}
	at := entries[0].GetIndex() - s.entries[0].GetIndex()
	if at > uint64(len(s.entries)) {
		return fmt.Errorf("quorum: append at index %d leaves a gap after index %d", entries[0].GetIndex(), s.lastIndex())
	}
	if at < uint64(len(s.entries)) {
		offset := int64(entries[0].GetIndex() - 1)
		if err := s.log.TruncateTo(offset); err != nil {
			return fmt.Errorf("truncate metadata log to offset %d: %w", offset, err)
		}
		if leo := s.log.LogEndOffset(); leo != offset {
			return fmt.Errorf("quorum: metadata log truncated to %d, want %d", leo, offset)
		}
		s.entries = s.entries[:at:at]
		defer s.recomputeLatest()
	}
	nowMs := s.nowMs()
	var buf []byte
	for i, e := range entries {
		var err error
		if buf, err = appendEntryBatch(buf, e, nowMs); err != nil {
			return err
		}
		if len(buf) >= appendChunkBytes || i == len(entries)-1 {
			if err := s.log.AppendAsFollower(buf); err != nil {
				return fmt.Errorf("append to metadata log: %w", err)
			}
			buf = buf[:0]
		}
	}
	if err := s.log.Flush(); err != nil {
		return fmt.Errorf("flush metadata log: %w", err)
	}
	s.entries = append(s.entries, entries...)
	for _, e := range entries {
		s.noteEntry(e)
	}
	if invariants {
		s.checkInvariants()
	}
	return nil
}

// setHardState records raft's HardState, writing quorum-state when the term
// or vote changed. A commit-only change stays in memory until the next write.
func (s *storage) setHardState(hs *raftpb.HardState) error {
	if raft.IsEmptyHardState(hs) {
		return nil
	}
	s.hardState = proto.Clone(hs).(*raftpb.HardState)
	if hs.GetTerm() == s.persisted.GetTerm() && hs.GetVote() == s.persisted.GetVote() {
		return nil
	}
	return s.persistHardState()
}

func (s *storage) persistHardState() error {
	hs := s.hardState
	st := newQuorumState(s.nodeID, s.bootstrap.Voters(), hs.GetTerm(), hs.GetVote(), min(hs.GetCommit(), s.lastIndex()))
	if err := writeQuorumState(s.fs, s.dir, st); err != nil {
		return err
	}
	s.persisted = proto.Clone(hs).(*raftpb.HardState)
	return nil
}

// applySnapshot installs a snapshot received from the leader: it replaces
// the whole log.
func (s *storage) applySnapshot(snap *raftpb.Snapshot) error {
	meta := snap.GetMetadata()
	if meta.GetIndex() <= s.snapshot.GetMetadata().GetIndex() {
		return nil
	}
	voters, _, err := decodeSnapshotPayload(snap.GetData())
	if err != nil {
		return fmt.Errorf("snapshot from the leader: %w", err)
	}
	snap = &raftpb.Snapshot{Data: snap.GetData(), Metadata: &raftpb.SnapshotMetadata{
		Index: new(meta.GetIndex()), Term: new(meta.GetTerm()), ConfState: voters.confState(),
	}}
	// Snapshot first: a crash before the log is emptied leaves entries that
	// loadEntries recognises as older than the snapshot.
	if err := writeSnapshotFile(s.fs, s.dir, snap); err != nil {
		return err
	}
	if err := s.log.TruncateFullyAndStartAt(int64(meta.GetIndex())); err != nil {
		return fmt.Errorf("empty metadata log for snapshot: %w", err)
	}
	s.snapshot = snap
	s.entries = []*raftpb.Entry{{Index: new(meta.GetIndex()), Term: new(meta.GetTerm())}}
	s.base = voters.fillEndpoints(s.static)
	s.recomputeLatest()
	return removeSnapshotsBefore(s.fs, s.dir, meta.GetIndex())
}

// createSnapshot writes data as the snapshot at index (at most the applied
// index), with voters the voter set applied at index, and compacts the log
// up to it.
func (s *storage) createSnapshot(index uint64, voters VoterSet, data []byte) error {
	term, err := s.Term(index)
	if err != nil || index <= s.entries[0].GetIndex() {
		return fmt.Errorf("quorum: cannot snapshot at index %d (log holds %d..%d): %v", index, s.firstIndex(), s.lastIndex(), err)
	}
	snap := &raftpb.Snapshot{Data: encodeSnapshotPayload(voters, data), Metadata: &raftpb.SnapshotMetadata{
		Index: new(index), Term: new(term), ConfState: voters.confState(),
	}}
	if err := writeSnapshotFile(s.fs, s.dir, snap); err != nil {
		return err
	}
	s.snapshot = snap
	s.base = voters
	first := s.entries[0].GetIndex()
	rest := s.entries[index-first+1:]
	entries := make([]*raftpb.Entry, 1, 1+len(rest))
	entries[0] = &raftpb.Entry{Index: new(index), Term: new(term)}
	s.entries = append(entries, rest...)
	s.log.UpdateHighWatermark(int64(index))
	if err := s.log.DeleteRecordsBefore(int64(index)); err != nil {
		return fmt.Errorf("compact metadata log to offset %d: %w", index, err)
	}
	return removeSnapshotsBefore(s.fs, s.dir, index)
}

// close writes the latest commit index and closes the log.
func (s *storage) close() error {
	var err error
	if s.hardState.GetCommit() != s.persisted.GetCommit() && s.log.Err() == nil {
		err = s.persistHardState()
	}
	return errors.Join(err, s.log.Close())
}

// checkInvariants panics when the cache and the log disagree (invariants
// builds only).
func (s *storage) checkInvariants() {
	for i, e := range s.entries {
		if e.GetIndex() != s.entries[0].GetIndex()+uint64(i) {
			panic(fmt.Sprintf("quorum: entry %d has index %d after dummy %d", i, e.GetIndex(), s.entries[0].GetIndex()))
		}
		if i > 0 && e.GetTerm() < s.entries[i-1].GetTerm() {
			panic(fmt.Sprintf("quorum: term %d at index %d after term %d", e.GetTerm(), e.GetIndex(), s.entries[i-1].GetTerm()))
		}
	}
	if leo := s.log.LogEndOffset(); uint64(leo) != s.lastIndex() {
		panic(fmt.Sprintf("quorum: log end offset %d, last index %d", leo, s.lastIndex()))
	}
}
