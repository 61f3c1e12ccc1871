package partition

// The snapshot format is drawn in the package doc (partition.go).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
)

const (
	snapshotVersion      = 1
	snapshotHeaderBytes  = 10
	snapshotEntryBytes   = 46
	snapshotEntriesStart = 6
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptSnapshot marks a snapshot file that cannot be decoded; the
// partition deletes it and rebuilds from an older one or the log.
var ErrCorruptSnapshot = errors.New("partition: corrupt producer snapshot")

// encodeSnapshot renders the producers in Kafka's snapshot format, ordered
// by producer id.
func encodeSnapshot(producers map[int64]*producerEntry) []byte {
	ids := slices.Sorted(maps.Keys(producers))
	b := make([]byte, snapshotHeaderBytes, snapshotHeaderBytes+len(ids)*snapshotEntryBytes)
	binary.BigEndian.PutUint16(b, snapshotVersion)
	binary.BigEndian.PutUint32(b[snapshotEntriesStart:], uint32(len(ids)))
	for _, id := range ids {
		e := producers[id]
		lastSeq, lastOffset, delta, ts := noSequence, int64(-1), int32(0), e.lastTimestamp
		if last := e.last(); last != nil {
			lastSeq, lastOffset, delta = last.lastSeq, last.lastOffset, int32(last.lastOffset-last.firstOffset)
		}
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(lastSeq))
		b = binary.BigEndian.AppendUint64(b, uint64(lastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(delta))
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
		b = binary.BigEndian.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.currentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[snapshotEntriesStart:], crc32c))
	return b
}

// decodeSnapshot parses a snapshot file. Every error wraps
// ErrCorruptSnapshot.
func decodeSnapshot(b []byte) ([]producerEntry, error) {
	if len(b) < snapshotHeaderBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptSnapshot, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != snapshotVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorruptSnapshot, v)
	}
	if stored, computed := binary.BigEndian.Uint32(b[2:]), crc32.Checksum(b[snapshotEntriesStart:], crc32c); stored != computed {
		return nil, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptSnapshot, stored, computed)
	}
	count := int32(binary.BigEndian.Uint32(b[snapshotEntriesStart:]))
	if count < 0 || int64(len(b)-snapshotHeaderBytes) != int64(count)*snapshotEntryBytes {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrCorruptSnapshot, count, len(b))
	}
	out := make([]producerEntry, 0, count)
	seen := make(map[int64]bool, count)
	for pos := snapshotHeaderBytes; pos < len(b); pos += snapshotEntryBytes {
		r := b[pos : pos+snapshotEntryBytes]
		id := int64(binary.BigEndian.Uint64(r))
		lastSeq := int32(binary.BigEndian.Uint32(r[10:]))
		lastOffset := int64(binary.BigEndian.Uint64(r[14:]))
		delta := int32(binary.BigEndian.Uint32(r[22:]))
		e := emptyEntry(id)
		e.epoch = int16(binary.BigEndian.Uint16(r[8:]))
		e.lastTimestamp = int64(binary.BigEndian.Uint64(r[26:]))
		e.coordinatorEpoch = int32(binary.BigEndian.Uint32(r[34:]))
		e.currentTxnFirstOffset = max(int64(binary.BigEndian.Uint64(r[38:])), -1)
		if id < 0 || seen[id] {
			return nil, fmt.Errorf("%w: producer id %d invalid or repeated", ErrCorruptSnapshot, id)
		}
		seen[id] = true
		if lastOffset >= 0 {
			if delta < 0 || int64(delta) > lastOffset {
				return nil, fmt.Errorf("%w: producer %d offset delta %d at offset %d", ErrCorruptSnapshot, id, delta, lastOffset)
			}
			e.batches[0] = batchMetadata{
				firstSeq: firstSequenceOf(lastSeq, delta), lastSeq: lastSeq,
				firstOffset: lastOffset - int64(delta), lastOffset: lastOffset, timestamp: e.lastTimestamp,
			}
			e.count = 1
		}
		out = append(out, e)
	}
	return out, nil
}
