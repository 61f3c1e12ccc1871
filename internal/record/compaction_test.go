package record

import "testing"

// TestBuildCompacted: a compacted batch keeps its gaps and its original last
// offset, and carries a delete horizon in its base timestamp.
func TestBuildCompacted(t *testing.T) {
	opts := DefaultBuildOptions()
	opts.BaseOffset, opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = 100, 9, 2, 40
	opts.KeepOffsetDeltas, opts.LastOffsetDelta = true, 7
	opts.DeleteHorizon, opts.BaseTimestamp = true, 5000
	b, err := Build(opts, []Record{
		{OffsetDelta: 2, TimestampDelta: -10, Key: []byte("a"), Value: []byte("1")},
		{OffsetDelta: 5, TimestampDelta: -4, Key: []byte("b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Verify(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.LastOffset() != 107 || h.RecordCount != 2 || h.MaxTimestamp != 4996 || h.BaseSequence != 40 {
		t.Fatalf("header %+v", h)
	}
	if at, ok := h.DeleteHorizonMs(); !ok || at != 5000 {
		t.Fatalf("delete horizon %d %v", at, ok)
	}
	recs, err := ReadRecords(b, 0)
	if err != nil || len(recs) != 2 || recs[1].OffsetDelta != 5 || recs[1].Value != nil || h.RecordTimestamp(recs[0].TimestampDelta) != 4990 {
		t.Fatalf("records %+v %v", recs, err)
	}
	// Without the flag the last offset delta is the last record's.
	opts.LastOffsetDelta, opts.DeleteHorizon = 0, false
	b, _ = Build(opts, recs)
	if h, _ := Verify(b); h.LastOffsetDelta != 5 || h.HasDeleteHorizon() {
		t.Fatalf("header %+v", h)
	}
}

// TestAppendEmptyBatch: the header-only batch Kafka's cleaner leaves for a
// producer's last batch verifies, holds no records and keeps the fields.
func TestAppendEmptyBatch(t *testing.T) {
	opts := DefaultBuildOptions()
	opts.BaseOffset, opts.PartitionLeaderEpoch = 42, 3
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = 77, 1, 10, true
	opts.Compression, opts.DeleteHorizon = CodecZstd, true
	b := AppendEmptyBatch([]byte("prefix"), opts, 4, 1234)
	h, err := Verify(b[6:])
	if err != nil {
		t.Fatal(err)
	}
	if h.Size() != HeaderSize || h.RecordCount != 0 || h.LastOffset() != 46 || h.ProducerID != 77 || h.ProducerEpoch != 1 ||
		h.BaseSequence != 10 || !h.IsTransactional() || h.IsControl() || h.Compression() != CodecNone || h.HasDeleteHorizon() ||
		h.MaxTimestamp != 1234 || h.BaseTimestamp != 1234 || h.PartitionLeaderEpoch != 3 {
		t.Fatalf("empty batch header %+v", h)
	}
	if recs, err := ReadRecords(b[6:], 0); err != nil || len(recs) != 0 {
		t.Fatalf("records of an empty batch: %v %v", recs, err)
	}
}
