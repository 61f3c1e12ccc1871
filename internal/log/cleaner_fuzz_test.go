package log

import (
	"encoding/binary"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
)

// FuzzCleanerFilter feeds arbitrary batch bytes to the cleaner's batch
// filter (with the length and CRC fixed up, as the cleaner only filters
// batches that pass Verify). It must not panic, and what it writes must be
// one valid batch with the input's base offset, last offset and producer
// fields, holding a subset of the input's records.
func FuzzCleanerFilter(f *testing.F) {
	seed := func(opts record.BuildOptions, recs ...record.Record) {
		b, err := record.Build(opts, recs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, int64(5), false)
	}
	opts := record.DefaultBuildOptions()
	seed(opts, record.Record{Key: []byte("a"), Value: []byte("1")}, record.Record{Key: []byte("b"), OffsetDelta: 1})
	opts.Compression = record.CodecZstd
	seed(opts, record.Record{Key: []byte("a"), Value: []byte("2")}, record.Record{Key: []byte("c"), Value: []byte("3"), OffsetDelta: 1})
	seed(producerOpts(7, 1, 4, true), record.Record{Key: []byte("a"), Value: []byte("x")})
	marker, _ := record.BuildControlBatch(record.ControlBatchOptions{ProducerID: 7, Type: record.ControlAbort})
	f.Add(marker, int64(0), true)

	f.Fuzz(func(t *testing.T, batch []byte, latestOffset int64, lastOfGroup bool) {
		if len(batch) < record.HeaderSize {
			return
		}
		batch = append([]byte(nil), batch...)
		binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-record.LogOverhead))
		if len(batch) > record.HeaderSize {
			batch[16] = record.CurrentMagic
		}
		binary.BigEndian.PutUint32(batch[17:], record.ComputeCRC(batch))
		h, err := record.Verify(batch)
		if err != nil {
			return
		}
		offsets := newOffsetMap(1<<12, 0.9)
		offsets.put([]byte("a"), h.BaseOffset+1)
		offsets.put([]byte("b"), h.BaseOffset)
		offsets.updateLatestOffset(latestOffset)
		txns := newCleanedTxns()
		txns.addAborted([]AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 1 << 40}})
		scan := &producerScan{producers: map[int64]*producerLast{7: {epoch: 1, lastDataOffset: h.LastOffset(), openTxnFirstOffset: -1, lastTimestamp: 1 << 50}}, firstOpenTxnOffset: -1}
		filter := &batchFilter{offsets: offsets, txns: txns, producers: scan, nowMs: 1_700_000_000_000, deleteRetentionMs: 1000, producerExpirationMs: 1000,
			maxDecompressedBytes: 1 << 20}
		out, res, err := filter.filter(nil, batch, &h, lastOfGroup)
		if err != nil || len(out) == 0 {
			return
		}
		got, err := record.Verify(out)
		if err != nil || got.Size() != len(out) {
			t.Fatalf("filter wrote a bad batch: %v (%d bytes, batch of %d)", err, len(out), got.Size())
		}
		if got.BaseOffset != h.BaseOffset || got.LastOffset() != h.LastOffset() || got.ProducerID != h.ProducerID ||
			got.ProducerEpoch != h.ProducerEpoch || got.BaseSequence != h.BaseSequence || got.IsControl() != h.IsControl() ||
			got.IsTransactional() != h.IsTransactional() || got.PartitionLeaderEpoch != h.PartitionLeaderEpoch {
			t.Fatalf("filter changed the batch's identity: %+v from %+v", got, h)
		}
		if int(got.RecordCount) != res.recordsKept || res.recordsKept > res.recordsRead {
			t.Fatalf("wrote %d records, kept %d of %d", got.RecordCount, res.recordsKept, res.recordsRead)
		}
		if got.RecordCount == 0 {
			return
		}
		in := map[int32]record.Record{}
		all, err := record.ReadRecords(batch, 1<<20)
		if err != nil {
			t.Fatalf("filter kept records of a batch that does not read: %v", err)
		}
		for _, r := range all {
			in[r.OffsetDelta] = r
		}
		kept, err := record.ReadRecords(out, 0)
		if err != nil {
			t.Fatalf("written batch does not read: %v", err)
		}
		for _, r := range kept {
			orig, ok := in[r.OffsetDelta]
			if !ok || string(orig.Key) != string(r.Key) || string(orig.Value) != string(r.Value) || (orig.Value == nil) != (r.Value == nil) ||
				h.BaseTimestamp+orig.TimestampDelta != got.BaseTimestamp+r.TimestampDelta {
				t.Fatalf("record at delta %d changed: %+v from %+v", r.OffsetDelta, r, orig)
			}
		}
	})
}
