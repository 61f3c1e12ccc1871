package record

import "fmt"

// SplitBatches returns the batches of a record set (the records of a produce
// or fetch partition, or a run of segment bytes) as subslices of it. It
// checks framing only: each header parses with magic 2 and each batch is
// whole. Bytes after the last whole batch are an error wrapping ErrTruncated,
// returned with the batches before them.
func SplitBatches(recordSet []byte) ([][]byte, error) {
	var batches [][]byte
	err := eachBatch(recordSet, func(batch []byte) { batches = append(batches, batch) })
	return batches, err
}

// CountBatches returns how many batches a record set holds, with
// SplitBatches' checks. A produce request of version 3 or later must carry
// exactly one batch per partition, else Kafka answers INVALID_RECORD;
// Validate makes that check itself.
func CountBatches(recordSet []byte) (int, error) {
	n := 0
	err := eachBatch(recordSet, func([]byte) { n++ })
	return n, err
}

func eachBatch(recordSet []byte, fn func(batch []byte)) error {
	for rest := recordSet; len(rest) > 0; {
		h, err := ParseHeader(rest)
		if err != nil {
			return fmt.Errorf("at byte %d: %w", len(recordSet)-len(rest), err)
		}
		if len(rest) < h.Size() {
			return fmt.Errorf("at byte %d: %w: %d bytes, batch needs %d",
				len(recordSet)-len(rest), ErrTruncated, len(rest), h.Size())
		}
		fn(rest[:h.Size():h.Size()])
		rest = rest[h.Size():]
	}
	return nil
}
