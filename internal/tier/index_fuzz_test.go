package tier

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// FuzzDecodeOffsetIndex feeds arbitrary offset.index objects to the
// decoder: it never panics, and what it accepts ascends and looks up
// positions among its own.
func FuzzDecodeOffsetIndex(f *testing.F) {
	var seed []byte
	for i := range 4 {
		seed = binary.BigEndian.AppendUint32(seed, uint32(i*10))
		seed = binary.BigEndian.AppendUint32(seed, uint32(i*4096))
	}
	f.Add(seed)
	f.Add(append(seed, make([]byte, 16)...))
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeOffsetIndex(b)
		if err != nil {
			return
		}
		for i := 1; i < len(entries); i++ {
			if entries[i].RelativeOffset <= entries[i-1].RelativeOffset || entries[i].Position <= entries[i-1].Position {
				t.Fatalf("accepted entries out of order: %v", entries)
			}
		}
		for _, e := range entries {
			if got := lookupPosition(entries, e.RelativeOffset); got != int64(e.Position) {
				t.Fatalf("lookup %d = %d, want %d", e.RelativeOffset, got, e.Position)
			}
		}
	})
}

// FuzzDecodeTimeIndex does the same for time.index objects.
func FuzzDecodeTimeIndex(f *testing.F) {
	var seed []byte
	for i := range 4 {
		seed = binary.BigEndian.AppendUint64(seed, uint64(1000+i))
		seed = binary.BigEndian.AppendUint32(seed, uint32(i*10))
	}
	f.Add(seed)
	f.Add(append(seed, make([]byte, 24)...))
	f.Add([]byte{9})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeTimeIndex(b)
		if err != nil {
			return
		}
		for i := 1; i < len(entries); i++ {
			if entries[i].TimestampMs < entries[i-1].TimestampMs || entries[i].RelativeOffset < entries[i-1].RelativeOffset {
				t.Fatalf("accepted entries out of order: %v", entries)
			}
		}
		if len(entries) > 0 {
			_ = lookupTimestamp(entries, entries[len(entries)-1].TimestampMs+1)
		}
	})
}

// FuzzReaderSegmentBytes serves arbitrary bytes as a remote segment and
// its offset index: a read returns whole, verified-length batches or an
// error, and never panics or reads out of bounds.
func FuzzReaderSegmentBytes(f *testing.F) {
	batch, _ := record.Build(record.DefaultBuildOptions(), []record.Record{{Value: []byte("v")}, {Value: []byte("w")}})
	f.Add(append(append([]byte{}, batch...), batch...), []byte{0, 0, 0, 0, 0, 0, 0, 0}, int64(1))
	f.Add(batch[:30], []byte{}, int64(0))
	f.Add([]byte{}, []byte{0, 0, 0, 5, 0, 0, 1, 0}, int64(3))
	bucket, err := blob.Open(context.Background(), "mem://")
	if err != nil {
		f.Fatal(err)
	}
	defer bucket.Close()
	store := NewStore(StoreConfig{Bucket: bucket})
	cache, err := NewCache(vfs.Default, filepath.Join(f.TempDir(), "cache"), 1<<20)
	if err != nil {
		f.Fatal(err)
	}
	reader := NewReader(ReaderConfig{Store: store, Cache: cache, ChunkBytes: 64})
	defer reader.Close()
	n := 0
	f.Fuzz(func(t *testing.T, segment, index []byte, offset int64) {
		n++
		m := SegmentMetadata{State: CopySegmentFinished, TopicID: testPartition.TopicID, Partition: testPartition.Partition,
			BaseOffset: 0, EndOffset: 1 << 20, SegmentSizeBytes: int64(len(segment)), SegmentID: [16]byte{byte(n), byte(n >> 8), byte(n >> 16)},
			Files: []FileSize{{Kind: FileSegment, Size: int64(len(segment))}, {Kind: FileOffsetIndex, Size: int64(len(index))}}}
		ctx := context.Background()
		dir := store.SegmentDir(&m)
		if err := bucket.Put(ctx, dir+FileSegment.ObjectName(), segment); err != nil {
			t.Fatal(err)
		}
		if err := bucket.Put(ctx, dir+FileOffsetIndex.ObjectName(), index); err != nil {
			t.Fatal(err)
		}
		reader.SetView(testPartition, RemoteView{Segments: []SegmentMetadata{m}})
		res, err := reader.Read(ctx, ReadRequest{Partition: testPartition, Offset: offset & 0xffff, MaxBytes: 1 << 16, MinOneBatch: true, UpperBound: 1 << 62})
		if err != nil {
			return
		}
		for b := res.Records; len(b) > 0; {
			h, err := record.ParseHeader(b)
			if err != nil || h.Size() > len(b) {
				t.Fatalf("returned bytes are not whole batches: %v", err)
			}
			b = b[h.Size():]
		}
	})
}
