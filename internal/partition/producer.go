package partition

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/record"
)

// producerBatchCacheSize is how many recent batches per producer are kept to
// recognise retries; it matches max.in.flight.requests.per.connection's upper
// bound for idempotent producers (5), as Kafka's NUM_BATCHES_TO_RETAIN.
const producerBatchCacheSize = 5

// Sentinels of the batch header and producer state, as Kafka's RecordBatch.
const (
	noProducerEpoch int16 = -1
	noSequence      int32 = -1
)

// Origin says who appends a batch, which decides how much is checked (as
// Kafka's AppendOrigin).
type Origin uint8

const (
	// OriginClient: a producer's batch; epochs, sequences and KIP-890
	// verification are checked.
	OriginClient Origin = iota
	// OriginCoordinator: written by a coordinator on a producer's behalf
	// (transaction markers, transactional offset commits); epochs are
	// checked, sequences are not.
	OriginCoordinator
	// OriginReplay: read back from the log while rebuilding state; nothing
	// is refused.
	OriginReplay
)

// Transaction versions (the transaction.version feature, KIP-890).
const (
	// TransactionVersion0 and 1 write markers with the producer's epoch.
	TransactionVersion0 int8 = 0
	// TransactionVersion2 bumps the epoch at the end of every transaction:
	// a marker carries an epoch above the producer's.
	TransactionVersion2 int8 = 2
)

// batchMetadata is one recent batch of a producer (Kafka's BatchMetadata).
type batchMetadata struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
	timestamp               int64
}

// producerEntry is what a partition remembers of one producer id (Kafka's
// ProducerStateEntry). It is a value: validation works on a copy that
// replaces the stored entry only once the append succeeded.
type producerEntry struct {
	producerID int64
	// epoch is noProducerEpoch for an entry not yet seen.
	epoch int16
	// batches is a ring of the most recent batches of this epoch, oldest at
	// head. Invariant: 0 <= count <= producerBatchCacheSize.
	batches [producerBatchCacheSize]batchMetadata
	head    int
	count   int
	// coordinatorEpoch is the epoch of the last transaction coordinator
	// that wrote a marker for this producer, -1 before any.
	coordinatorEpoch int32
	// lastTimestamp is the max timestamp of the last batch (or the marker
	// time), for producer.id.expiration.ms.
	lastTimestamp int64
	// currentTxnFirstOffset is the first offset of the producer's open
	// transaction in this partition, -1 when none is open.
	currentTxnFirstOffset int64
}

func emptyEntry(producerID int64) producerEntry {
	return producerEntry{producerID: producerID, epoch: noProducerEpoch, coordinatorEpoch: -1, lastTimestamp: -1, currentTxnFirstOffset: -1}
}

func (e *producerEntry) isEmpty() bool { return e.count == 0 }

func (e *producerEntry) batch(i int) *batchMetadata {
	return &e.batches[(e.head+i)%producerBatchCacheSize]
}

func (e *producerEntry) last() *batchMetadata {
	if e.count == 0 {
		return nil
	}
	return e.batch(e.count - 1)
}

// lastSeq is the last sequence written at the current epoch, noSequence
// when none.
func (e *producerEntry) lastSeq() int32 {
	if b := e.last(); b != nil {
		return b.lastSeq
	}
	return noSequence
}

// maybeUpdateEpoch moves the entry to epoch, forgetting the batches of the
// old one.
func (e *producerEntry) maybeUpdateEpoch(epoch int16) {
	if e.epoch != epoch {
		e.epoch = epoch
		e.head, e.count = 0, 0
	}
}

func (e *producerEntry) addBatch(epoch int16, b batchMetadata) {
	e.maybeUpdateEpoch(epoch)
	if e.count == producerBatchCacheSize {
		e.head = (e.head + 1) % producerBatchCacheSize
		e.count--
	}
	*e.batch(e.count) = b
	e.count++
	e.lastTimestamp = b.timestamp
}

// endTxn applies a marker: the epoch moves to the marker's, the open
// transaction closes.
func (e *producerEntry) endTxn(epoch int16, coordinatorEpoch int32, timestamp int64) {
	e.maybeUpdateEpoch(epoch)
	e.coordinatorEpoch = coordinatorEpoch
	e.currentTxnFirstOffset = -1
	e.lastTimestamp = timestamp
}

// findDuplicate returns the cached batch with the same epoch and sequence
// range as h: h is a retry of a batch already written.
func (e *producerEntry) findDuplicate(h record.Header) *batchMetadata {
	if h.ProducerEpoch != e.epoch {
		return nil
	}
	last := lastSequence(h)
	for i := 0; i < e.count; i++ {
		if b := e.batch(i); b.firstSeq == h.BaseSequence && b.lastSeq == last {
			return b
		}
	}
	return nil
}

// lastSequence is the sequence of the batch's last record; sequences wrap
// from MaxInt32 to 0.
func lastSequence(h record.Header) int32 {
	if h.BaseSequence < 0 {
		return noSequence
	}
	last := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if last > math.MaxInt32 {
		last -= math.MaxInt32 + 1
	}
	return int32(last)
}

