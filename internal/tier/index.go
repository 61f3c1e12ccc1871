package tier

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// This file decodes the index objects of an upload, Kafka's index formats
// byte for byte (all integers big-endian):
//
//	offset.index  8 bytes an entry: relative offset uint32, position uint32
//	time.index   12 bytes an entry: timestamp int64, relative offset uint32
//
// Relative offsets are from the segment's base offset. Both ascend; a
// trailing run of zero entries is preallocated space a roll did not trim,
// and ends the index.

// OffsetIndexEntry is one offset index entry.
type OffsetIndexEntry struct {
	RelativeOffset uint32
	Position       uint32
}

// TimeIndexEntry is one time index entry.
type TimeIndexEntry struct {
	TimestampMs    int64
	RelativeOffset uint32
}

// DecodeOffsetIndex parses an offset.index object. Entries must ascend in
// both offset and position.
func DecodeOffsetIndex(b []byte) ([]OffsetIndexEntry, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("%w: offset index of %d bytes", ErrCorruptMetadata, len(b))
	}
	out := make([]OffsetIndexEntry, 0, len(b)/8)
	for i := 0; i < len(b); i += 8 {
		e := OffsetIndexEntry{RelativeOffset: binary.BigEndian.Uint32(b[i:]), Position: binary.BigEndian.Uint32(b[i+4:])}
		if n := len(out); n > 0 {
			if e == (OffsetIndexEntry{}) {
				break
			}
			if e.RelativeOffset <= out[n-1].RelativeOffset || e.Position <= out[n-1].Position {
				return nil, fmt.Errorf("%w: offset index entry %d out of order", ErrCorruptMetadata, n)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// DecodeTimeIndex parses a time.index object. Entries must ascend in both
// timestamp and offset.
func DecodeTimeIndex(b []byte) ([]TimeIndexEntry, error) {
	if len(b)%12 != 0 {
		return nil, fmt.Errorf("%w: time index of %d bytes", ErrCorruptMetadata, len(b))
	}
	out := make([]TimeIndexEntry, 0, len(b)/12)
	for i := 0; i < len(b); i += 12 {
		e := TimeIndexEntry{TimestampMs: int64(binary.BigEndian.Uint64(b[i:])), RelativeOffset: binary.BigEndian.Uint32(b[i+8:])}
		if n := len(out); n > 0 {
			if e == (TimeIndexEntry{}) {
				break
			}
			if e.TimestampMs < out[n-1].TimestampMs || e.RelativeOffset < out[n-1].RelativeOffset {
				return nil, fmt.Errorf("%w: time index entry %d out of order", ErrCorruptMetadata, n)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// lookupPosition returns the position of the last indexed batch starting at
// or before relativeOffset, 0 when none is.
func lookupPosition(entries []OffsetIndexEntry, relativeOffset uint32) int64 {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].RelativeOffset > relativeOffset })
	if i == 0 {
		return 0
	}
	return int64(entries[i-1].Position)
}

// lookupTimestamp returns the relative offset to start scanning from for
// the first record with timestamp >= ts: the offset of the last entry
// whose timestamp is below ts, 0 when none is.
func lookupTimestamp(entries []TimeIndexEntry, ts int64) uint32 {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].TimestampMs >= ts })
	if i == 0 {
		return 0
	}
	return entries[i-1].RelativeOffset
}
