package partition

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/record"
)

// TxnMarker is an end-transaction marker to write into a partition.
type TxnMarker struct {
	ProducerID    int64
	ProducerEpoch int16
	// CoordinatorEpoch is the epoch of the transaction coordinator writing
	// the marker; a marker from an older coordinator is refused.
	CoordinatorEpoch int32
	Commit           bool
	// TransactionVersion decides the epoch rule (see validateMarker).
	TransactionVersion int8
	// TimestampMs is the marker's timestamp, the coordinator's clock.
	TimestampMs int64
}

// TxnVerification is a KIP-890 verification guard: a transactional produce
// to a partition where the producer has no open transaction registers one,
// asks the transaction coordinator whether the partition belongs to the
// transaction, and appends with the same guard. A marker for the producer
// in between clears the guard, so a produce verified against a transaction
// that has since ended is refused rather than left hanging.
type TxnVerification struct {
	producerID int64
	epoch      int16
	// lowestSequence is the lowest first sequence of the batches verified
	// under this guard; a later batch may not skip ahead of it.
	lowestSequence int32
	// supportsEpochBump is true for transactions-v2 producers (Produce v12+).
	supportsEpochBump bool
	createdMs         int64
}

// ProducerInfo describes one active producer (DescribeProducers).
type ProducerInfo struct {
	ProducerID       int64
	ProducerEpoch    int16
	LastSequence     int32
	LastTimestamp    int64
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is -1 when no transaction is open.
	CurrentTxnStartOffset int64
}

// producerState is a partition's producer state (Kafka's
// ProducerStateManager): the last batches of each producer id, the open
// transactions, and the verification guards.
//
// Lock order: Partition.appendMu, then log locks, then producerState.mu. The
// log's roll hook takes mu, so mu is never held while calling into the log.
type producerState struct {
	mu struct {
		sync.Mutex
		producers map[int64]*producerEntry
		// ongoing maps the first offset of each open transaction to its
		// producer id.
		// Invariant: ongoing[o] == pid iff producers[pid].currentTxnFirstOffset == o.
		ongoing map[int64]int64
		// verifications are the KIP-890 guards by producer id.
		verifications map[int64]*TxnVerification
		// mapEndOffset is the offset after the last batch applied.
		mapEndOffset int64
		// lastSnapOffset is the offset of the newest snapshot written.
		lastSnapOffset int64
	}
	// firstUnstable is the first offset of the oldest open transaction,
	// -1 when none is open; read without the lock by fetches.
	firstUnstable atomic.Int64

	// unreplicated are transactions whose marker is written but may not
	// be below the high watermark yet, first offset -> marker offset
	// (Kafka's unreplicatedTxns): they hold the LSO back until the marker
	// is committed, so a read_committed consumer never reads a transaction
	// whose outcome a leader change could still undo. Lock order: mu, then
	// unreplicatedMu; LastStableOffset takes unreplicatedMu alone.
	unreplicatedMu sync.Mutex
	unreplicated   map[int64]int64
	// unreplicatedCount mirrors len(unreplicated) for a lock-free check.
	unreplicatedCount atomic.Int32
}

func newProducerState(startOffset int64) *producerState {
	s := &producerState{}
	s.mu.producers = map[int64]*producerEntry{}
	s.mu.ongoing = map[int64]int64{}
	s.mu.verifications = map[int64]*TxnVerification{}
	s.mu.mapEndOffset = startOffset
	s.mu.lastSnapOffset = startOffset
	s.firstUnstable.Store(-1)
	return s
}

func (s *producerState) entryLocked(pid int64) producerEntry {
	if e := s.mu.producers[pid]; e != nil {
		return *e
	}
	return emptyEntry(pid)
}

// putLocked stores the updated entry and keeps ongoing in step with it.
func (s *producerState) putLocked(e producerEntry) {
	if old := s.mu.producers[e.producerID]; old != nil && old.currentTxnFirstOffset >= 0 && old.currentTxnFirstOffset != e.currentTxnFirstOffset {
		delete(s.mu.ongoing, old.currentTxnFirstOffset)
	}
	if e.currentTxnFirstOffset >= 0 {
		s.mu.ongoing[e.currentTxnFirstOffset] = e.producerID
	}
	stored := e
	s.mu.producers[e.producerID] = &stored
	s.updateFirstUnstableLocked()
}