// firstSequenceOf undoes lastSequence for a snapshot entry, which stores
// only the last sequence and the offset delta.
func firstSequenceOf(lastSeq, offsetDelta int32) int32 {
	if lastSeq < 0 {
		return noSequence
	}
	if lastSeq < offsetDelta {
		return math.MaxInt32 - (offsetDelta - lastSeq) + 1
	}
	return lastSeq - offsetDelta
}

// inSequence reports whether next follows last.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// validateData applies Kafka's ProducerAppendInfo rules for a data batch to
// a copy of current and returns it, and whether the batch opens a
// transaction in this partition. firstOffset is the offset the batch will
// get. verification is the producer's KIP-890 verification entry, if any.
func validateData(current producerEntry, h record.Header, firstOffset int64, origin Origin, verification *TxnVerification) (producerEntry, bool, *kerr.Error) {
	updated := current
	if h.ProducerEpoch < updated.epoch && origin != OriginReplay {
		// Since 2.7 Kafka answers INVALID_PRODUCER_EPOCH here rather than
		// the fatal PRODUCER_FENCED, so the client can abort and retry.
		return current, false, kerr.InvalidProducerEpoch
	}
	if origin == OriginClient {
		if code := checkSequence(current, h, verification); code != nil {
			return current, false, code
		}
	}
	lastOffset := firstOffset + int64(h.LastOffsetDelta)
	updated.addBatch(h.ProducerEpoch, batchMetadata{
		firstSeq: h.BaseSequence, lastSeq: lastSequence(h),
		firstOffset: firstOffset, lastOffset: lastOffset, timestamp: h.MaxTimestamp,
	})
	switch {
	case updated.currentTxnFirstOffset >= 0 && !h.IsTransactional():
		if origin == OriginReplay {
			return updated, false, nil
		}
		return current, false, kerr.InvalidTxnState
	case updated.currentTxnFirstOffset < 0 && h.IsTransactional():
		updated.currentTxnFirstOffset = firstOffset
		return updated, true, nil
	}
	return updated, false, nil
}

// checkSequence is Kafka's ProducerAppendInfo.checkSequence.
func checkSequence(current producerEntry, h record.Header, v *TxnVerification) *kerr.Error {
	seq := h.BaseSequence
	if v != nil {
		// A transactions-v2 producer with no state here must start at 0.
		if v.supportsEpochBump && seq != 0 && current.isEmpty() {
			return kerr.OutOfOrderSequenceNumber
		}
		if seq > v.lowestSequence {
			return kerr.OutOfOrderSequenceNumber
		}
	}
	if h.ProducerEpoch != current.epoch {
		// A new epoch starts at sequence 0; a producer unknown here (new,
		// expired, or its records deleted) may start anywhere.
		if seq != 0 && current.epoch != noProducerEpoch {
			return kerr.OutOfOrderSequenceNumber
		}
		return nil
	}
	if current.epoch == noProducerEpoch {
		return nil
	}
	if !inSequence(current.lastSeq(), seq) {
		return kerr.OutOfOrderSequenceNumber
	}
	return nil
}

// completedTxn is a transaction a marker ended in this partition.
type completedTxn struct {
	producerID  int64
	firstOffset int64
	// lastOffset is the marker's offset.
	lastOffset int64
	aborted    bool
}

// validateMarker applies Kafka's appendEndTxnMarker rules to a copy of
// current. It returns the updated entry and, when the producer had data in
// the transaction, the completed transaction.
func validateMarker(current producerEntry, m TxnMarker, offset int64, origin Origin) (producerEntry, *completedTxn, *kerr.Error) {
	updated := current
	tv := m.TransactionVersion
	if origin == OriginReplay {
		tv = TransactionVersion0 // the most permissive rule; the leader checked
	}
	invalid := m.ProducerEpoch < updated.epoch
	if tv >= TransactionVersion2 {
		invalid = m.ProducerEpoch <= updated.epoch
		// A retried TV2 marker (coordinator reload, lost response) for a
		// transaction already ended here is written again (KAFKA-19999).
		if m.ProducerEpoch == updated.epoch && updated.currentTxnFirstOffset < 0 {
			invalid = false
		}
	}
	if invalid && origin != OriginReplay {
		return current, nil, kerr.InvalidProducerEpoch
	}
	if updated.coordinatorEpoch > m.CoordinatorEpoch && origin != OriginReplay {
		return current, nil, kerr.TransactionCoordinatorFenced
	}
	var done *completedTxn
	if updated.currentTxnFirstOffset >= 0 {
		done = &completedTxn{producerID: m.ProducerID, firstOffset: updated.currentTxnFirstOffset, lastOffset: offset, aborted: !m.Commit}
	}
	updated.endTxn(m.ProducerEpoch, m.CoordinatorEpoch, m.TimestampMs)
	return updated, done, nil
}
