package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
)

var testPartition = Partition{TopicID: [16]byte{0xab, 0xcd, 1}, Partition: 3}

// writeSegmentFiles writes a segment's files as the log leaves them at
// roll: a .log of size bytes, trimmed indexes, a transaction index and a
// producer snapshot.
func writeSegmentFiles(t *testing.T, dir string, base int64, size int) LocalSegment {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(base), 7))
	files := map[FileKind]string{}
	for kind, n := range map[FileKind]int{FileSegment: size, FileOffsetIndex: 8 * 40, FileTimeIndex: 12 * 40, FileTransactionIndex: 34, FileProducerSnapshot: 120} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		path := filepath.Join(dir, fmtBase(base)+"."+kind.ObjectName())
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		files[kind] = path
	}
	return LocalSegment{BaseOffset: base, EndOffset: base + 99, MaxTimestampMs: 1000 + base, Files: files}
}

func fmtBase(base int64) string { return fmt.Sprintf("%020d", base) }

func testBuckets(t *testing.T) map[string]blob.Bucket {
	t.Helper()
	out := map[string]blob.Bucket{}
	open := func(name, url string) {
		b, err := blob.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		out[name] = b
	}
	open("mem", "mem://")
	open("file", "file://"+t.TempDir())
	open("s3-gofakes3", blobtest.StartFakeS3(t).CreateBucket("tier"))
	if blobtest.MotoInstalled() {
		open("s3-moto", blobtest.StartMoto(t).CreateBucket("tier"))
	}
	return out
}

func copyRequest(seg LocalSegment, epoch int32) CopyRequest {
	return CopyRequest{Partition: testPartition, Segment: seg, BrokerID: 1, LeaderEpoch: epoch,
		LeaderEpochs: []EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: epoch, StartOffset: 150}}}
}

// TestCopySegmentObjectsEqualLocalFiles uploads two segments and checks
// that every object equals its local file byte for byte, that the uploads
// read back as finished segments, and that ranged reads work.
func TestCopySegmentObjectsEqualLocalFiles(t *testing.T) {
	ctx := context.Background()
	for name, bucket := range testBuckets(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			store := NewStore(StoreConfig{Bucket: bucket, Prefix: "cluster-a/"})
			var copied []SegmentMetadata
			for _, base := range []int64{100, 200} {
				seg := writeSegmentFiles(t, dir, base, 300_000+int(base))
				m, err := store.CopySegment(ctx, copyRequest(seg, 2))
				if err != nil {
					t.Fatalf("copy %d: %v", base, err)
				}
				for kind, path := range seg.Files {
					local, _ := os.ReadFile(path)
					remote, err := store.ReadFile(ctx, &m, kind)
					if err != nil || !bytes.Equal(local, remote) {
						t.Fatalf("%s of %d: %d local bytes, %d remote, %v", kind.ObjectName(), base, len(local), len(remote), err)
					}
				}
				checkpoint, err := store.ReadFile(ctx, &m, FileLeaderEpochCheckpoint)
				if err != nil {
					t.Fatal(err)
				}
				epochs, err := DecodeEpochCheckpoint(checkpoint)
				if err != nil || len(epochs) != 2 || epochs[1] != (EpochEntry{2, 150}) {
					t.Fatalf("checkpoint of %d = %v, %v", base, epochs, err)
				}
				copied = append(copied, m)
			}
			if len(copied[0].LeaderEpochs) != 2 || len(copied[1].LeaderEpochs) != 1 || copied[1].LeaderEpochs[0] != (EpochEntry{2, 150}) {
				t.Fatalf("segment epochs: %v %v", copied[0].LeaderEpochs, copied[1].LeaderEpochs)
			}
			uploads, err := store.ListUploads(ctx, testPartition)
			if err != nil {
				t.Fatal(err)
			}
			view := BuildView(uploads, []EpochEntry{{0, 0}, {2, 150}})
			if len(view.Segments) != 2 || view.StartOffset() != 100 || view.EndOffset() != 299 || len(view.Orphans) != 0 {
				t.Fatalf("view: %+v", view)
			}
			if view.SizeBytes() != 300_100+300_200 {
				t.Fatalf("remote size %d", view.SizeBytes())
			}
			m, ok := view.Find(250)
			if !ok || m.BaseOffset != 200 {
				t.Fatalf("find 250: %v %v", m.BaseOffset, ok)
			}
			local, _ := os.ReadFile(filepath.Join(dir, fmtBase(200)+".segment.log"))
			part, err := store.ReadSegmentRange(ctx, &m, 1000, 4096)
			if err != nil || !bytes.Equal(part, local[1000:5096]) {
				t.Fatalf("ranged read: %v", err)
			}
			if err := store.DeleteTopic(ctx, testPartition.TopicID); err != nil {
				t.Fatal(err)
			}
			if n := countObjects(t, bucket, ""); n != 0 {
				t.Fatalf("%d objects left after topic deletion", n)
			}
		})
	}
}

