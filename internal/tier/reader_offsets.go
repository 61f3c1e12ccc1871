package tier

import (
	"context"
	"fmt"

	"github.com/samsa-streaming/samsa/internal/record"
)

// TimestampedOffset is the first record at or after a timestamp, with the
// leader epoch of its batch (-1 when the batch has none).
type TimestampedOffset struct {
	Offset      int64
	TimestampMs int64
	LeaderEpoch int32
}

// maxTimestampScanBytes bounds the bytes one timestamp lookup reads from a
// remote segment past its time index hint: a time index entry comes every
// index.interval.bytes (4096), so a lookup normally reads a few KiB.
// Samsa: 64 MiB, past which the segment's index is broken.
const maxTimestampScanBytes = 64 << 20

// NeedsRemoteTimestampSearch reports, from the partition's known remote
// state and without I/O, whether the first record at or after ts at or
// above logStartOffset may be in the remote tier: some remote segment
// ending at or above logStartOffset has a max timestamp at or after ts.
func (r *Reader) NeedsRemoteTimestampSearch(p Partition, ts, logStartOffset int64) bool {
	v, ok := r.CachedView(p)
	if !ok {
		return true
	}
	for _, s := range v.Segments {
		if s.EndOffset >= logStartOffset && s.MaxTimestampMs >= ts {
			return true
		}
	}
	return false
}

// OffsetForTimestamp finds the first record with timestamp >= ts at or
// above logStartOffset in the remote tier, Kafka's
// RemoteLogManager.findOffsetByTimestamp: the first remote segment whose
// max timestamp reaches ts, its time index for where to start, then the
// batches from there. found is false when no remote record is that late.
func (r *Reader) OffsetForTimestamp(ctx context.Context, p Partition, ts, logStartOffset int64) (TimestampedOffset, bool, error) {
	none := TimestampedOffset{Offset: -1, TimestampMs: -1, LeaderEpoch: -1}
	view, err := r.View(ctx, p)
	if err != nil {
		return none, false, err
	}
	for i := range view.Segments {
		seg := &view.Segments[i]
		if seg.EndOffset < logStartOffset || seg.MaxTimestampMs < ts {
			continue
		}
		found, ok, err := r.searchSegment(ctx, seg, ts, max(logStartOffset, seg.BaseOffset))
		if err != nil || ok {
			return found, ok, err
		}
	}
	return none, false, nil
}

func (r *Reader) searchSegment(ctx context.Context, seg *SegmentMetadata, ts, startOffset int64) (TimestampedOffset, bool, error) {
	none := TimestampedOffset{Offset: -1, TimestampMs: -1, LeaderEpoch: -1}
	from := startOffset
	if hasFile(seg, FileTimeIndex) {
		raw, err := r.file(ctx, seg, FileTimeIndex)
		if err != nil {
			return none, false, err
		}
		entries, err := DecodeTimeIndex(raw)
		if err != nil {
			return none, false, err
		}
		from = max(from, seg.BaseOffset+int64(lookupTimestamp(entries, ts)))
	}
	position := int64(0)
	if hasFile(seg, FileOffsetIndex) {
		raw, err := r.file(ctx, seg, FileOffsetIndex)
		if err != nil {
			return none, false, err
		}
		entries, err := DecodeOffsetIndex(raw)
		if err != nil {
			return none, false, err
		}
		position = lookupPosition(entries, uint32(from-seg.BaseOffset))
	}
	scanned := int64(0)
	chunks := &chunkCursor{index: -1}
	for position < seg.SegmentSizeBytes && scanned < maxTimestampScanBytes {
		head, err := r.readRange(ctx, seg, chunks, position, record.HeaderSize)
		if err != nil {
			return none, false, err
		}
		h, err := record.ParseHeader(head)
		if err != nil {
			return none, false, fmt.Errorf("%w: batch at %d: %w", ErrCorruptMetadata, position, err)
		}
		size := int64(h.Size())
		if size > maxBatchBytes || position+size > seg.SegmentSizeBytes {
			return none, false, fmt.Errorf("%w: batch at %d of %d bytes overruns the segment", ErrCorruptMetadata, position, size)
		}
		if h.LastOffset() >= startOffset && h.MaxTimestamp >= ts && !h.IsControl() {
			batch, err := r.readRange(ctx, seg, chunks, position, size)
			if err != nil {
				return none, false, err
			}
			found, ok, err := firstRecordAtOrAfter(batch, &h, ts, startOffset)
			if err != nil || ok {
				return found, ok, err
			}
		}
		position += size
		scanned += size
	}
	return none, false, nil
}

// firstRecordAtOrAfter decodes a batch and returns its first record with
// timestamp >= ts and offset >= startOffset.
func firstRecordAtOrAfter(batch []byte, h *record.Header, ts, startOffset int64) (TimestampedOffset, bool, error) {
	epoch := h.PartitionLeaderEpoch
	if epoch < 0 {
		epoch = -1
	}
	var out TimestampedOffset
	found := false
	err := record.Records(batch, 0, func(rec record.Record) error {
		offset := h.BaseOffset + int64(rec.OffsetDelta)
		stamp := h.RecordTimestamp(rec.TimestampDelta)
		if !found && offset >= startOffset && stamp >= ts {
			out, found = TimestampedOffset{Offset: offset, TimestampMs: stamp, LeaderEpoch: epoch}, true
		}
		return nil
	})
	if err != nil {
		return TimestampedOffset{Offset: -1, TimestampMs: -1, LeaderEpoch: -1}, false, fmt.Errorf("%w: %w", ErrCorruptMetadata, err)
	}
	return out, found, nil
}
