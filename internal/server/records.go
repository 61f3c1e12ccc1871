package server

import (
	"fmt"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
)

// maxInternalReadBytes bounds one read (and one decompressed batch) when the
// node replays one of its own logs.
const maxInternalReadBytes = 8 << 20

// replayLog calls fn for every data record of l below end, from the log
// start, in offset order. Control batches are skipped.
func replayLog(l *log.Log, end int64, fn func(offset int64, r record.Record) error) error {
	offset := l.LogStartOffset()
	for offset < end {
		data, _, err := l.ReadBytes(offset, maxInternalReadBytes, end, true)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return fmt.Errorf("replay %s: no progress at offset %d", l.Dir(), offset)
		}
		for len(data) > 0 {
			h, err := record.Verify(data)
			if err != nil {
				return fmt.Errorf("replay %s at offset %d: %w", l.Dir(), offset, err)
			}
			batch := data[:h.Size()]
			data = data[h.Size():]
			if !h.IsControl() {
				err = record.Records(batch, maxInternalReadBytes, func(r record.Record) error {
					if at := h.BaseOffset + int64(r.OffsetDelta); at >= offset {
						return fn(at, r)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			offset = h.LastOffset() + 1
		}
	}
	return nil
}

// buildBatch makes an uncompressed batch of records without a producer id,
// stamped with the current time.
func buildBatch(recs []record.Record) ([]byte, error) {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	return record.Build(opts, recs)
}
