package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// tieredLog writes batches of batchRecords records of valueBytes each
// (timestamps 1000 + offset) to a real log with small segments and index
// interval, uploads every closed segment and returns the store and the
// uploaded segments' metadata.
func tieredLog(t *testing.T, bucket blob.Bucket, batches, batchRecords, valueBytes int) (*Store, []SegmentMetadata, *log.Log) {
	t.Helper()
	dir := t.TempDir()
	cfg := log.DefaultConfig()
	cfg.SegmentBytes, cfg.IndexIntervalBytes = 64<<10, 1024
	l, err := log.Open(vfs.Default, filepath.Join(dir, "t-0"), cfg, log.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	value := make([]byte, valueBytes)
	next := int64(0)
	for range batches {
		opts := record.DefaultBuildOptions()
		opts.BaseTimestamp = 1000 + next
		recs := make([]record.Record, batchRecords)
		for i := range recs {
			recs[i] = record.Record{TimestampDelta: int64(i), Key: []byte(fmt.Sprint(next + int64(i))), Value: value}
		}
		batch, err := record.Build(opts, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch, 0); err != nil {
			t.Fatal(err)
		}
		next += int64(batchRecords)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	store := NewStore(StoreConfig{Bucket: bucket})
	var uploaded []SegmentMetadata
	for _, s := range l.ClosedSegments() {
		m, err := store.CopySegment(context.Background(), CopyRequest{Partition: testPartition, BrokerID: 1, LeaderEpoch: 0,
			LeaderEpochs: []EpochEntry{{Epoch: 0, StartOffset: 0}}, Segment: LocalSegment{
				BaseOffset: s.BaseOffset, EndOffset: s.EndOffset, SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs,
				Files: map[FileKind]string{FileSegment: s.LogPath, FileOffsetIndex: s.IndexPath, FileTimeIndex: s.TimeIndexPath, FileTransactionIndex: s.TxnIndexPath}}})
		if err != nil {
			t.Fatal(err)
		}
		uploaded = append(uploaded, m)
	}
	if len(uploaded) < 3 {
		t.Fatalf("only %d segments uploaded", len(uploaded))
	}
	return store, uploaded, l
}

func newTestReader(t *testing.T, store *Store, cacheBytes int64, now func() time.Time, quota int64) (*Reader, *Cache) {
	t.Helper()
	cache, err := NewCache(vfs.Default, filepath.Join(t.TempDir(), "cache"), cacheBytes)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(ReaderConfig{Store: store, Cache: cache, Threads: 2, MaxPendingTasks: 4, ChunkBytes: 16 << 10,
		Now: now, FetchMaxBytesPerSecond: quota})
	t.Cleanup(r.Close)
	return r, cache
}

// batchOffsets parses the batches of b and returns each batch's base and
// last offsets.
func batchOffsets(t *testing.T, b []byte) [][2]int64 {
	t.Helper()
	var out [][2]int64
	for len(b) > 0 {
		h, err := record.Verify(b)
		if err != nil {
			t.Fatalf("remote read returned a bad batch: %v", err)
		}
		out = append(out, [2]int64{h.BaseOffset, h.LastOffset()})
		b = b[h.Size():]
	}
	return out
}

// TestReaderReadsWholeBatchesFromEveryOffset reads from every offset of the
// remote tier and checks that the first batch holds it, the batches are
// whole and contiguous, within max bytes (or one batch with min-one), and
// that the result equals the local log's bytes.
func TestReaderReadsWholeBatchesFromEveryOffset(t *testing.T) {
	ctx := context.Background()
	for name, bucket := range testBuckets(t) {
		t.Run(name, func(t *testing.T) {
			store, segs, l := tieredLog(t, bucket, 200, 5, 300)
			reader, cache := newTestReader(t, store, 64<<20, nil, 0)
			end := segs[len(segs)-1].EndOffset
			for offset := int64(0); offset <= end; offset += 7 {
				res, err := reader.Read(ctx, ReadRequest{Partition: testPartition, Offset: offset, MaxBytes: 4000, MinOneBatch: true, UpperBound: 1 << 62})
				if err != nil {
					t.Fatalf("read %d: %v", offset, err)
				}
				got := batchOffsets(t, res.Records)
				if len(got) == 0 || got[0][0] > offset || got[0][1] < offset {
					t.Fatalf("read %d: batches %v", offset, got)
				}
				if len(got) > 1 && len(res.Records) > 4000 {
					t.Fatalf("read %d: %d bytes over max bytes in %d batches", offset, len(res.Records), len(got))
				}
				if res.NextOffset != got[len(got)-1][1]+1 {
					t.Fatalf("read %d: next offset %d after %v", offset, res.NextOffset, got)
				}
				local, err := l.Read(offset, 4000, 1<<62, true)
				if err != nil {
					t.Fatal(err)
				}
				// A remote read stops at its segment's end; a local one
				// goes on into the next segment.
				var localBytes []byte
				for _, reg := range local.Regions {
					b := make([]byte, reg.Length)
					if _, err := reg.File.ReadAt(b, reg.Offset); err != nil {
						t.Fatal(err)
					}
					localBytes = append(localBytes, b...)
				}
				seg, _ := reader.mustView(t).Find(offset)
				if !bytes.HasPrefix(localBytes, res.Records) || (res.NextOffset <= seg.EndOffset && len(localBytes) != len(res.Records)) {
					t.Fatalf("read %d: remote %d bytes, local %d, segment ends at %d", offset, len(res.Records), len(localBytes), seg.EndOffset)
				}
			}
			if _, _, hits, _ := cache.Stats(); hits == 0 {
				t.Fatal("no cache hits over repeated reads")
			}
			// Without min-one a max bytes below the batch returns nothing.
			res, err := reader.Read(ctx, ReadRequest{Partition: testPartition, Offset: 0, MaxBytes: 10, UpperBound: 1 << 62})
			if err != nil || len(res.Records) != 0 || res.NextOffset != 0 {
				t.Fatalf("tiny max bytes: %d bytes, next %d, %v", len(res.Records), res.NextOffset, err)
			}
			// The upper bound cuts batches starting at or past it.
			res, err = reader.Read(ctx, ReadRequest{Partition: testPartition, Offset: 0, MaxBytes: 1 << 20, UpperBound: 10, MinOneBatch: true})
			if got := batchOffsets(t, res.Records); err != nil || len(got) != 2 || got[1][1] != 9 {
				t.Fatalf("upper bound 10: %v %v", got, err)
			}
			// Past the remote end: out of range.
			if _, err := reader.Read(ctx, ReadRequest{Partition: testPartition, Offset: end + 1, MaxBytes: 1, UpperBound: 1 << 62}); !errors.Is(err, ErrRemoteOffsetOutOfRange) {
				t.Fatalf("read past the remote end: %v", err)
			}
		})
	}
}

// TestReaderCacheStaysBounded reads everything through a cache smaller
// than the data and checks its size never passes the bound.
func TestReaderCacheStaysBounded(t *testing.T) {
	bucket, _ := blob.Open(context.Background(), "mem://")
	defer bucket.Close()
	store, segs, _ := tieredLog(t, bucket, 200, 5, 300)
	const bound = 40 << 10
	reader, cache := newTestReader(t, store, bound, nil, 0)
	for offset := int64(0); offset <= segs[len(segs)-1].EndOffset; offset += 50 {
		if _, err := reader.Read(context.Background(), ReadRequest{Partition: testPartition, Offset: offset, MaxBytes: 2000, MinOneBatch: true, UpperBound: 1 << 62}); err != nil {
			t.Fatal(err)
		}
		if size, _, _, _ := cache.Stats(); size > bound {
			t.Fatalf("cache holds %d bytes, bound %d", size, bound)
		}
	}
}

// TestReaderPoolBoundsAndQuota fills the queue past
// remote.log.reader.max.pending.tasks and checks the quota of
// remote.log.manager.fetch.max.bytes.per.second by a fixed clock.
func TestReaderPoolBoundsAndQuota(t *testing.T) {
	bucket, _ := blob.Open(context.Background(), "mem://")
	defer bucket.Close()
	store, _, _ := tieredLog(t, bucket, 200, 5, 300)
	now := time.Unix(100, 0)
	reader, _ := newTestReader(t, store, 64<<20, func() time.Time { return now }, 1<<10)
	if reader.QuotaExceeded() {
		t.Fatal("quota exceeded before any read")
	}
	done := make(chan error, 16)
	block, release := context.WithCancel(context.Background())
	defer release()
	busy := 0
	for range 16 {
		err := reader.Submit(block, ReadRequest{Partition: testPartition, Offset: 0, MaxBytes: 30 << 10, MinOneBatch: true, UpperBound: 1 << 62},
			func(_ ReadResult, err error) { done <- err })
		if errors.Is(err, ErrReaderBusy) {
			busy++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for range 16 - busy {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if !reader.QuotaExceeded() {
		t.Fatalf("quota not exceeded after %d bytes fetched", reader.Stats().FetchedBytes)
	}
	// The rate is measured over 11 one-second samples: a burst keeps the
	// quota exceeded until the window's rate falls below the limit.
	now = now.Add(time.Second)
	if !reader.QuotaExceeded() {
		t.Fatal("quota no longer exceeded one second after a burst of several times the limit")
	}
	now = now.Add(12 * time.Second)
	if reader.QuotaExceeded() {
		t.Fatal("quota still exceeded once the burst left the window")
	}
	t.Logf("%d of 16 submissions refused by a queue of 4 with 2 readers", busy)
}

func (r *Reader) mustView(t *testing.T) *RemoteView {
	v, err := r.View(context.Background(), testPartition)
	if err != nil {
		t.Fatal(err)
	}
	return &v
}

// TestReaderOffsetForTimestamp finds, for timestamps across the remote
// tier, the first record at or after each, as the local log does.
func TestReaderOffsetForTimestamp(t *testing.T) {
	bucket, _ := blob.Open(context.Background(), "mem://")
	defer bucket.Close()
	store, segs, l := tieredLog(t, bucket, 200, 5, 300)
	reader, _ := newTestReader(t, store, 64<<20, nil, 0)
	end := segs[len(segs)-1].EndOffset
	for ts := int64(990); ts <= 1000+end; ts += 13 {
		got, found, err := reader.OffsetForTimestamp(context.Background(), testPartition, ts, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, wantFound, err := l.RecordForTimestamp(ts)
		if err != nil || !wantFound || !found || got.Offset != want.Offset || got.TimestampMs != want.Timestamp {
			t.Fatalf("ts %d: remote %+v %v, local %+v %v %v", ts, got, found, want, wantFound, err)
		}
	}
	// With the log start past it, a record is not answered.
	if got, found, _ := reader.OffsetForTimestamp(context.Background(), testPartition, 1000, 50); !found || got.Offset != 50 {
		t.Fatalf("ts 1000 from log start 50: %+v %v", got, found)
	}
	if _, found, _ := reader.OffsetForTimestamp(context.Background(), testPartition, 1000+end+1, 0); found {
		t.Fatal("a timestamp past the remote tier was found in it")
	}
}
