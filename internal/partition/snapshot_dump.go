package partition

// SnapshotEntry is one producer of a producer-state snapshot file
// (<offset>.snapshot), as samsa dump-log prints it.
type SnapshotEntry struct {
	ProducerID            int64 `json:"producerId"`
	ProducerEpoch         int16 `json:"producerEpoch"`
	LastSequence          int32 `json:"lastSequence"`
	LastOffset            int64 `json:"lastOffset"`
	OffsetDelta           int32 `json:"offsetDelta"`
	Timestamp             int64 `json:"timestamp"`
	CoordinatorEpoch      int32 `json:"coordinatorEpoch"`
	CurrentTxnFirstOffset int64 `json:"currentTxnFirstOffset"`
}

// DecodeSnapshotFile decodes a producer-state snapshot file. Errors wrap
// ErrCorruptSnapshot.
func DecodeSnapshotFile(b []byte) ([]SnapshotEntry, error) {
	entries, err := decodeSnapshot(b)
	if err != nil {
		return nil, err
	}
	out := make([]SnapshotEntry, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		se := SnapshotEntry{
			ProducerID: e.producerID, ProducerEpoch: e.epoch, LastSequence: noSequence, LastOffset: -1,
			Timestamp: e.lastTimestamp, CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnFirstOffset: e.currentTxnFirstOffset,
		}
		if last := e.last(); last != nil {
			se.LastSequence, se.LastOffset, se.OffsetDelta = last.lastSeq, last.lastOffset, int32(last.lastOffset-last.firstOffset)
		}
		out = append(out, se)
	}
	return out, nil
}