func countObjects(t *testing.T, b blob.Bucket, prefix string) int {
	t.Helper()
	n := 0
	if err := b.List(context.Background(), prefix, func(blob.ObjectInfo) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFailedUploadIsAnOrphanNeverServed kills an upload between its data
// objects (as a crash or a deposed leader would) and checks that nothing of
// it is readable, that it is collected after the grace time, and that a new
// upload of the same segment gets a key of its own.
func TestFailedUploadIsAnOrphanNeverServed(t *testing.T) {
	ctx := context.Background()
	mem, _ := blob.Open(ctx, "mem://")
	faulty := blob.NewFaulty(mem)
	nowMs := int64(1_000_000)
	store := NewStore(StoreConfig{Bucket: faulty, Now: func() time.Time { return time.UnixMilli(nowMs) }})
	seg := writeSegmentFiles(t, t.TempDir(), 0, 50_000)

	faulty.Inject(blob.Fault{Ops: blob.OpPut, KeyContains: "time.index", Err: errors.New("process killed"), Times: 1})
	if _, err := store.CopySegment(ctx, copyRequest(seg, 1)); err == nil {
		t.Fatal("copy succeeded through a failed put")
	}
	uploads, err := store.ListUploads(ctx, testPartition)
	if err != nil {
		t.Fatal(err)
	}
	view := BuildView(uploads, nil)
	if len(view.Segments) != 0 || len(view.Orphans) != 1 {
		t.Fatalf("a half upload is visible: %+v", view)
	}
	if got := OrphansToCollect(&view, 60_000, nowMs+1000); len(got) != 0 {
		t.Fatalf("orphan collected inside its grace time")
	}

	m, err := store.CopySegment(ctx, copyRequest(seg, 1))
	if err != nil {
		t.Fatal(err)
	}
	uploads, _ = store.ListUploads(ctx, testPartition)
	view = BuildView(uploads, nil)
	if len(view.Segments) != 1 || view.Segments[0].SegmentID != m.SegmentID || len(view.Orphans) != 1 || view.Orphans[0].Dir == store.SegmentDir(&m) {
		t.Fatalf("retry did not get a key of its own: %+v", view)
	}
	for _, orphan := range OrphansToCollect(&view, 60_000, nowMs+61_000) {
		if err := store.DeleteUpload(ctx, orphan); err != nil {
			t.Fatal(err)
		}
	}
	uploads, _ = store.ListUploads(ctx, testPartition)
	view = BuildView(uploads, nil)
	if len(view.Orphans) != 0 || len(view.Segments) != 1 {
		t.Fatalf("after collection: %+v", view)
	}
	// Deleting the finished upload leaves nothing, delete-started last.
	if err := store.DeleteUpload(ctx, uploads[0]); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, mem, ""); n != 0 {
		t.Fatalf("%d objects left", n)
	}
}

// TestDeletionInterruptedIsNeverServedAndFinishes fails a deletion half
// way: the segment is no longer served, and a second call finishes it.
func TestDeletionInterruptedIsNeverServedAndFinishes(t *testing.T) {
	ctx := context.Background()
	mem, _ := blob.Open(ctx, "mem://")
	faulty := blob.NewFaulty(mem)
	store := NewStore(StoreConfig{Bucket: faulty})
	if _, err := store.CopySegment(ctx, copyRequest(writeSegmentFiles(t, t.TempDir(), 0, 1000), 1)); err != nil {
		t.Fatal(err)
	}
	uploads, _ := store.ListUploads(ctx, testPartition)
	faulty.Inject(blob.Fault{Ops: blob.OpDelete, KeyContains: "offset.index", Err: errors.New("boom"), Times: 1})
	if err := store.DeleteUpload(ctx, uploads[0]); err == nil {
		t.Fatal("no error")
	}
	uploads, _ = store.ListUploads(ctx, testPartition)
	view := BuildView(uploads, nil)
	if len(view.Segments) != 0 || len(view.Deleting) != 1 {
		t.Fatalf("a segment being deleted is served: %+v", view)
	}
	if err := store.DeleteUpload(ctx, view.Deleting[0]); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, mem, ""); n != 0 {
		t.Fatalf("%d objects left", n)
	}
}

