package log

import (
	"hash/maphash"
	"math/bits"
)

// offsetMap maps record keys to the largest offset seen for each, for one
// cleaning pass (Kafka's SkimpyOffsetMap). Keys are not stored: a key is
// known by a 128-bit hash (two maphash sums with independent random seeds),
// so an entry takes offsetMapEntryBytes whatever the key's size, and two
// keys share an entry with probability about n²/2¹²⁹ for n keys.
//
// The table is open-addressed with linear probing. It starts small and
// doubles as keys arrive, up to maxSlots (the thread's share of
// log.cleaner.dedupe.buffer.size); it never holds more than maxEntries keys
// (maxSlots times log.cleaner.io.buffer.load.factor), and reports itself full
// at that point so the pass ends there.
//
// Not safe for concurrent use: each cleaner thread owns one.
type offsetMap struct {
	seedLow, seedHigh maphash.Seed
	// slots is the table; an entry with offsetPlusOne == 0 is free.
	// Invariant: used == the number of entries with offsetPlusOne != 0.
	slots []offsetMapEntry
	used  int
	// maxSlots bounds len(slots); maxEntries bounds used.
	// Invariant: used <= maxEntries <= maxSlots.
	maxSlots, maxEntries int
	loadFactor           float64
	// latestOffset is the last offset the pass building the map covered
	// (-1 before any): records above it were not looked at, so the cleaner
	// keeps them whatever their key.
	latestOffset int64
}

type offsetMapEntry struct {
	hashLow, hashHigh uint64
	offsetPlusOne     int64
}

const (
	// offsetMapEntryBytes is the memory of one slot.
	offsetMapEntryBytes = 24
	// offsetMapInitialSlots is the table's size before it grows.
	offsetMapInitialSlots = 1 << 10
)

// newOffsetMap returns an empty map using at most memoryBytes for its table,
// filled to at most loadFactor. It always has room for at least one key.
func newOffsetMap(memoryBytes int64, loadFactor float64) *offsetMap {
	maxSlots := int(min(max(memoryBytes/offsetMapEntryBytes, 2), int64(1)<<40))
	m := &offsetMap{
		seedLow: maphash.MakeSeed(), seedHigh: maphash.MakeSeed(),
		maxSlots: maxSlots, loadFactor: loadFactor, latestOffset: -1,
	}
	m.maxEntries = max(int(float64(maxSlots)*loadFactor), 1)
	m.maxEntries = min(m.maxEntries, maxSlots-1)
	return m
}

// clear empties the map for the next pass, keeping its table.
func (m *offsetMap) clear() {
	clear(m.slots)
	m.used = 0
	m.latestOffset = -1
}

// size is the number of keys held.
func (m *offsetMap) size() int { return m.used }

// full reports that no further key may be added.
func (m *offsetMap) full() bool { return m.used >= m.maxEntries }

// utilization is the share of the map's bound in use.
func (m *offsetMap) utilization() float64 { return float64(m.used) / float64(m.maxSlots) }

func (m *offsetMap) hash(key []byte) (uint64, uint64) {
	return maphash.Bytes(m.seedLow, key), maphash.Bytes(m.seedHigh, key)
}

// home is the first slot probed for a hash in a table of n slots.
func home(hashLow uint64, n int) int {
	hi, _ := bits.Mul64(hashLow, uint64(n))
	return int(hi)
}

// put records offset as the latest offset of key. The caller checks full
// first; put on a full map of a new key is refused (false).
func (m *offsetMap) put(key []byte, offset int64) bool {
	low, high := m.hash(key)
	if m.used+1 > int(float64(len(m.slots))*m.loadFactor) && len(m.slots) < m.maxSlots {
		m.grow()
	}
	n := len(m.slots)
	for i := home(low, n); ; i++ {
		if i == n {
			i = 0
		}
		e := &m.slots[i]
		if e.offsetPlusOne == 0 {
			if m.used >= m.maxEntries {
				return false
			}
			*e = offsetMapEntry{hashLow: low, hashHigh: high, offsetPlusOne: offset + 1}
			m.used++
			return true
		}
		if e.hashLow == low && e.hashHigh == high {
			e.offsetPlusOne = offset + 1
			return true
		}
	}
}

// get returns the latest offset recorded for key, or -1.
func (m *offsetMap) get(key []byte) int64 {
	if m.used == 0 {
		return -1
	}
	low, high := m.hash(key)
	n := len(m.slots)
	for i := home(low, n); ; i++ {
		if i == n {
			i = 0
		}
		e := &m.slots[i]
		if e.offsetPlusOne == 0 {
			return -1
		}
		if e.hashLow == low && e.hashHigh == high {
			return e.offsetPlusOne - 1
		}
	}
}

// updateLatestOffset raises latestOffset to offset.
func (m *offsetMap) updateLatestOffset(offset int64) { m.latestOffset = max(m.latestOffset, offset) }

// grow doubles the table (up to maxSlots) and reinserts every entry.
func (m *offsetMap) grow() {
	n := min(max(2*len(m.slots), offsetMapInitialSlots), m.maxSlots)
	old := m.slots
	m.slots = make([]offsetMapEntry, n)
	for _, e := range old {
		if e.offsetPlusOne == 0 {
			continue
		}
		for i := home(e.hashLow, n); ; i++ {
			if i == n {
				i = 0
			}
			if m.slots[i].offsetPlusOne == 0 {
				m.slots[i] = e
				break
			}
		}
	}
}
