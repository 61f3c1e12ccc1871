package log

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"

	"github.com/samsa-streaming/samsa/internal/record"
)

// cleanedTxns follows transactions while the cleaner walks the log in offset
// order (Kafka's CleanedTransactionMetadata). It says which data batches
// belong to aborted transactions, which markers may go, and collects the
// aborted transactions whose markers stay for the cleaned segment's
// .txnindex.
type cleanedTxns struct {
	// pending are aborted transactions not yet reached, by first offset.
	pending []AbortedTxn
	// seen dedupes pending: a transaction spanning segments is collected
	// once per segment.
	seen map[abortedTxnKey]bool
	// ongoingAborted are the aborted transactions reached whose marker is
	// still ahead, by producer id.
	ongoingAborted map[int64]*abortedTxnProgress
	// ongoingCommitted are producers with transactional data read since
	// their last marker, whose transaction is not aborted.
	ongoingCommitted map[int64]bool
	// kept are the aborted transactions whose marker was kept since the last
	// takeKept, for the .txnindex of the segment being written.
	kept []AbortedTxn
}

type abortedTxnKey struct{ producerID, lastOffset int64 }

type abortedTxnProgress struct {
	txn AbortedTxn
	// sawBatch: a batch of the transaction was read in this pass, so its
	// marker stays until a later pass finds none.
	sawBatch bool
}

func newCleanedTxns() *cleanedTxns {
	return &cleanedTxns{
		seen:             map[abortedTxnKey]bool{},
		ongoingAborted:   map[int64]*abortedTxnProgress{},
		ongoingCommitted: map[int64]bool{},
	}
}

