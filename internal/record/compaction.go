package record

import "encoding/binary"

// What the log cleaner needs beyond Build: the delete horizon of KIP-534 and
// the header-only batch a cleaned log keeps when every record of a
// producer's last batch is gone.

// HasDeleteHorizon reports attribute bit 6: the batch was rewritten by the
// log cleaner with tombstones or a marker to drop after DeleteHorizonMs.
func (h *Header) HasDeleteHorizon() bool { return h.Attributes&AttrDeleteHorizonSet != 0 }

// DeleteHorizonMs is the batch's delete horizon, its baseTimestamp, when
// HasDeleteHorizon.
func (h *Header) DeleteHorizonMs() (int64, bool) {
	return h.BaseTimestamp, h.HasDeleteHorizon()
}

// AppendEmptyBatch appends a batch of no records covering offsets
// opts.BaseOffset to opts.BaseOffset+lastOffsetDelta, as Kafka's
// DefaultRecordBatch.writeEmptyHeader: uncompressed, baseTimestamp and
// maxTimestamp both timestamp, and the producer id, epoch, base sequence,
// leader epoch, timestamp type, transactional and control bits of opts.
// Readers skip it; replaying producer state still sees the producer's last
// offset and sequence. opts.Compression and opts.DeleteHorizon are ignored.
func AppendEmptyBatch(dst []byte, opts BuildOptions, lastOffsetDelta int32, timestamp int64) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	batch := dst[start:]
	var attributes int16
	if opts.LogAppendTime {
		attributes |= AttrLogAppendTime
	}
	if opts.Transactional {
		attributes |= AttrTransactional
	}
	if opts.Control {
		attributes |= AttrControl
	}
	be := binary.BigEndian
	be.PutUint64(batch[offsetBaseOffset:], uint64(opts.BaseOffset))
	be.PutUint32(batch[offsetBatchLength:], uint32(HeaderSize-LogOverhead))
	be.PutUint32(batch[offsetLeaderEpoch:], uint32(opts.PartitionLeaderEpoch))
	batch[offsetMagic] = CurrentMagic
	be.PutUint16(batch[offsetAttributes:], uint16(attributes))
	be.PutUint32(batch[offsetLastOffsetDelta:], uint32(lastOffsetDelta))
	be.PutUint64(batch[offsetBaseTimestamp:], uint64(timestamp))
	be.PutUint64(batch[offsetMaxTimestamp:], uint64(timestamp))
	be.PutUint64(batch[offsetProducerID:], uint64(opts.ProducerID))
	be.PutUint16(batch[offsetProducerEpoch:], uint16(opts.ProducerEpoch))
	be.PutUint32(batch[offsetBaseSequence:], uint32(opts.BaseSequence))
	be.PutUint32(batch[offsetRecordCount:], 0)
	be.PutUint32(batch[offsetCRC:], ComputeCRC(batch))
	return dst
}
