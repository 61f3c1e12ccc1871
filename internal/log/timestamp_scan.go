package log

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/samsa-streaming/samsa/internal/record"
)

// TimestampedRecord is a record found by its timestamp: its offset, its
// timestamp, and the partition leader epoch of the batch that holds it (-1
// when the batch carries none), which ListOffsets answers as Kafka does.
type TimestampedRecord struct {
	Offset, Timestamp int64
	LeaderEpoch       int32
}

// errStopScan ends a record iteration early once the record sought is found.
var errStopScan = errors.New("log: record found")

// firstRecordFrom scans the batches of the segment from the batch at pos
// and returns the offset and timestamp of the first record at or after
// startingOffset whose timestamp satisfies match, as Kafka does for a
// ListOffsets by timestamp: the records of the batch are decoded, so the
// answer is a record inside the batch, not its base offset. A batch whose
// max timestamp cannot satisfy match (tooEarly) is skipped without being
// read. found is false when no record of the segment matches.
func (s *segment) firstRecordFrom(pos, startingOffset int64, tooEarly func(maxTimestamp int64) bool, match func(timestamp int64) bool) (rec TimestampedRecord, found bool, err error) {
	none := TimestampedRecord{Offset: -1, Timestamp: -1, LeaderEpoch: -1}
	size := s.size.Load()
	file, err := s.file()
	if err != nil {
		return none, false, err
	}
	sc := newHeaderScanner(file, size)
	defer sc.release()
	var batch []byte
	for {
		h, err := sc.headerAt(pos)
		if err == io.EOF {
			return none, false, nil
		}
		if err != nil {
			return none, false, err
		}
		if h.LastOffset() < startingOffset || tooEarly(h.MaxTimestamp) {
			pos += int64(h.Size())
			continue
		}
		batch = slices.Grow(batch[:0], h.Size())[:h.Size()]
		if _, err := file.ReadAt(batch, pos); err != nil {
			return none, false, storageError("read batch", err)
		}
		err = record.Records(batch, 0, func(r record.Record) error {
			o, ts := h.BaseOffset+int64(r.OffsetDelta), h.RecordTimestamp(r.TimestampDelta)
			if o >= startingOffset && match(ts) {
				rec, found = TimestampedRecord{Offset: o, Timestamp: ts, LeaderEpoch: max(h.PartitionLeaderEpoch, -1)}, true
				return errStopScan
			}
			return nil
		})
		if found {
			return rec, true, nil
		}
		if err != nil {
			return none, false, corruptError(fmt.Sprintf("%s: records of the batch at position %d", file.Name(), pos), err)
		}
		pos += int64(h.Size())
	}
}