// TestCopyThroughStoreOutage copies with the store down, then through
// SlowDowns with retries, losing nothing.
func TestCopyThroughStoreOutage(t *testing.T) {
	ctx := context.Background()
	mem, _ := blob.Open(ctx, "mem://")
	faulty := blob.NewFaulty(mem)
	noSleep := func(context.Context, time.Duration) error { return nil }
	store := NewStore(StoreConfig{Bucket: blob.Retrying(faulty, blob.RetryPolicy{Attempts: 5, BackoffMs: 1, BackoffMaxMs: 2, Sleep: noSleep})})
	seg := writeSegmentFiles(t, t.TempDir(), 0, 10_000)
	faulty.SetDown(true)
	if _, err := store.CopySegment(ctx, copyRequest(seg, 1)); !blob.IsTransient(err) {
		t.Fatalf("copy with the store down: %v", err)
	}
	faulty.SetDown(false)
	faulty.Inject(blob.Fault{Ops: blob.OpPut, Err: blob.ErrSlowDown, Times: 4})
	if _, err := store.CopySegment(ctx, copyRequest(seg, 1)); err != nil {
		t.Fatalf("copy through SlowDowns: %v", err)
	}
	uploads, _ := store.ListUploads(ctx, testPartition)
	if view := BuildView(uploads, nil); len(view.Segments) != 1 {
		t.Fatalf("view: %+v", view)
	}
}

// TestS3ServerPausedMidUpload stops moto (SIGSTOP) during uploads under a
// deadline, then resumes it: the interrupted upload is an orphan, the next
// one lands.
func TestS3ServerPausedMidUpload(t *testing.T) {
	moto := blobtest.StartMoto(t)
	url := moto.CreateBucket("paused")
	bucket, err := blob.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := NewStore(StoreConfig{Bucket: bucket})
	seg := writeSegmentFiles(t, t.TempDir(), 0, 2<<20)
	moto.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err = store.CopySegment(ctx, copyRequest(seg, 1))
	cancel()
	moto.Resume()
	if err == nil {
		t.Fatal("copy finished against a stopped server")
	}
	if _, err := store.CopySegment(context.Background(), copyRequest(seg, 1)); err != nil {
		t.Fatalf("copy after resume: %v", err)
	}
	uploads, err := store.ListUploads(context.Background(), testPartition)
	if err != nil {
		t.Fatal(err)
	}
	view := BuildView(uploads, nil)
	if len(view.Segments) != 1 {
		t.Fatalf("view after resume: %+v", view)
	}
	local, _ := os.ReadFile(seg.Files[FileSegment])
	remote, err := store.ReadFile(context.Background(), &view.Segments[0], FileSegment)
	if err != nil || !bytes.Equal(local, remote) {
		t.Fatalf("segment after resume differs: %v", err)
	}
}

func TestEpochCheckpointRoundTrip(t *testing.T) {
	entries := []EpochEntry{{0, 0}, {3, 120}, {7, 5000}}
	got, err := DecodeEpochCheckpoint(EncodeEpochCheckpoint(entries))
	if err != nil || len(got) != 3 || got[2] != entries[2] {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\n1 0\n", "0\n2\n3 5\n2 9\n", "0\n1\nx 1\n", "0\n-1\n"} {
		if _, err := DecodeEpochCheckpoint([]byte(bad)); !errors.Is(err, ErrCorruptMetadata) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzDecodeEpochCheckpoint(f *testing.F) {
	f.Add(EncodeEpochCheckpoint([]EpochEntry{{0, 0}, {3, 120}}))
	f.Add([]byte("0\n0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeEpochCheckpoint(b)
		if err != nil {
			return
		}
		again, err := DecodeEpochCheckpoint(EncodeEpochCheckpoint(entries))
		if err != nil || len(again) != len(entries) {
			t.Fatalf("does not round-trip: %v", err)
		}
	})
}

// TestListUploadsReadsEachRecordOnce checks that a finished upload's record
// is fetched from the store once, not on every task, and that deleted
// uploads leave the cache.
func TestListUploadsReadsEachRecordOnce(t *testing.T) {
	ctx := context.Background()
	mem, _ := blob.Open(ctx, "mem://")
	faulty := blob.NewFaulty(mem)
	store := NewStore(StoreConfig{Bucket: faulty})
	dir := t.TempDir()
	for _, base := range []int64{0, 100} {
		if _, err := store.CopySegment(ctx, copyRequest(writeSegmentFiles(t, dir, base, 1000), 1)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := store.ListUploads(ctx, testPartition); err != nil {
			t.Fatal(err)
		}
	}
	if gets := faulty.Calls(blob.OpGet); gets != 2 {
		t.Fatalf("%d record reads for 2 uploads over 3 listings", gets)
	}
	uploads, _ := store.ListUploads(ctx, testPartition)
	if err := store.DeleteUpload(ctx, uploads[0]); err != nil {
		t.Fatal(err)
	}
	uploads, _ = store.ListUploads(ctx, testPartition)
	store.mu.Lock()
	cached := len(store.mu.finished)
	store.mu.Unlock()
	if len(uploads) != 1 || cached != 1 {
		t.Fatalf("%d uploads, %d cached after a deletion", len(uploads), cached)
	}
}
