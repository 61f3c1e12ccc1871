package share

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestManagerPersistReleasesTheLock: while one write of a share-partition's
// state is out (a slow remote share coordinator), the share-partition
// still acquires and acknowledges; a second writer waits for the first and
// then writes the newest state once; a write that fails leaves the change
// to be written by the next; with nothing changed nothing is written.
func TestManagerPersistReleasesTheLock(t *testing.T) {
	m := NewManager()
	key := Key{Group: "g", Partition: 0}
	batch := []Batch{{BaseOffset: 0, LastOffset: 9}}
	if code := m.Do(key, func() (*Partition, int16) { return NewPartition(DefaultConfig(), 0), 0 }, func(p *Partition) {
		p.Acquire("a", batch, nil, false, 10, 0)
		p.Acknowledge("a", []AckBatch{{FirstOffset: 0, LastOffset: 1, Types: []AckType{AckAccept}}}, false, 0)
	}); code != 0 {
		t.Fatalf("do: %d", code)
	}

	started, release := make(chan StateWrite, 2), make(chan int16)
	var out, most atomic.Int32
	write := func(w StateWrite) int16 {
		if n := out.Add(1); n > most.Load() {
			most.Store(n)
		}
		defer out.Add(-1)
		started <- w
		return <-release
	}
	firstDone := make(chan int16)
	go func() { firstDone <- m.Persist(key, write, nil) }()
	first := <-started
	if first.StartOffset != 2 {
		t.Fatalf("first write starts at %d, want 2", first.StartOffset)
	}

	// The write is out; the share-partition is not locked by it.
	acked := make(chan int16)
	go func() {
		var code int16
		m.Do(key, nil, func(p *Partition) {
			code = p.Acknowledge("a", []AckBatch{{FirstOffset: 2, LastOffset: 4, Types: []AckType{AckAccept}}}, false, 0)
		})
		acked <- code
	}()
	select {
	case code := <-acked:
		if code != 0 {
			t.Fatalf("acknowledge during the write: %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the share-partition stayed locked during a write")
	}

	secondDone := make(chan int16)
	go func() { secondDone <- m.Persist(key, write, nil) }()
	release <- kerr.CoordinatorNotAvailable.Code // the first write fails
	if code := <-firstDone; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("first writer got %d", code)
	}
	second := <-started
	if second.StartOffset != 5 {
		t.Fatalf("second write starts at %d, want 5 (both acknowledgements)", second.StartOffset)
	}
	release <- 0
	if code := <-secondDone; code != 0 {
		t.Fatalf("second writer got %d", code)
	}
	if n := most.Load(); n != 1 {
		t.Fatalf("%d writes of one share-partition were out at once", n)
	}
	if code := m.Persist(key, func(w StateWrite) int16 { t.Fatalf("nothing changed, yet wrote %+v", w); return 0 }, nil); code != 0 {
		t.Fatalf("persist without changes: %d", code)
	}
}

// TestManagerNeverInitsAKeyTwice: a request that looked a share-partition
// up while another's load of it was failing (its share coordinator still
// loading) must not load it into the entry the failure dropped: a third
// request would load a second share-partition of the key beside it, and
// the two would hand out the same records with delivery count 1 (a Java
// share consumer test once accepted a partition's 500 records twice so).
func TestManagerNeverInitsAKeyTwice(t *testing.T) {
	m := NewManager()
	key := Key{Group: "g", Partition: 3}
	batch := []Batch{{BaseOffset: 0, LastOffset: 499}}
	stale := m.entry(key) // B looks the key up...
	loading := func() (*Partition, int16) { return nil, kerr.CoordinatorLoadInProgress.Code }
	if code := m.Do(key, loading, func(*Partition) { t.Fatal("fn ran after a failed init") }); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("failed init answered %d", code)
	} // ...while A's load fails and drops the entry.
	inits := 0
	load := func() (*Partition, int16) { inits++; return NewPartition(DefaultConfig(), 0), 0 }
	if _, ok := m.doOn(key, stale, load, func(*Partition) {}); ok {
		t.Fatal("a request ran on the entry a failed init dropped")
	}
	var first, second []AcquiredRange
	m.Do(key, load, func(p *Partition) { first = p.Acquire("b", batch, nil, false, 500, 0) })
	m.Do(key, load, func(p *Partition) { second = p.Acquire("c", batch, nil, false, 500, 0) })
	if inits != 1 {
		t.Fatalf("the share-partition was loaded %d times, want 1", inits)
	}
	if len(first) != 1 || first[0].LastOffset != 499 || len(second) != 0 {
		t.Fatalf("first request acquired %v, second %v: want all 500 records once", first, second)
	}
	// Forget drops an entry the same way: a request that looked it up
	// before gets a fresh one.
	looked := m.entry(key)
	m.Forget(func(k Key) bool { return k == key })
	if _, ok := m.doOn(key, looked, load, func(*Partition) {}); ok {
		t.Fatal("a request ran on a forgotten entry")
	}
	if m.Peek(key, func(*Partition) {}) {
		t.Fatal("Peek found a forgotten share-partition")
	}
}

// TestManagerConcurrentLoads: many requests for one key, the first loads
// failing, load it once and acquire each record once.
func TestManagerConcurrentLoads(t *testing.T) {
	for range 50 {
		m := NewManager()
		key := Key{Group: "g"}
		var inits, failures atomic.Int32
		load := func() (*Partition, int16) {
			if failures.Add(1) <= 3 {
				return nil, kerr.CoordinatorLoadInProgress.Code
			}
			inits.Add(1)
			return NewPartition(DefaultConfig(), 0), 0
		}
		var acquired atomic.Int64
		done := make(chan struct{})
		for i := range 8 {
			go func() {
				defer func() { done <- struct{}{} }()
				for m.Do(key, load, func(p *Partition) {
					for _, r := range p.Acquire(string(rune('a'+i)), []Batch{{BaseOffset: 0, LastOffset: 99}}, nil, false, 10, 0) {
						acquired.Add(r.LastOffset - r.FirstOffset + 1)
					}
				}) != 0 {
				}
			}()
		}
		for range 8 {
			<-done
		}
		if inits.Load() != 1 || acquired.Load() != 80 {
			t.Fatalf("loaded %d times, %d records acquired: want 1 load and 80 records once", inits.Load(), acquired.Load())
		}
	}
}
