package record

import (
	"encoding/binary"
	"fmt"
)

// SetLogAppendTime marks the whole batch at the start of batch as
// LogAppendTime with append time ts: it sets the timestamp-type bit and
// maxTimestamp and recomputes the CRC, in place. baseTimestamp and the record
// deltas keep the create times, as Kafka keeps them; readers take every
// record's timestamp from maxTimestamp (see Header.RecordTimestamp). It fails
// only when batch does not start with a whole batch.
func SetLogAppendTime(batch []byte, ts int64) error {
	h, err := ParseHeader(batch)
	if err != nil {
		return err
	}
	if len(batch) < h.Size() {
		return fmt.Errorf("%w: %d bytes, batch needs %d", ErrTruncated, len(batch), h.Size())
	}
	setTimestamps(batch, &h, true, ts)
	return nil
}

// setTimestamps sets the timestamp type and maxTimestamp of the whole batch
// at the start of batch, described by h, and then its CRC, unless both
// already hold; h is updated to match. This is Kafka's
// DefaultRecordBatch.setMaxTimestamp.
func setTimestamps(batch []byte, h *Header, logAppendTime bool, maxTimestamp int64) {
	attributes := h.Attributes &^ AttrLogAppendTime
	if logAppendTime {
		attributes |= AttrLogAppendTime
	}
	if attributes == h.Attributes && maxTimestamp == h.MaxTimestamp {
		return
	}
	binary.BigEndian.PutUint16(batch[offsetAttributes:], uint16(attributes))
	binary.BigEndian.PutUint64(batch[offsetMaxTimestamp:], uint64(maxTimestamp))
	h.Attributes, h.MaxTimestamp = attributes, maxTimestamp
	h.CRC = ComputeCRC(batch[:h.Size()])
	binary.BigEndian.PutUint32(batch[offsetCRC:], h.CRC)
}
