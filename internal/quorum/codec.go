package quorum

import (
	"encoding/binary"
	"fmt"
	"math"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/samsa-streaming/samsa/internal/record"
)

// Proposal layout (see the package doc).
const (
	proposalVersion     = 0
	proposalHeaderBytes = 1 + 8 + 4
	valueHeaderBytes    = 4
)

// encodeProposal returns the entry data for values proposed with id.
func encodeProposal(id uint64, values [][]byte) []byte {
	n := proposalHeaderBytes
	for _, v := range values {
		n += valueHeaderBytes + len(v)
	}
	b := make([]byte, proposalHeaderBytes, n)
	b[0] = proposalVersion
	binary.BigEndian.PutUint64(b[1:], id)
	binary.BigEndian.PutUint32(b[9:], uint32(len(values)))
	for _, v := range values {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

// proposalBytes is the size of encodeProposal's result.
func proposalBytes(values [][]byte) int {
	n := proposalHeaderBytes
	for _, v := range values {
		n += valueHeaderBytes + len(v)
	}
	return n
}

// decodeProposal parses entry data written by encodeProposal. The values are
// copied into one fresh buffer, so the caller may keep them.
func decodeProposal(data []byte) (id uint64, values [][]byte, err error) {
	if len(data) < proposalHeaderBytes {
		return 0, nil, fmt.Errorf("%w: proposal of %d bytes is shorter than its header", ErrCorrupt, len(data))
	}
	if data[0] != proposalVersion {
		return 0, nil, fmt.Errorf("%w: proposal version %d, want %d", ErrCorrupt, data[0], proposalVersion)
	}
	id = binary.BigEndian.Uint64(data[1:])
	count := binary.BigEndian.Uint32(data[9:])
	rest := data[proposalHeaderBytes:]
	// Each value takes at least its length field: never trust count for an
	// allocation beyond what the bytes can hold.
	if count == 0 || uint64(count) > uint64(len(rest)/valueHeaderBytes) {
		return 0, nil, fmt.Errorf("%w: proposal claims %d values in %d bytes", ErrCorrupt, count, len(rest))
	}
	buf := make([]byte, len(rest)-int(count)*valueHeaderBytes)
	values = make([][]byte, 0, count)
	for i := uint32(0); i < count; i++ {
		if len(rest) < valueHeaderBytes {
			return 0, nil, fmt.Errorf("%w: proposal value %d truncated", ErrCorrupt, i)
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[valueHeaderBytes:]
		if uint64(n) > uint64(len(rest)) || int(n) > len(buf) {
			return 0, nil, fmt.Errorf("%w: proposal value %d of %d bytes, %d remain", ErrCorrupt, i, n, len(rest))
		}
		v := buf[:n:n]
		copy(v, rest[:n])
		buf, rest = buf[n:], rest[n:]
		values = append(values, v)
	}
	if len(rest) != 0 {
		return 0, nil, fmt.Errorf("%w: %d bytes after the last proposal value", ErrCorrupt, len(rest))
	}
	return id, values, nil
}

// appendEntryBatch appends the RecordBatch v2 that stores entry e (see the
// package doc) to dst.
func appendEntryBatch(dst []byte, e *raftpb.Entry, nowMs int64) ([]byte, error) {
	if e.GetIndex() == 0 || e.GetIndex() > math.MaxInt64 {
		return dst, fmt.Errorf("quorum: entry index %d cannot be stored", e.GetIndex())
	}
	if e.GetTerm() > math.MaxInt32 {
		return dst, fmt.Errorf("quorum: term %d does not fit a partition leader epoch", e.GetTerm())
	}
	value := make([]byte, 1+len(e.GetData()))
	value[0] = byte(e.GetType())
	copy(value[1:], e.GetData())
	opts := record.DefaultBuildOptions()
	opts.BaseOffset = int64(e.GetIndex() - 1)
	opts.PartitionLeaderEpoch = int32(e.GetTerm())
	opts.BaseTimestamp = nowMs
	return record.AppendBatch(dst, opts, []record.Record{{Value: value}})
}

// decodeEntryBatch checks that batch is exactly one whole entry batch (CRC
// included) and returns the entry.
func decodeEntryBatch(batch []byte) (*raftpb.Entry, error) {
	h, err := record.Verify(batch)
	if err != nil {
		return nil, fmt.Errorf("%w: entry batch: %w", ErrCorrupt, err)
	}
	switch {
	case h.Size() != len(batch):
		return nil, fmt.Errorf("%w: entry batch of %d bytes in %d", ErrCorrupt, h.Size(), len(batch))
	case h.BaseOffset < 0 || h.BaseOffset == math.MaxInt64:
		return nil, fmt.Errorf("%w: entry batch at offset %d", ErrCorrupt, h.BaseOffset)
	case h.PartitionLeaderEpoch < 0:
		return nil, fmt.Errorf("%w: entry batch at offset %d has epoch %d", ErrCorrupt, h.BaseOffset, h.PartitionLeaderEpoch)
	case h.RecordCount != 1 || h.LastOffsetDelta != 0:
		return nil, fmt.Errorf("%w: entry batch at offset %d holds %d records", ErrCorrupt, h.BaseOffset, h.RecordCount)
	case h.Attributes != 0:
		return nil, fmt.Errorf("%w: entry batch at offset %d has attributes %#x", ErrCorrupt, h.BaseOffset, h.Attributes)
	}
	records, err := record.ReadRecords(batch, len(batch))
	if err != nil {
		return nil, fmt.Errorf("%w: entry batch at offset %d: %w", ErrCorrupt, h.BaseOffset, err)
	}
	if len(records) != 1 || len(records[0].Value) == 0 || records[0].OffsetDelta != 0 {
		return nil, fmt.Errorf("%w: entry batch at offset %d has no entry record", ErrCorrupt, h.BaseOffset)
	}
	value := records[0].Value
	typ := raftpb.EntryType(value[0])
	if _, known := raftpb.EntryType_name[int32(typ)]; !known {
		return nil, fmt.Errorf("%w: entry at offset %d has type %d", ErrCorrupt, h.BaseOffset, value[0])
	}
	var data []byte
	if len(value) > 1 {
		data = append([]byte(nil), value[1:]...)
	}
	return &raftpb.Entry{
		Index: new(uint64(h.BaseOffset) + 1),
		Term:  new(uint64(h.PartitionLeaderEpoch)),
		Type:  new(typ),
		Data:  data,
	}, nil
}
