package tier

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestReaderFinishesStartedReadIntoCache cancels the context of a read
// once it is running against a slow store, as an answered fetch does: the
// read still completes with its batches (Kafka's DelayedRemoteFetch
// cancels without interrupting), and the same read asked again is served
// from the cache without another GET of the segment.
func TestReaderFinishesStartedReadIntoCache(t *testing.T) {
	inner, _ := blob.Open(context.Background(), "mem://")
	defer inner.Close()
	faulty := blob.NewFaulty(inner)
	store, _, _ := tieredLog(t, faulty, 200, 5, 300)
	reader, _ := newTestReader(t, store, 64<<20, nil, 0)
	faulty.Inject(blob.Fault{Ops: blob.OpGet, KeyContains: FileSegment.ObjectName(), Latency: 300 * time.Millisecond})
	req := ReadRequest{Partition: testPartition, Offset: 3, MaxBytes: 4000, MinOneBatch: true, UpperBound: 1 << 62}

	gets := faulty.Calls(blob.OpGet)
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		res ReadResult
		err error
	}
	done := make(chan outcome, 1)
	if err := reader.Submit(ctx, req, func(res ReadResult, err error) { done <- outcome{res, err} }); err != nil {
		t.Fatal(err)
	}
	// The read is running once it asked the store for something.
	deadline := time.Now().Add(10 * time.Second)
	for faulty.Calls(blob.OpGet) == gets {
		if time.Now().After(deadline) {
			t.Fatal("the read never reached the store")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	got := <-done
	if got.err != nil || len(got.res.Records) == 0 {
		t.Fatalf("a started read whose fetch was answered: %d bytes, %v", len(got.res.Records), got.err)
	}

	gets = faulty.Calls(blob.OpGet)
	again, err := reader.Read(context.Background(), req)
	if err != nil || !bytes.Equal(again.Records, got.res.Records) {
		t.Fatalf("read again: %d bytes, %v", len(again.Records), err)
	}
	if n := faulty.Calls(blob.OpGet) - gets; n != 0 {
		t.Fatalf("read again made %d GETs, want 0: the first read's chunks are cached", n)
	}

	// A read whose context ended before it started is dropped.
	block, release := context.WithCancel(context.Background())
	defer release()
	for range 2 { // occupy both reader threads
		if err := reader.Go(block, func(context.Context, error) { <-block.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	dropped, drop := context.WithCancel(context.Background())
	result := make(chan error, 1)
	if err := reader.Submit(dropped, ReadRequest{Partition: testPartition, Offset: 500, MaxBytes: 4000, MinOneBatch: true, UpperBound: 1 << 62},
		func(_ ReadResult, err error) { result <- err }); err != nil {
		t.Fatal(err)
	}
	drop()
	release()
	if err := <-result; err == nil {
		t.Fatal("a read canceled before it started ran")
	}
}

// TestCacheSharesConcurrentLoads misses one key from many goroutines at
// once: one load runs and every Get gets its bytes; a failed shared load
// makes the waiters load themselves.
func TestCacheSharesConcurrentLoads(t *testing.T) {
	cache, err := NewCache(vfs.Default, filepath.Join(t.TempDir(), "cache"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var loads atomic.Int32
	release := make(chan struct{})
	load := func(context.Context) ([]byte, error) {
		loads.Add(1)
		<-release
		return []byte("chunk"), nil
	}
	const getters = 8
	var wg sync.WaitGroup
	results := make(chan []byte, getters)
	for range getters {
		wg.Go(func() {
			b, _, err := cache.Get(context.Background(), "k", load)
			if err != nil {
				t.Error(err)
			}
			results <- b
		})
	}
	// Every getter is waiting on the one load before it finishes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, _, misses := cache.Stats()
		if misses == getters {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d getters missed", misses, getters)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(results)
	for b := range results {
		if string(b) != "chunk" {
			t.Fatalf("a getter got %q", b)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads for %d concurrent misses, want 1", n, getters)
	}

	// A shared load that fails: the waiter loads for itself.
	failing := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, _, err := cache.Get(context.Background(), "f", func(context.Context) ([]byte, error) {
			<-failing
			return nil, context.DeadlineExceeded
		})
		first <- err
	}()
	for {
		cache.mu.Lock()
		_, loading := cache.mu.loading["f"]
		cache.mu.Unlock()
		if loading {
			break
		}
		time.Sleep(time.Millisecond)
	}
	second := make(chan []byte, 1)
	go func() {
		b, _, _ := cache.Get(context.Background(), "f", func(context.Context) ([]byte, error) { return []byte("own"), nil })
		second <- b
	}()
	close(failing)
	if err := <-first; err == nil {
		t.Fatal("the failing load succeeded")
	}
	if b := <-second; string(b) != "own" {
		t.Fatalf("waiter after a failed shared load got %q", b)
	}
}
