package log

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestCompatFileFormats checks the exact bytes of every file against Kafka's
// formats (see the package doc), for a log written with known offsets,
// positions and timestamps.
func TestCompatFileFormats(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-3")
	cfg := smallConfig()
	cfg.IndexIntervalBytes = 100
	cfg.SegmentBytes = 1 << 20
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{})
	var sizes []int
	for i, ts := range []int64{1000, 900, 2000, 2000, 3000} {
		b := makeBatch(2, 100, ts) // max timestamp ts+1
		sizes = append(sizes, len(b))
		mustAppend(t, l, b, int32(i/3))
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// .log: the batches back to back with offsets 0,2,4,6,8.
	data, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	pos := 0
	for i := range sizes {
		if base := int64(binary.BigEndian.Uint64(data[pos:])); base != int64(2*i) {
			t.Fatalf("batch %d base offset %d", i, base)
		}
		if epoch := int32(binary.BigEndian.Uint32(data[pos+12:])); epoch != int32(i/3) {
			t.Fatalf("batch %d leader epoch %d", i, epoch)
		}
		pos += sizes[i]
	}
	if pos != len(data) {
		t.Fatalf(".log has %d bytes, batches %d", len(data), pos)
	}

	// .index: an entry for each append after more than 100 bytes since the
	// last, holding (last offset - base, position of the batch).
	var want []byte
	pos = sizes[0]
	for i := 1; i < len(sizes); i++ {
		want = binary.BigEndian.AppendUint32(want, uint32(2*i+1))
		want = binary.BigEndian.AppendUint32(want, uint32(pos))
		pos += sizes[i]
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.index")); string(got) != string(want) {
		t.Fatalf(".index\n got %x\nwant %x", got, want)
	}

	// .timeindex: entries only when the max timestamp grows, with the last
	// offset of the batch that carried it; no entry for the closing append
	// because nothing grew after the last one.
	want = want[:0]
	for _, e := range []struct {
		ts  int64
		rel uint32
	}{{1001, 1}, {2001, 5}, {3001, 9}} {
		want = binary.BigEndian.AppendUint64(want, uint64(e.ts))
		want = binary.BigEndian.AppendUint32(want, e.rel)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex")); string(got) != string(want) {
		t.Fatalf(".timeindex\n got %x\nwant %x", got, want)
	}

	// leader-epoch-checkpoint.
	if got, _ := os.ReadFile(filepath.Join(dir, LeaderEpochCheckpointFile)); string(got) != "0\n2\n0 0\n1 6\n" {
		t.Fatalf("leader-epoch-checkpoint %q", got)
	}

	// Offset checkpoints.
	path := filepath.Join(t.TempDir(), RecoveryPointCheckpointFile)
	err := WriteOffsetCheckpoint(vfs.Default, path, map[TopicPartition]int64{
		{"orders", 3}: 10, {"orders", 10}: 7, {"audit", 0}: 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "0\n3\naudit 0 0\norders 3 10\norders 10 7\n" {
		t.Fatalf("checkpoint %q", got)
	}
	back, err := ReadOffsetCheckpoint(vfs.Default, path)
	if err != nil || len(back) != 3 || back[TopicPartition{"orders", 10}] != 7 {
		t.Fatalf("read back %v %v", back, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatal("temp file left behind")
	}

	// partition.metadata.
	id := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if err := WritePartitionMetadata(vfs.Default, dir, id); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, PartitionMetadataFile)); string(got) != "version: 0\ntopic_id: 3q2-7wECAwQFBgcICQoLDA" {
		t.Fatalf("partition.metadata %q", got)
	}
	if back, err := ReadPartitionMetadata(vfs.Default, dir); err != nil || back != id {
		t.Fatalf("read back %x %v", back, err)
	}
}

func TestCheckpointRejectsMalformed(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"version": "1\n0\n",
		"count":   "0\n2\na 0 1\n",
		"fields":  "0\n1\na 0\n",
		"number":  "0\n1\na x 1\n",
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := ReadOffsetCheckpoint(vfs.Default, path); err == nil {
			t.Errorf("%s: accepted %q", name, content)
		}
	}
	// Missing and empty files read as empty, as in Kafka.
	if m, err := ReadOffsetCheckpoint(vfs.Default, filepath.Join(dir, "missing")); err != nil || len(m) != 0 {
		t.Errorf("missing: %v %v", m, err)
	}
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644)
	if m, err := ReadOffsetCheckpoint(vfs.Default, filepath.Join(dir, "empty")); err != nil || len(m) != 0 {
		t.Errorf("empty: %v %v", m, err)
	}
}
