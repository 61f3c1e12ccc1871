package tier

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// BenchmarkReadRemoteVsLocal reads a whole partition, in fetches of 1 MiB
// as a consumer does, from local segments (the reference) and from the
// remote tier through the Reader with a cold cache, from a file:// bucket
// and from moto on loopback when installed. It reports MB/s (-benchmem's
// bytes) and the read amplification: bytes fetched from the store per byte
// served. SAMSA_TIER_BENCH_MB sets the partition's size (64 by default;
// 2048 for the full figure), SAMSA_TIER_BENCH_CHUNK_KB the reader's chunk
// (DefaultChunkBytes when unset).
//
//	go test -run XXX -bench ReadRemoteVsLocal -benchtime 1x ./internal/tier/
func BenchmarkReadRemoteVsLocal(b *testing.B) {
	sizeMB := 64
	if v, err := strconv.Atoi(os.Getenv("SAMSA_TIER_BENCH_MB")); err == nil && v > 0 {
		sizeMB = v
	}
	chunkBytes := int64(0) // the reader's default
	if v, err := strconv.Atoi(os.Getenv("SAMSA_TIER_BENCH_CHUNK_KB")); err == nil && v > 0 {
		chunkBytes = int64(v) << 10
	}
	buckets := map[string]string{"file": "file://" + b.TempDir()}
	if blobtest.MotoInstalled() {
		buckets["moto"] = blobtest.StartMoto(b).CreateBucket("bench")
	}
	l, segments := benchLog(b, sizeMB)
	end := l.LogEndOffset()
	b.Run("local", func(b *testing.B) {
		var served int64
		for range b.N {
			served = 0
			buf := make([]byte, 1<<20)
			for offset := int64(0); offset < end; {
				rr, err := l.Read(offset, 1<<20, end, true)
				if err != nil {
					b.Fatal(err)
				}
				for _, reg := range rr.Regions {
					if _, err := reg.File.ReadAt(buf[:reg.Length], reg.Offset); err != nil {
						b.Fatal(err)
					}
				}
				next, err := rr.NextOffset()
				if err != nil {
					b.Fatal(err)
				}
				served += rr.Bytes
				offset = next
			}
		}
		b.SetBytes(served)
	})
	for name, url := range buckets {
		bucket, err := blob.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		store := NewStore(StoreConfig{Bucket: bucket})
		for _, s := range segments {
			if _, err := store.CopySegment(context.Background(), CopyRequest{Partition: testPartition, BrokerID: 1,
				LeaderEpochs: []EpochEntry{{Epoch: 0, StartOffset: 0}}, Segment: s}); err != nil {
				b.Fatal(err)
			}
		}
		remoteEnd := segments[len(segments)-1].EndOffset + 1
		b.Run("remote-"+name, func(b *testing.B) {
			var served, fetched int64
			for range b.N {
				cache, err := NewCache(vfs.Default, filepath.Join(b.TempDir(), "cache"), 1<<30)
				if err != nil {
					b.Fatal(err)
				}
				reader := NewReader(ReaderConfig{Store: store, Cache: cache, Threads: 1, MaxPendingTasks: 1, ChunkBytes: chunkBytes})
				for offset := int64(0); offset < remoteEnd; {
					res, err := reader.Read(context.Background(), ReadRequest{Partition: testPartition, Offset: offset,
						MaxBytes: 1 << 20, MinOneBatch: true, UpperBound: remoteEnd})
					if err != nil {
						b.Fatal(err)
					}
					offset = res.NextOffset
				}
				stats := reader.Stats()
				served, fetched = stats.ServedBytes, stats.FetchedBytes
				reader.Close()
			}
			b.SetBytes(served)
			b.ReportMetric(float64(fetched)/float64(served), "store-bytes/served-byte")
		})
		bucket.Close()
	}
}

// benchLog writes a log of about sizeMB MiB in 64 MiB segments of 16 KiB
// batches and returns it with its closed segments as upload requests.
func benchLog(b *testing.B, sizeMB int) (*log.Log, []LocalSegment) {
	b.Helper()
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = 64 << 20
	l, err := log.Open(vfs.Default, filepath.Join(b.TempDir(), "bench-0"), cfg, log.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	value := make([]byte, 1024)
	records := make([]record.Record, 16)
	for i := range records {
		records[i] = record.Record{Value: value}
	}
	batch, err := record.Build(record.DefaultBuildOptions(), records)
	if err != nil {
		b.Fatal(err)
	}
	for written := 0; written < sizeMB<<20; written += len(batch) {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		b.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	var out []LocalSegment
	for _, s := range l.ClosedSegments() {
		out = append(out, LocalSegment{BaseOffset: s.BaseOffset, EndOffset: s.EndOffset, SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs,
			Files: map[FileKind]string{FileSegment: s.LogPath, FileOffsetIndex: s.IndexPath, FileTimeIndex: s.TimeIndexPath}})
	}
	return l, out
}
