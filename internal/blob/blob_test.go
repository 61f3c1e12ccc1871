package blob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
)

// buckets opens one bucket of each implementation the suite runs on.
func buckets(t *testing.T) map[string]blob.Bucket {
	t.Helper()
	ctx := context.Background()
	out := map[string]blob.Bucket{}
	open := func(name, url string) {
		b, err := blob.Open(ctx, url)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		t.Cleanup(func() { b.Close() })
		out[name] = b
	}
	open("mem", "mem://")
	open("file", "file://"+t.TempDir())
	open("s3-gofakes3", blobtest.StartFakeS3(t).CreateBucket("suite"))
	if blobtest.MotoInstalled() {
		open("s3-moto", blobtest.StartMoto(t).CreateBucket("suite"))
	} else {
		t.Log("moto_server absent: the suite runs on mem:// and file:// only")
	}
	return out
}

func TestBucketSuite(t *testing.T) {
	ctx := context.Background()
	for name, b := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			body := bytes.Repeat([]byte("0123456789"), 1000)
			if err := b.Put(ctx, "topic/0/a.log", body); err != nil {
				t.Fatalf("put: %v", err)
			}
			if err := b.Put(ctx, "topic/0/b.index", []byte("idx")); err != nil {
				t.Fatalf("put: %v", err)
			}
			if err := b.Put(ctx, "topic/1/c.log", nil); err != nil {
				t.Fatalf("put empty: %v", err)
			}
			if err := b.PutSection(ctx, "topic/1/d.log", bytes.NewReader(body), 777); err != nil {
				t.Fatalf("put section: %v", err)
			}
			if got, err := b.Get(ctx, "topic/1/d.log"); err != nil || !bytes.Equal(got, body[:777]) {
				t.Fatalf("section: %d bytes, %v", len(got), err)
			}
			if err := b.PutSection(ctx, "topic/1/e.log", bytes.NewReader(body[:10]), 20); err == nil {
				t.Fatal("short source stored")
			}
			if _, err := b.Get(ctx, "topic/1/e.log"); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("a failed section upload is visible: %v", err)
			}
			got, err := b.Get(ctx, "topic/0/a.log")
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("get: %d bytes, %v", len(got), err)
			}
			part, err := b.GetRange(ctx, "topic/0/a.log", 9995, 10)
			if err != nil || string(part) != "56789" {
				t.Fatalf("range past the end: %q, %v", part, err)
			}
			part, err = b.GetRange(ctx, "topic/0/a.log", 12, 4)
			if err != nil || string(part) != "2345" {
				t.Fatalf("range: %q, %v", part, err)
			}
			if size, err := b.Size(ctx, "topic/0/a.log"); err != nil || size != int64(len(body)) {
				t.Fatalf("size %d, %v", size, err)
			}
			if _, err := b.Get(ctx, "topic/9/missing"); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("missing get: %v", err)
			}
			if _, err := b.Size(ctx, "topic/9/missing"); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("missing size: %v", err)
			}
			var keys []string
			if err := b.List(ctx, "topic/0/", func(o blob.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
				t.Fatalf("list: %v", err)
			}
			if fmt.Sprint(keys) != "[topic/0/a.log topic/0/b.index]" {
				t.Fatalf("list = %v", keys)
			}
			// A prefix nothing was ever written under lists empty (the
			// file driver has no directory for it).
			if err := b.List(ctx, "absent/0/", func(o blob.ObjectInfo) error { return fmt.Errorf("listed %s", o.Key) }); err != nil {
				t.Fatalf("list of an absent prefix: %v", err)
			}
			if err := b.Delete(ctx, "topic/0/a.log"); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if err := b.Delete(ctx, "topic/0/a.log"); err != nil {
				t.Fatalf("delete missing: %v", err)
			}
			if _, err := b.Get(ctx, "topic/0/a.log"); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("get after delete: %v", err)
			}
		})
	}
}

// TestFileBucketHoldsOnlyObjects checks that the file driver writes no
// sidecar files, so the bucket directory mirrors the objects.
func TestFileBucketHoldsOnlyObjects(t *testing.T) {
	dir := t.TempDir()
	b, err := blob.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Put(context.Background(), "a/b.log", []byte("x")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "a"))
	if len(entries) != 1 || entries[0].Name() != "b.log" {
		t.Fatalf("bucket directory holds %v", entries)
	}
}

func TestRedactDropsCredentials(t *testing.T) {
	got := blob.Redact("s3://user:secret@bkt/prefix?endpoint=http://h&access_key=abc")
	if got != "s3://bkt/prefix" {
		t.Fatalf("Redact = %q", got)
	}
}

