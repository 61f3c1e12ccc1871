package partition

// # Producer-state snapshot (<offset>.snapshot), Kafka's version 1
//
// All integers big-endian:
//
//	offset  size  field
//	     0     2  version      int16: 1
//	     2     4  crc          uint32: CRC-32C of every byte from offset 6 to the end
//	     6     4  count        int32: number of entries
//	    10    46  entries[count]:
//	                 0  8  producerId             int64
//	                 8  2  epoch                  int16
//	                10  4  lastSequence           int32, -1 when no batch is cached
//	                14  8  lastOffset             int64, -1 when no batch is cached
//	                22  4  offsetDelta            int32: lastOffset - firstOffset of the last batch
//	                26  8  timestamp              int64: max timestamp of the last batch
//	                34  4  coordinatorEpoch       int32
//	                38  8  currentTxnFirstOffset  int64, -1 when no transaction is open
//
// Only the last batch of each producer is kept, as in Kafka: after a restart
// a retry of an older batch gets OUT_OF_ORDER_SEQUENCE_NUMBER rather than
// being recognised as a duplicate.

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
