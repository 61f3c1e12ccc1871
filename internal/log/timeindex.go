package log

import (
	"encoding/binary"
	"fmt"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// timeIndex maps timestamps to offsets in a segment. Entry (t, o) means the
// largest timestamp of any batch up to and including the one ending at offset
// o is t: every record with a timestamp above t comes after o. Timestamps
// increase strictly from entry to entry; an entry is added only when the
// segment's max timestamp grows.
type timeIndex struct {
	indexFile

	// lastTimestamp and lastOffset cache the last entry for the writer.
	// Only touched under the owning Log's append lock.
	lastTimestamp, lastOffset int64
}

func openTimeIndex(fsys vfs.FS, path string, baseOffset int64, maxBytes int32, writable bool) (*timeIndex, error) {
	t := &timeIndex{}
	if err := t.open(fsys, path, baseOffset, timeIndexEntrySize, maxBytes, writable); err != nil {
		return nil, err
	}
	t.lastTimestamp, t.lastOffset = t.lastEntry()
	return t, nil
}

func timeEntry(data []byte, baseOffset int64, i int) (timestamp, offset int64) {
	e := data[i*timeIndexEntrySize:]
	return int64(binary.BigEndian.Uint64(e)), baseOffset + int64(int32(binary.BigEndian.Uint32(e[8:])))
}

// isFull keeps the last slot for the entry written when the segment closes.
func (x *timeIndex) isFull() bool { return int(x.entries.Load()) >= x.maxEntries()-1 }

// lastEntry returns the last entry, or (noTimestamp, baseOffset) when empty.
func (x *timeIndex) lastEntry() (timestamp, offset int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int(x.entries.Load())
	if n == 0 || x.mu.data == nil {
		return noTimestamp, x.baseOffset
	}
	return timeEntry(x.mu.data, x.baseOffset, n-1)
}

// maybeAppend adds (timestamp, offset) if timestamp is above the last entry's.
// skipFullCheck lets the closing entry use the reserved last slot.
func (x *timeIndex) maybeAppend(timestamp, offset int64, skipFullCheck bool) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int(x.entries.Load())
	if !skipFullCheck && n >= len(x.mu.data)/timeIndexEntrySize-1 {
		return errIndexFull
	}
	if n > 0 && offset < x.lastOffset {
		return fmt.Errorf("log: time index append of offset %d below last offset %d", offset, x.lastOffset)
	}
	if n > 0 && timestamp < x.lastTimestamp {
		return fmt.Errorf("log: time index append of timestamp %d below last timestamp %d", timestamp, x.lastTimestamp)
	}
	if timestamp <= x.lastTimestamp {
		return nil
	}
	if (n+1)*timeIndexEntrySize > len(x.mu.data) {
		return errIndexFull
	}
	rel, ok := relativeOffset(x.baseOffset, offset)
	if !ok {
		return fmt.Errorf("log: time index offset %d out of range for base %d", offset, x.baseOffset)
	}
	e := x.mu.data[n*timeIndexEntrySize:]
	binary.BigEndian.PutUint64(e, uint64(timestamp))
	binary.BigEndian.PutUint32(e[8:], rel)
	x.lastTimestamp, x.lastOffset = timestamp, offset
	x.entries.Store(int32(n + 1))
	return nil
}

// lookup returns the last entry whose timestamp is <= target, or
// (noTimestamp, baseOffset) when there is none.
func (x *timeIndex) lookup(target int64) (timestamp, offset int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	data := x.mu.data
	n := int(x.entries.Load())
	if data == nil {
		return noTimestamp, x.baseOffset
	}
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int64(binary.BigEndian.Uint64(data[mid*timeIndexEntrySize:])) <= target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return noTimestamp, x.baseOffset
	}
	return timeEntry(data, x.baseOffset, lo-1)
}

// truncateTo removes every entry whose offset is >= offset.
func (x *timeIndex) truncateTo(offset int64) {
	x.mu.RLock()
	data := x.mu.data
	n := int(x.entries.Load())
	keep := 0
	if data != nil {
		// Offsets are non-decreasing: find the first entry at or above offset.
		lo, hi := 0, n
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if _, o := timeEntry(data, x.baseOffset, mid); o < offset {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		keep = lo
	}
	x.entries.Store(int32(keep))
	x.mu.RUnlock()
	x.lastTimestamp, x.lastOffset = x.lastEntry()
}

// reset removes every entry.
func (x *timeIndex) reset() {
	x.entries.Store(0)
	x.lastTimestamp, x.lastOffset = noTimestamp, x.baseOffset
}

// resize changes the file size and refreshes the cached last entry.
func (x *timeIndex) resize(n int64, writable bool) error {
	err := x.indexFile.resize(n, writable)
	x.lastTimestamp, x.lastOffset = x.lastEntry()
	return err
}

// trimToValidSize shrinks the file to its valid entries.
func (x *timeIndex) trimToValidSize() error {
	return x.resize(int64(x.entries.Load())*timeIndexEntrySize, false)
}

// sanityCheck rejects an index whose last entries are out of order.
func (x *timeIndex) sanityCheck() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int(x.entries.Load())
	if n == 0 {
		return nil
	}
	firstTs, _ := timeEntry(x.mu.data, x.baseOffset, 0)
	lastTs, lastOffset := timeEntry(x.mu.data, x.baseOffset, n-1)
	if lastTs < firstTs || lastOffset < x.baseOffset {
		return corruptError(fmt.Sprintf("time index %s: last entry (%d, %d) below first timestamp %d or base %d",
			x.mu.path, lastTs, lastOffset, firstTs, x.baseOffset), nil)
	}
	if n >= 2 {
		prevTs, prevOffset := timeEntry(x.mu.data, x.baseOffset, n-2)
		if prevTs >= lastTs || prevOffset > lastOffset {
			return corruptError(fmt.Sprintf("time index %s: entries not increasing at slot %d", x.mu.path, n-1), nil)
		}
	}
	return nil
}