func TestRetryingRetriesTransientWithBackoff(t *testing.T) {
	ctx := context.Background()
	mem, _ := blob.Open(ctx, "mem://")
	faulty := blob.NewFaulty(mem)
	var waits []time.Duration
	policy := blob.RetryPolicy{Attempts: 4, BackoffMs: 100, BackoffMaxMs: 250,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	b := blob.Retrying(faulty, policy)

	faulty.Inject(blob.Fault{Ops: blob.OpPut, Err: blob.ErrSlowDown, Times: 3})
	if err := b.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatalf("put after 3 SlowDowns: %v", err)
	}
	if len(waits) != 3 {
		t.Fatalf("waits = %v, want 3", waits)
	}
	for i, bound := range []time.Duration{100, 200, 250} {
		if waits[i] < bound*time.Millisecond/2 || waits[i] > bound*time.Millisecond {
			t.Fatalf("wait %d = %v, want in [%v, %v]", i, waits[i], bound*time.Millisecond/2, bound*time.Millisecond)
		}
	}

	waits = nil
	faulty.Inject(blob.Fault{Ops: blob.OpGet, Err: blob.ErrSlowDown})
	if _, err := b.Get(ctx, "k"); !errors.Is(err, blob.ErrTransient) {
		t.Fatalf("get under a permanent SlowDown: %v", err)
	}
	if len(waits) != 3 {
		t.Fatalf("attempts not bounded: %d waits", len(waits))
	}

	faulty.Clear()
	waits = nil
	faulty.Inject(blob.Fault{Ops: blob.OpGet, Err: errors.New("access denied")})
	if _, err := b.Get(ctx, "k"); err == nil || len(waits) != 0 {
		t.Fatalf("permanent error retried: %v, %d waits", err, len(waits))
	}
}

func TestFaultyTruncationAndDown(t *testing.T) {
	ctx := context.Background()
	mem, _ := blob.Open(ctx, "mem://")
	faulty := blob.NewFaulty(mem)
	if err := faulty.Put(ctx, "k", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	faulty.Inject(blob.Fault{Ops: blob.OpGet, Truncate: true, TruncateBytes: 3, Times: 1})
	if _, err := faulty.Get(ctx, "k"); !errors.Is(err, blob.ErrTruncated) || !blob.IsTransient(err) {
		t.Fatalf("truncated get: %v", err)
	}
	if got, err := faulty.Get(ctx, "k"); err != nil || string(got) != "0123456789" {
		t.Fatalf("get after the fault retired: %q %v", got, err)
	}
	faulty.SetDown(true)
	if err := faulty.Put(ctx, "k2", []byte("x")); !blob.IsTransient(err) {
		t.Fatalf("put while down: %v", err)
	}
	faulty.SetDown(false)
	// A Put whose answer is lost after it landed: the object exists.
	faulty.Inject(blob.Fault{Ops: blob.OpPut, Err: blob.ErrSlowDown, AfterInner: true, Times: 1})
	if err := faulty.Put(ctx, "k3", []byte("y")); err == nil {
		t.Fatal("lost answer not reported")
	}
	if got, err := faulty.Get(ctx, "k3"); err != nil || string(got) != "y" {
		t.Fatalf("object of a lost answer: %q %v", got, err)
	}
	if faulty.Injected() != 3 {
		t.Fatalf("injected = %d", faulty.Injected())
	}
}

// TestS3UnreachableIsTransient checks the classification of a real
// connection failure from the S3 driver.
func TestS3UnreachableIsTransient(t *testing.T) {
	m := blobtest.StartMoto(t)
	url := m.CreateBucket("gone")
	b, err := blob.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Put(ctx, "k", []byte("x")); !blob.IsTransient(err) {
		t.Fatalf("put to a stopped server: %v (transient=%v)", err, blob.IsTransient(err))
	}
}

// TestFileListDuringWrites lists a file:// bucket while objects under the
// prefix are written (each through a temporary file renamed into place)
// and deleted: no listing fails, and every object that existed throughout
// is listed once.
func TestFileListDuringWrites(t *testing.T) {
	ctx := context.Background()
	b, err := blob.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 20 {
		if err := b.Put(ctx, fmt.Sprintf("p/stable-%02d", i), []byte("s")); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			key := fmt.Sprintf("p/churn-%d/%d", i%8, i)
			if err := b.Put(ctx, key, bytes.Repeat([]byte("c"), 4096)); err != nil {
				done <- err
				return
			}
			if err := b.Delete(ctx, key); err != nil {
				done <- err
				return
			}
		}
	}()
	for range 300 {
		stable := 0
		var previous string
		err := b.List(ctx, "p/", func(o blob.ObjectInfo) error {
			if o.Key <= previous {
				return fmt.Errorf("key %s after %s", o.Key, previous)
			}
			previous = o.Key
			if len(o.Key) > len("p/stable-") && o.Key[:len("p/stable-")] == "p/stable-" {
				stable++
			}
			return nil
		})
		if err != nil {
			close(stop)
			t.Fatalf("list while writing: %v", err)
		}
		if stable != 20 {
			close(stop)
			t.Fatalf("listed %d of the 20 objects that never changed", stable)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