func (s *producerState) updateFirstUnstableLocked() {
	first := int64(-1)
	for off := range s.mu.ongoing {
		if first < 0 || off < first {
			first = off
		}
	}
	s.firstUnstable.Store(first)
}

// lastStableOffsetLocked is the LSO once done completes: the first offset
// of the oldest transaction still open by another producer, else the offset
// after the marker (Kafka's lastStableOffset(completedTxn)).
func (s *producerState) lastStableOffsetLocked(done *completedTxn) int64 {
	first := int64(-1)
	for off, pid := range s.mu.ongoing {
		if pid != done.producerID && (first < 0 || off < first) {
			first = off
		}
	}
	if first >= 0 {
		return first
	}
	return done.lastOffset + 1
}

// prepareData validates a data batch of a producer. It returns the entry
// to store once the batch is appended, whether the batch is a retry of the
// cached batch dup (nothing to append), or the error to answer.
func (s *producerState) prepareData(h record.Header, firstOffset int64, opts AppendOptions) (producerEntry, *batchMetadata, *kerr.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	current := s.entryLocked(h.ProducerID)
	if opts.Origin == OriginClient {
		if dup := current.findDuplicate(h); dup != nil {
			d := *dup
			return current, &d, nil
		}
	}
	verification := s.mu.verifications[h.ProducerID]
	if opts.Origin == OriginClient && h.IsTransactional() && opts.RequireVerification {
		ongoing := current.currentTxnFirstOffset >= 0 && current.epoch == h.ProducerEpoch
		if !ongoing && (opts.Verification == nil || verification != opts.Verification) {
			return current, nil, kerr.InvalidTxnState
		}
	}
	updated, _, code := validateData(current, h, firstOffset, opts.Origin, verification)
	return updated, nil, code
}

// commitData stores the entry prepareData returned, now that its batch
// ends at lastOffset. Appends are serialised, so the first offset
// prepareData was given is the one the log assigned.
func (s *producerState) commitData(e producerEntry, h record.Header, lastOffset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(e)
	if h.IsTransactional() {
		// The partition is now in the transaction; later batches of this
		// epoch need no verification.
		delete(s.mu.verifications, h.ProducerID)
	}
	s.mu.mapEndOffset = lastOffset + 1
	s.checkInvariantsLocked()
}

// advance records a batch without a producer id.
func (s *producerState) advance(lastOffset int64) {
	s.mu.Lock()
	s.mu.mapEndOffset = lastOffset + 1
	s.mu.Unlock()
}

// prepareMarker validates a marker about to be written at offset.
func (s *producerState) prepareMarker(m TxnMarker, offset int64, origin Origin) (producerEntry, *completedTxn, *kerr.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return validateMarker(s.entryLocked(m.ProducerID), m, offset, origin)
}

// markerLSO is the last stable offset to record with an aborted
// transaction in the index.
func (s *producerState) markerLSO(done *completedTxn) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastStableOffsetLocked(done)
}

// commitMarker stores the entry prepareMarker returned, closing the
// producer's transaction (done, when it had data here), now that the marker
// is at offset.
func (s *producerState) commitMarker(e producerEntry, offset int64, done *completedTxn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completedLocked(done)
	s.putLocked(e)
	// The marker ends the transaction the guard was for, unless (as
	// Kafka's isV2NextTransactionStarted) the guard is the next
	// transaction's: under transactions v2 the marker and that transaction
	// share the bumped epoch, and across brokers the marker may arrive
	// while the next transaction's first batch is being verified.
	if v := s.mu.verifications[e.producerID]; v == nil || !v.supportsEpochBump || v.epoch != e.epoch {
		delete(s.mu.verifications, e.producerID)
	}
	s.mu.mapEndOffset = offset + 1
	s.checkInvariantsLocked()
}

