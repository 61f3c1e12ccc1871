package log

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/samsa-streaming/samsa/internal/record"
)

// errStopScan ends a record iteration early once the record sought is found.
var errStopScan = errors.New("log: record found")

// firstRecordFrom scans the batches of the segment from the batch at pos
// and returns the offset and timestamp of the first record at or after
// startingOffset whose timestamp satisfies match, as Kafka does for a
// ListOffsets by timestamp: the records of the batch are decoded, so the
// answer is a record inside the batch, not its base offset. A batch whose
// max timestamp cannot satisfy match (tooEarly) is skipped without being
// read. found is false when no record of the segment matches.
func (s *segment) firstRecordFrom(pos, startingOffset int64, tooEarly func(maxTimestamp int64) bool, match func(timestamp int64) bool) (offset, timestamp int64, found bool, err error) {
	size := s.size.Load()
	file, err := s.file()
	if err != nil {
		return -1, -1, false, err
	}
	sc := newHeaderScanner(file, size)
	defer sc.release()
	var batch []byte
	for {
		h, err := sc.headerAt(pos)
		if err == io.EOF {
			return -1, -1, false, nil
		}
		if err != nil {
			return -1, -1, false, err
		}
		if h.LastOffset() < startingOffset || tooEarly(h.MaxTimestamp) {
			pos += int64(h.Size())
			continue
		}
		batch = slices.Grow(batch[:0], h.Size())[:h.Size()]
		if _, err := file.ReadAt(batch, pos); err != nil {
			return -1, -1, false, storageError("read batch", err)
		}
		err = record.Records(batch, 0, func(r record.Record) error {
			o, ts := h.BaseOffset+int64(r.OffsetDelta), h.RecordTimestamp(r.TimestampDelta)
			if o >= startingOffset && match(ts) {
				offset, timestamp, found = o, ts, true
				return errStopScan
			}
			return nil
		})
		if found {
			return offset, timestamp, true, nil
		}
		if err != nil {
			return -1, -1, false, corruptError(fmt.Sprintf("%s: records of the batch at position %d", file.Name(), pos), err)
		}
		pos += int64(h.Size())
	}
}
