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