// completedLocked keeps a completed transaction unstable until its marker
// is below the high watermark. Called with mu held, before the producer's
// entry (and so ongoing) drops the transaction.
func (s *producerState) completedLocked(done *completedTxn) {
	if done == nil {
		return
	}
	s.unreplicatedMu.Lock()
	defer s.unreplicatedMu.Unlock()
	if s.unreplicated == nil {
		s.unreplicated = map[int64]int64{}
	}
	s.unreplicated[done.firstOffset] = done.lastOffset
	s.unreplicatedCount.Store(int32(len(s.unreplicated)))
}

// firstUnstableOffset is the first offset of the oldest transaction that is
// open, or decided with its marker at or above highWatermark; -1 when
// none (Kafka's firstUnstableOffset). Transactions whose marker is now
// below the high watermark are forgotten.
func (s *producerState) firstUnstableOffset(highWatermark int64) int64 {
	first := s.firstUnstable.Load()
	if s.unreplicatedCount.Load() == 0 {
		return first
	}
	s.unreplicatedMu.Lock()
	defer s.unreplicatedMu.Unlock()
	for f, marker := range s.unreplicated {
		if marker < highWatermark {
			delete(s.unreplicated, f)
		} else if first < 0 || f < first {
			first = f
		}
	}
	s.unreplicatedCount.Store(int32(len(s.unreplicated)))
	return first
}

// startVerification returns the guard for a transactional batch, or nil
// when the producer already has a transaction open here at this epoch.
func (s *producerState) startVerification(h record.Header, supportsEpochBump bool, nowMs int64) *TxnVerification {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.mu.producers[h.ProducerID]; e != nil && e.currentTxnFirstOffset >= 0 && e.epoch == h.ProducerEpoch {
		return nil
	}
	v := s.mu.verifications[h.ProducerID]
	if v == nil {
		v = &TxnVerification{producerID: h.ProducerID, epoch: h.ProducerEpoch, lowestSequence: h.BaseSequence, createdMs: nowMs}
		s.mu.verifications[h.ProducerID] = v
	} else if h.ProducerEpoch > v.epoch {
		v.epoch, v.lowestSequence = h.ProducerEpoch, h.BaseSequence
	} else if h.ProducerEpoch == v.epoch {
		v.lowestSequence = min(v.lowestSequence, h.BaseSequence)
	}
	v.supportsEpochBump = supportsEpochBump
	return v
}

// removeExpired forgets producers idle for expirationMs with no open
// transaction, and verification guards as old (Kafka's
// removeExpiredProducers). It returns how many producers went.
func (s *producerState) removeExpired(nowMs, expirationMs int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for pid, e := range s.mu.producers {
		if e.currentTxnFirstOffset < 0 && nowMs-e.lastTimestamp >= expirationMs {
			delete(s.mu.producers, pid)
			n++
		}
	}
	for pid, v := range s.mu.verifications {
		if nowMs-v.createdMs >= expirationMs {
			delete(s.mu.verifications, pid)
		}
	}
	return n
}

// active describes the producers, by producer id.
func (s *producerState) active() []ProducerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Sorted(maps.Keys(s.mu.producers))
	out := make([]ProducerInfo, 0, len(ids))
	for _, id := range ids {
		e := s.mu.producers[id]
		out = append(out, ProducerInfo{
			ProducerID: id, ProducerEpoch: e.epoch, LastSequence: e.lastSeq(), LastTimestamp: e.lastTimestamp,
			CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnStartOffset: e.currentTxnFirstOffset,
		})
	}
	return out
}

// checkInvariants verifies the ongoing/producers invariant in builds with
// the invariants tag.
func (s *producerState) checkInvariantsLocked() {
	if !invariantsEnabled {
		return
	}
	open := 0
	for pid, e := range s.mu.producers {
		if e.currentTxnFirstOffset >= 0 {
			open++
			if s.mu.ongoing[e.currentTxnFirstOffset] != pid {
				panic("partition: open transaction missing from ongoing")
			}
		}
		if e.count < 0 || e.count > producerBatchCacheSize {
			panic("partition: producer batch count out of range")
		}
	}
	if open != len(s.mu.ongoing) {
		panic("partition: ongoing has transactions no producer holds open")
	}
}