// addAborted adds aborted transactions found in the .txnindex files.
func (t *cleanedTxns) addAborted(txns []AbortedTxn) {
	added := false
	for _, e := range txns {
		k := abortedTxnKey{e.ProducerID, e.LastOffset}
		if !t.seen[k] {
			t.seen[k] = true
			t.pending = append(t.pending, e)
			added = true
		}
	}
	if added {
		slices.SortStableFunc(t.pending, func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	}
}

// reach moves the aborted transactions starting at or below offset to
// ongoingAborted.
func (t *cleanedTxns) reach(offset int64) {
	n := 0
	for n < len(t.pending) && t.pending[n].FirstOffset <= offset {
		e := t.pending[n]
		if t.ongoingAborted[e.ProducerID] == nil {
			t.ongoingAborted[e.ProducerID] = &abortedTxnProgress{txn: e}
		}
		n++
	}
	t.pending = t.pending[n:]
}

// onData records a data batch and reports whether it belongs to an aborted
// transaction (and so may be discarded).
func (t *cleanedTxns) onData(h *record.Header) bool {
	t.reach(h.LastOffset())
	if !h.IsTransactional() {
		return false
	}
	if p := t.ongoingAborted[h.ProducerID]; p != nil {
		p.sawBatch = true
		return true
	}
	t.ongoingCommitted[h.ProducerID] = true
	return false
}

// onControl records a control batch of the given type (hasRecord false for
// a batch an earlier pass emptied) and reports whether the marker may be
// discarded: an ABORT whose transaction has no data left in this pass, a
// COMMIT with no transactional data read since the producer's last marker.
func (t *cleanedTxns) onControl(h *record.Header, typ record.ControlType, hasRecord bool) bool {
	t.reach(h.LastOffset())
	if !hasRecord {
		return true
	}
	switch typ {
	case record.ControlAbort:
		p := t.ongoingAborted[h.ProducerID]
		delete(t.ongoingAborted, h.ProducerID)
		if p != nil && p.sawBatch {
			t.kept = append(t.kept, p.txn)
			return false
		}
		return true
	case record.ControlCommit:
		had := t.ongoingCommitted[h.ProducerID]
		delete(t.ongoingCommitted, h.ProducerID)
		return !had
	default:
		return false
	}
}

// takeKept returns and forgets the kept aborted transactions.
func (t *cleanedTxns) takeKept() []AbortedTxn {
	kept := t.kept
	t.kept = nil
	return kept
}

// errStopRecords ends a record walk early.
var errStopRecords = errors.New("log: stop reading records")

// controlRecordType returns the type of the first control record of batch;
// hasRecord is false for a control batch holding none.
func controlRecordType(batch []byte, maxDecompressedBytes int) (typ record.ControlType, hasRecord bool, err error) {
	err = record.Records(batch, maxDecompressedBytes, func(r record.Record) error {
		hasRecord = true
		typ, err = record.ParseControlRecordType(r.Key)
		if err != nil {
			return err
		}
		return errStopRecords
	})
	if errors.Is(err, errStopRecords) {
		err = nil
	}
	return typ, hasRecord, err
}

// producerLast is what the cleaner knows of one producer id from the batch
// headers of the whole log.
type producerLast struct {
	// epoch is the producer epoch of its last batch.
	epoch int16
	// lastTimestamp is the max timestamp of its last batch, for
	// producer.id.expiration.ms.
	lastTimestamp int64
	// lastDataOffset is the last offset of its last data batch of epoch, -1
	// when it wrote none at that epoch.
	lastDataOffset int64
	// openTxnFirstOffset is the first offset of its transaction with no
	// marker yet, -1 when none is open.
	openTxnFirstOffset int64
}

// producerScan summarises the producers writing to a log. It stands in for
// the partition's producer state (Kafka's lastRecordsOfActiveProducers and
// last stable offset), derived from the log alone.
type producerScan struct {
	producers map[int64]*producerLast
	// firstOpenTxnOffset is the first offset of the oldest transaction with
	// no marker yet (-1 for none): nothing from there on is cleaned.
	firstOpenTxnOffset int64
}

// scanProducers reads the batch headers of every segment.
func scanProducers(ctx context.Context, segs []*segment) (*producerScan, error) {
	scan := &producerScan{producers: map[int64]*producerLast{}, firstOpenTxnOffset: -1}
	for _, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, errCleaningAborted
		}
		size := s.size.Load()
		if size == 0 {
			continue
		}
		file, err := s.file()
		if err != nil {
			return nil, abortIfClosed(s, err)
		}
		sc := newHeaderScanner(file, size)
		for pos := int64(0); ; {
			h, err := sc.headerAt(pos)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, abortIfClosed(s, err)
			}
			pos += int64(h.Size())
			if h.HasProducerID() {
				scan.observe(&h)
			}
		}
	}
	for _, p := range scan.producers {
		if p.openTxnFirstOffset >= 0 && (scan.firstOpenTxnOffset < 0 || p.openTxnFirstOffset < scan.firstOpenTxnOffset) {
			scan.firstOpenTxnOffset = p.openTxnFirstOffset
		}
	}
	return scan, nil
}

func (scan *producerScan) observe(h *record.Header) {
	p := scan.producers[h.ProducerID]
	if p == nil {
		p = &producerLast{epoch: h.ProducerEpoch, lastDataOffset: -1, openTxnFirstOffset: -1}
		scan.producers[h.ProducerID] = p
	}
	if h.ProducerEpoch != p.epoch {
		// As Kafka's producer state: a new epoch starts with no batches.
		p.epoch, p.lastDataOffset = h.ProducerEpoch, -1
	}
	p.lastTimestamp = h.MaxTimestamp
	if h.IsControl() {
		p.openTxnFirstOffset = -1
		return
	}
	p.lastDataOffset = h.LastOffset()
	if h.IsTransactional() && p.openTxnFirstOffset < 0 {
		p.openTxnFirstOffset = h.BaseOffset
	}
}

// isLastOfActiveProducer reports whether the batch must stay (if only as an
// empty batch) to keep its producer's state: it is the last data batch of a
// producer still active, or, for a producer with no data at its latest
// epoch, a marker of that epoch (which fences older epochs).
func (scan *producerScan) isLastOfActiveProducer(h *record.Header, nowMs, expirationMs int64) bool {
	p := scan.producers[h.ProducerID]
	if p == nil || (p.openTxnFirstOffset < 0 && nowMs-p.lastTimestamp >= expirationMs) {
		return false
	}
	if p.lastDataOffset >= 0 {
		return !h.IsControl() && h.LastOffset() == p.lastDataOffset
	}
	return h.IsControl() && h.ProducerEpoch == p.epoch
}
