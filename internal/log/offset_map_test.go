package log

import (
	"fmt"
	"testing"
)

// TestOffsetMap: the map keeps the latest offset per key through growth,
// refuses new keys once it holds maxEntries, and starts over after clear.
func TestOffsetMap(t *testing.T) {
	m := newOffsetMap(100_000*offsetMapEntryBytes, 0.9)
	if got := m.get([]byte("absent")); got != -1 {
		t.Fatalf("get on empty map = %d", got)
	}
	want := map[string]int64{}
	for i := 0; i < 50_000; i++ {
		key := fmt.Sprintf("key-%d", i%20_000)
		if !m.put([]byte(key), int64(i)) {
			t.Fatalf("put %d refused at size %d", i, m.size())
		}
		want[key] = int64(i)
	}
	if m.size() != len(want) {
		t.Fatalf("size %d, want %d", m.size(), len(want))
	}
	for k, off := range want {
		if got := m.get([]byte(k)); got != off {
			t.Fatalf("get(%s) = %d, want %d", k, got, off)
		}
	}
	if got := m.get([]byte("key-20000")); got != -1 {
		t.Fatalf("get of a key never put = %d", got)
	}
	// The empty key is a key like any other.
	m.put([]byte{}, 7)
	if m.get(nil) != 7 || m.get([]byte{}) != 7 {
		t.Fatal("empty key not found")
	}
	m.clear()
	if m.size() != 0 || m.get([]byte("key-1")) != -1 || m.latestOffset != -1 {
		t.Fatal("clear left entries")
	}
}

// TestOffsetMapBound: a map bounded to a few slots fills at its load factor
// and says so; updates of keys it holds still succeed.
func TestOffsetMapBound(t *testing.T) {
	m := newOffsetMap(100*offsetMapEntryBytes, 0.5)
	if m.maxEntries != 50 {
		t.Fatalf("maxEntries %d, want 50", m.maxEntries)
	}
	for i := 0; !m.full(); i++ {
		if !m.put([]byte(fmt.Sprint(i)), int64(i)) {
			t.Fatalf("put %d refused before full", i)
		}
	}
	if m.size() != 50 || len(m.slots) > 100 {
		t.Fatalf("size %d slots %d", m.size(), len(m.slots))
	}
	if m.put([]byte("new"), 1) {
		t.Fatal("full map took a new key")
	}
	if !m.put([]byte("3"), 99) || m.get([]byte("3")) != 99 {
		t.Fatal("full map refused an update")
	}
	// A map of one slot's memory still holds a key.
	tiny := newOffsetMap(1, 0.9)
	if !tiny.put([]byte("k"), 1) || tiny.get([]byte("k")) != 1 || !tiny.full() {
		t.Fatal("tiny map")
	}
}

// FuzzOffsetMap checks the map against a Go map for any sequence of keys.
func FuzzOffsetMap(f *testing.F) {
	f.Add([]byte("a\x00b\x00a\x00c"), uint16(8))
	f.Add([]byte{}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, slots uint16) {
		m := newOffsetMap(int64(slots)*offsetMapEntryBytes, 0.75)
		want := map[string]int64{}
		var key []byte
		for i, b := range data {
			if b != 0 {
				key = append(key, b)
				continue
			}
			_, known := want[string(key)]
			if m.full() && !known {
				if m.put(key, int64(i)) {
					t.Fatal("full map took a new key")
				}
			} else if m.put(key, int64(i)) {
				want[string(key)] = int64(i)
			} else {
				t.Fatalf("put refused below the bound (size %d of %d)", m.size(), m.maxEntries)
			}
			key = key[:0]
		}
		if m.size() != len(want) {
			t.Fatalf("size %d, want %d", m.size(), len(want))
		}
		for k, off := range want {
			if got := m.get([]byte(k)); got != off {
				t.Fatalf("get(%q) = %d, want %d", k, got, off)
			}
		}
	})
}
