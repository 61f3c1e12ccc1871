package quorum

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// quorumStateFile holds the raft HardState (see the package doc).
const quorumStateFile = "quorum-state"

// quorumState is the JSON of quorum-state.
type quorumState struct {
	DataVersion   int          `json:"data_version"`
	NodeID        int32        `json:"nodeId"`
	LeaderEpoch   uint64       `json:"leaderEpoch"`
	VotedID       int64        `json:"votedId"`
	CommitIndex   uint64       `json:"commitIndex"`
	CurrentVoters []stateVoter `json:"currentVoters"`
}

type stateVoter struct {
	VoterID int32 `json:"voterId"`
}

// voters returns the voter ids in ascending order.
func (s quorumState) voters() []uint64 {
	ids := make([]uint64, len(s.CurrentVoters))
	for i, v := range s.CurrentVoters {
		ids[i] = uint64(v.VoterID)
	}
	slices.Sort(ids)
	return ids
}

// newQuorumState returns the file contents for the given hard state.
func newQuorumState(nodeID int32, voters []uint64, term, vote, commit uint64) quorumState {
	s := quorumState{NodeID: nodeID, LeaderEpoch: term, VotedID: -1, CommitIndex: commit}
	if vote != 0 {
		s.VotedID = int64(vote)
	}
	for _, id := range voters {
		s.CurrentVoters = append(s.CurrentVoters, stateVoter{VoterID: int32(id)})
	}
	return s
}

// decodeQuorumState parses and checks quorum-state bytes.
func decodeQuorumState(b []byte) (quorumState, error) {
	var s quorumState
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%w: %s: %v", ErrCorrupt, quorumStateFile, err)
	}
	switch {
	case s.DataVersion != 0:
		return s, fmt.Errorf("%w: %s: data_version %d, want 0", ErrCorrupt, quorumStateFile, s.DataVersion)
	case s.NodeID <= 0:
		return s, fmt.Errorf("%w: %s: nodeId %d", ErrCorrupt, quorumStateFile, s.NodeID)
	case s.VotedID < -1 || s.VotedID > 1<<31-1 || s.VotedID == 0:
		return s, fmt.Errorf("%w: %s: votedId %d", ErrCorrupt, quorumStateFile, s.VotedID)
	case s.VotedID > 0 && s.LeaderEpoch == 0:
		return s, fmt.Errorf("%w: %s: a vote in epoch 0", ErrCorrupt, quorumStateFile)
	}
	for _, v := range s.CurrentVoters {
		if v.VoterID <= 0 {
			return s, fmt.Errorf("%w: %s: voter id %d", ErrCorrupt, quorumStateFile, v.VoterID)
		}
	}
	return s, nil
}

// readQuorumState reads dir/quorum-state; found is false when there is none.
func readQuorumState(fsys vfs.FS, dir string) (s quorumState, found bool, err error) {
	b, err := readSmallFile(fsys, filepath.Join(dir, quorumStateFile), maxQuorumStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	s, err = decodeQuorumState(b)
	return s, err == nil, err
}

// writeQuorumState replaces dir/quorum-state atomically.
func writeQuorumState(fsys vfs.FS, dir string, s quorumState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return writeFileAtomic(fsys, filepath.Join(dir, quorumStateFile), b)
}

// readSmallFile reads a whole file of at most maxBytes.
func readSmallFile(fsys vfs.FS, path string, maxBytes int64) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: open %s: %w", log.ErrStorage, path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: stat %s: %w", log.ErrStorage, path, err)
	}
	if st.Size() > maxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, at most %d expected", ErrCorrupt, path, st.Size(), maxBytes)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: read %s: %w", log.ErrStorage, path, err)
	}
	return b, nil
}

// writeFileAtomic replaces path with data so that a crash leaves the old or
// the new contents: write path.tmp, fsync it, rename it over path, fsync the
// directory.
func writeFileAtomic(fsys vfs.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("%w: create %s: %w", log.ErrStorage, tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("%w: write %s: %w", log.ErrStorage, tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%w: sync %s: %w", log.ErrStorage, tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: close %s: %w", log.ErrStorage, tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("%w: rename %s: %w", log.ErrStorage, tmp, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%w: sync dir of %s: %w", log.ErrStorage, path, err)
	}
	return nil
}
