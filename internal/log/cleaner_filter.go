package log

import (
	"fmt"

	"github.com/samsa-streaming/samsa/internal/record"
)

// batchFilter decides, batch by batch, what a cleaning pass keeps (Kafka's
// LogCleaner record filter with MemoryRecords.filterTo):
//
//   - A data record stays when it is the latest of its key (the offset map
//     holds no later offset for it) or lies past the section the map covers;
//     a record with no key goes. A tombstone (null value) stays until its
//     batch's delete horizon has passed.
//   - A batch of an aborted transaction goes whole.
//   - A transaction marker stays while its transaction has data in the log;
//     then it gets a delete horizon and goes once that has passed.
//   - A batch whose records all go is dropped, unless it is the last batch
//     of a producer still active or the last batch of the segments being
//     replaced: those stay as a header with no records, keeping their
//     offsets, producer id, epoch and base sequence.
//   - A batch keeping every record and needing no new delete horizon is
//     copied byte for byte; otherwise its kept records are rebuilt into a
//     batch with the same base offset, last offset, producer fields, leader
//     epoch, compression and timestamp type. The first time a batch with a
//     tombstone (or a marker of an emptied transaction) is rewritten, its
//     delete horizon becomes now + delete.retention.ms (KIP-534).
type batchFilter struct {
	offsets           *offsetMap
	txns              *cleanedTxns
	producers         *producerScan
	nowMs             int64
	deleteRetentionMs int64
	// producerExpirationMs is producer.id.expiration.ms.
	producerExpirationMs int64
	// maxDecompressedBytes bounds a compressed batch's records once
	// decompressed (0: record.DefaultMaxDecompressedBytes).
	maxDecompressedBytes int
	// keep is reused: whether each record of the current batch stays.
	keep []bool
}

// batchRetention is what happens to a batch before its records are read.
type batchRetention int

const (
	// deleteBatch drops the batch without reading its records.
	deleteBatch batchRetention = iota
	// deleteEmptyBatch drops the batch if no record stays.
	deleteEmptyBatch
	// retainEmptyBatch keeps at least the batch's header.
	retainEmptyBatch
)

// filterResult counts what filter read and kept.
type filterResult struct {
	recordsRead, recordsKept int
}

// filter appends to dst what the cleaned log keeps of batch (whose header is
// h). lastOfGroup marks the last batch of the segments being replaced.
func (f *batchFilter) filter(dst, batch []byte, h *record.Header, lastOfGroup bool) ([]byte, filterResult, error) {
	var res filterResult
	canDiscard := false
	if h.IsControl() {
		typ, hasRecord, err := controlRecordType(batch, f.maxDecompressedBytes)
		if err != nil {
			return dst, res, fmt.Errorf("%w: control batch at offset %d: %w", ErrCorrupt, h.BaseOffset, err)
		}
		canDiscard = f.txns.onControl(h, typ, hasRecord)
	} else {
		canDiscard = f.txns.onData(h)
	}
	horizon, horizonSet := h.DeleteHorizonMs()
	discardRecords := canDiscard
	if h.IsControl() {
		discardRecords = canDiscard && horizonSet && horizon <= f.nowMs
	}
	markerForEmptyTxn := canDiscard && h.IsControl()

	retention := deleteEmptyBatch
	switch {
	case h.HasProducerID() && f.producers.isLastOfActiveProducer(h, f.nowMs, f.producerExpirationMs):
		retention = retainEmptyBatch
	case lastOfGroup:
		// Keeps the cleaned segment's next offset that of the segments it
		// replaces, which recovery of an interrupted swap relies on.
		retention = retainEmptyBatch
	case discardRecords:
		retention = deleteBatch
	}
	if retention == deleteBatch {
		return dst, res, nil
	}

	retainDeletes := !horizonSet || f.nowMs < horizon
	containsTombstones := false
	f.keep = f.keep[:0]
	err := record.Records(batch, f.maxDecompressedBytes, func(r record.Record) error {
		res.recordsRead++
		keep := f.keepRecord(h, &r, discardRecords, retainDeletes)
		f.keep = append(f.keep, keep)
		if keep {
			res.recordsKept++
			containsTombstones = containsTombstones || r.Value == nil
		}
		return nil
	})
	if err != nil {
		return dst, res, fmt.Errorf("%w: batch at offset %d: %w", ErrCorrupt, h.BaseOffset, err)
	}
	switch {
	case res.recordsKept > 0:
		needHorizon := (containsTombstones || markerForEmptyTxn) && !horizonSet
		if res.recordsKept == res.recordsRead && !needHorizon {
			return append(dst, batch...), res, nil
		}
		dst, err = f.rebuild(dst, batch, h, needHorizon)
		return dst, res, err
	case retention == retainEmptyBatch:
		return record.AppendEmptyBatch(dst, buildOptionsOf(h), h.LastOffsetDelta, h.MaxTimestamp), res, nil
	default:
		return dst, res, nil
	}
}

// keepRecord is the per-record rule.
func (f *batchFilter) keepRecord(h *record.Header, r *record.Record, discardRecords, retainDeletes bool) bool {
	switch {
	case discardRecords:
		return false
	case h.IsControl():
		return true
	}
	offset := h.BaseOffset + int64(r.OffsetDelta)
	if offset > f.offsets.latestOffset {
		return true
	}
	if r.Key == nil {
		// Compacted topics refuse records without a key; one found here
		// cannot be deduplicated and goes, as in Kafka.
		return false
	}
	latest := offset >= f.offsets.get(r.Key)
	return latest && (r.Value != nil || retainDeletes)
}

// buildOptionsOf returns the options that rebuild a batch with h's fields.
func buildOptionsOf(h *record.Header) record.BuildOptions {
	return record.BuildOptions{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
		Transactional:        h.IsTransactional(),
		Control:              h.IsControl(),
		Compression:          h.Compression(),
		LogAppendTime:        h.IsLogAppendTime(),
		LogAppendTimeMs:      h.MaxTimestamp,
		KeepOffsetDeltas:     true,
		LastOffsetDelta:      h.LastOffsetDelta,
	}
}

// rebuild appends a batch of the records of batch that f.keep marks.
func (f *batchFilter) rebuild(dst, batch []byte, h *record.Header, needHorizon bool) ([]byte, error) {
	recs, err := record.ReadRecords(batch, f.maxDecompressedBytes)
	if err != nil {
		return dst, fmt.Errorf("%w: batch at offset %d: %w", ErrCorrupt, h.BaseOffset, err)
	}
	if len(recs) != len(f.keep) {
		return dst, fmt.Errorf("%w: batch at offset %d read %d records, then %d", ErrCorrupt, h.BaseOffset, len(f.keep), len(recs))
	}
	kept := recs[:0]
	for i := range recs {
		if f.keep[i] {
			kept = append(kept, recs[i])
		}
	}
	opts := buildOptionsOf(h)
	// Record timestamps are baseTimestamp + delta; the new base is the
	// delete horizon when the batch has one, else the first record's time.
	horizon, horizonSet := h.DeleteHorizonMs()
	switch {
	case needHorizon:
		opts.DeleteHorizon, opts.BaseTimestamp = true, f.nowMs+f.deleteRetentionMs
	case horizonSet:
		opts.DeleteHorizon, opts.BaseTimestamp = true, horizon
	default:
		opts.BaseTimestamp = h.BaseTimestamp + kept[0].TimestampDelta
	}
	for i := range kept {
		kept[i].TimestampDelta = h.BaseTimestamp + kept[i].TimestampDelta - opts.BaseTimestamp
	}
	return record.AppendBatch(dst, opts, kept)
}
