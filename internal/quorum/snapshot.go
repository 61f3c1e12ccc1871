package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Snapshot file layout (see the package doc). Version 0 files, which
// carried the voter ids only, are still read.
const (
	snapshotSuffix      = ".checkpoint"
	snapshotMagic       = "SQSN"
	snapshotVersion0    = 0
	snapshotVersion     = 1
	snapshotFixedBytes  = 4 + 2 + 8 + 8 + 8 + 4 // without the payload
	snapshotV0Fixed     = 4 + 2 + 8 + 8 + 4 + 8 + 4
	maxSnapshotVoters   = 1 << 10
	maxVotersRecordSize = 1 << 20
	snapshotNameDigits  = 20
	snapshotEpochDigits = 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshotFileName is "<index, 20 digits>-<term, 10 digits>.checkpoint".
func snapshotFileName(index, term uint64) string {
	return fmt.Sprintf("%0*d-%0*d%s", snapshotNameDigits, index, snapshotEpochDigits, term, snapshotSuffix)
}

// parseSnapshotFileName returns the index and term a snapshot file name
// carries.
func parseSnapshotFileName(name string) (index, term uint64, ok bool) {
	base, found := strings.CutSuffix(name, snapshotSuffix)
	if !found {
		return 0, 0, false
	}
	indexText, termText, found := strings.Cut(base, "-")
	if !found || len(indexText) != snapshotNameDigits || len(termText) < snapshotEpochDigits {
		return 0, 0, false
	}
	index, err := strconv.ParseUint(indexText, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	term, err = strconv.ParseUint(termText, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return index, term, true
}

// encodeSnapshot renders a snapshot file (version 1). The snapshot's data is
// the payload: voter set and state machine snapshot.
func encodeSnapshot(snap *raftpb.Snapshot) []byte {
	meta := snap.GetMetadata()
	payload := snap.GetData()
	b := make([]byte, 0, snapshotFixedBytes+len(payload))
	b = append(b, snapshotMagic...)
	b = binary.BigEndian.AppendUint16(b, snapshotVersion)
	b = binary.BigEndian.AppendUint64(b, meta.GetIndex())
	b = binary.BigEndian.AppendUint64(b, meta.GetTerm())
	b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeSnapshot parses and checks a snapshot file. The returned snapshot's
// data is the payload (voter set, then state machine data), its ConfState
// the payload's voter set; a version 1 payload aliases b.
func decodeSnapshot(b []byte) (*raftpb.Snapshot, error) {
	if len(b) < 4+2+4 {
		return nil, fmt.Errorf("%w: snapshot of %d bytes is shorter than its header", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: snapshot crc %08x, computed %08x", ErrCorrupt, sum, got)
	}
	if string(body[:4]) != snapshotMagic {
		return nil, fmt.Errorf("%w: snapshot magic %q", ErrCorrupt, body[:4])
	}
	var index, term uint64
	var payload []byte
	switch v := binary.BigEndian.Uint16(body[4:]); v {
	case snapshotVersion0:
		var err error
		if index, term, payload, err = decodeSnapshotV0(body); err != nil {
			return nil, err
		}
	case snapshotVersion:
		if len(b) < snapshotFixedBytes {
			return nil, fmt.Errorf("%w: snapshot of %d bytes is shorter than its header", ErrCorrupt, len(b))
		}
		index = binary.BigEndian.Uint64(body[6:])
		term = binary.BigEndian.Uint64(body[14:])
		length := binary.BigEndian.Uint64(body[22:])
		payload = body[30:]
		if length != uint64(len(payload)) {
			return nil, fmt.Errorf("%w: snapshot payload of %d bytes, %d present", ErrCorrupt, length, len(payload))
		}
	default:
		return nil, fmt.Errorf("%w: snapshot version %d, want %d", ErrCorrupt, v, snapshotVersion)
	}
	if index == 0 {
		return nil, fmt.Errorf("%w: snapshot at index 0", ErrCorrupt)
	}
	voters, _, err := decodeSnapshotPayload(payload)
	if err != nil {
		return nil, err
	}
	return &raftpb.Snapshot{
		Data: payload,
		Metadata: &raftpb.SnapshotMetadata{
			Index:     new(index),
			Term:      new(term),
			ConfState: voters.confState(),
		},
	}, nil
}

// decodeSnapshotV0 reads the body of a version 0 file (voter ids, then the
// state machine data) and returns its payload.
func decodeSnapshotV0(body []byte) (index, term uint64, payload []byte, err error) {
	if len(body)+4 < snapshotV0Fixed {
		return 0, 0, nil, fmt.Errorf("%w: snapshot of %d bytes is shorter than its header", ErrCorrupt, len(body)+4)
	}
	index = binary.BigEndian.Uint64(body[6:])
	term = binary.BigEndian.Uint64(body[14:])
	voterCount := binary.BigEndian.Uint32(body[22:])
	rest := body[26:]
	if voterCount == 0 || voterCount > maxSnapshotVoters || uint64(len(rest)) < 4*uint64(voterCount)+8 {
		return 0, 0, nil, fmt.Errorf("%w: snapshot header: index %d, %d voters in %d bytes", ErrCorrupt, index, voterCount, len(rest))
	}
	var voters VoterSet
	prev := uint32(0)
	for i := range voterCount {
		id := binary.BigEndian.Uint32(rest[4*i:])
		if id == 0 || id > 1<<31-1 || id <= prev {
			return 0, 0, nil, fmt.Errorf("%w: snapshot voter id %d after %d", ErrCorrupt, id, prev)
		}
		prev = id
		voters.Members = append(voters.Members, Member{ID: int32(id)})
	}
	rest = rest[4*voterCount:]
	dataLength := binary.BigEndian.Uint64(rest)
	rest = rest[8:]
	if dataLength != uint64(len(rest)) {
		return 0, 0, nil, fmt.Errorf("%w: snapshot data of %d bytes, %d present", ErrCorrupt, dataLength, len(rest))
	}
	return index, term, encodeSnapshotPayload(voters, rest), nil
}

// writeSnapshotFile writes snap into dir atomically.
func writeSnapshotFile(fsys vfs.FS, dir string, snap *raftpb.Snapshot) error {
	meta := snap.GetMetadata()
	return writeFileAtomic(fsys, filepath.Join(dir, snapshotFileName(meta.GetIndex(), meta.GetTerm())), encodeSnapshot(snap))
}

// snapshotFile is a snapshot file found in a directory.
type snapshotFile struct {
	name        string
	index, term uint64
}

// listSnapshots returns the snapshot files of dir, newest first.
func listSnapshots(fsys vfs.FS, dir string) ([]snapshotFile, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: list %s: %w", log.ErrStorage, dir, err)
	}
	var files []snapshotFile
	for _, e := range entries {
		if index, term, ok := parseSnapshotFileName(e.Name()); ok && !e.IsDir() {
			files = append(files, snapshotFile{name: e.Name(), index: index, term: term})
		}
	}
	slices.SortFunc(files, func(a, b snapshotFile) int {
		if a.index != b.index {
			return -compareUint64(a.index, b.index)
		}
		return -compareUint64(a.term, b.term)
	})
	return files, nil
}

func compareUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// loadLatestSnapshot reads the newest snapshot of dir, or returns nil when
// there is none. A newest snapshot that is corrupt is an error: the log below
// it is gone, so an older one cannot stand in.
func loadLatestSnapshot(fsys vfs.FS, dir string, maxBytes int) (*raftpb.Snapshot, error) {
	files, err := listSnapshots(fsys, dir)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	latest := files[0]
	path := filepath.Join(dir, latest.name)
	b, err := readSmallFile(fsys, path, int64(maxBytes)+snapshotV0Fixed+maxVotersRecordSize)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	snap, err := decodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if snap.GetMetadata().GetIndex() != latest.index || snap.GetMetadata().GetTerm() != latest.term {
		return nil, fmt.Errorf("%w: snapshot %s holds index %d term %d", ErrCorrupt, path,
			snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm())
	}
	return snap, nil
}

// removeSnapshotsBefore deletes the snapshot files of dir older than index.
func removeSnapshotsBefore(fsys vfs.FS, dir string, index uint64) error {
	files, err := listSnapshots(fsys, dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if f.index >= index {
			continue
		}
		if err := fsys.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: remove %s: %w", log.ErrStorage, f.name, err)
		}
	}
	return nil
}
