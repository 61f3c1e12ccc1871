package partition

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
)

// AppendTxnMarker writes an end-transaction marker (a COMMIT or ABORT
// control batch) for a producer, as the transaction coordinator asks
// through WriteTxnMarkers. It applies Kafka's marker rules: an epoch older
// than the producer's (or, for transactions v2, not newer unless the
// transaction already ended here) answers INVALID_PRODUCER_EPOCH, a marker
// from an older coordinator TRANSACTION_COORDINATOR_FENCED. An aborted
// transaction with data here is recorded in the segment's .txnindex before
// the last stable offset moves past it. It returns the marker's offset.
func (p *Partition) AppendTxnMarker(m TxnMarker) (int64, *kerr.Error, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return -1, kerr.NotLeaderForPartition, nil
	}
	offset := p.Log.LogEndOffset()
	entry, done, code := p.state().prepareMarker(m, offset, OriginCoordinator)
	if code != nil {
		return -1, code, nil
	}
	typ := record.ControlAbort
	if m.Commit {
		typ = record.ControlCommit
	}
	batch, err := record.BuildControlBatch(record.ControlBatchOptions{
		PartitionLeaderEpoch: p.LeaderEpoch(), TimestampMs: m.TimestampMs,
		ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		Type: typ, CoordinatorEpoch: m.CoordinatorEpoch,
	})
	if err != nil {
		return -1, kerr.UnknownServerError, err
	}
	res, err := p.Log.Append(batch, p.LeaderEpoch())
	if err != nil {
		return -1, appendErrorCode(err), err
	}
	if done != nil && done.aborted {
		done.lastOffset = res.BaseOffset
		e := log.AbortedTxn{ProducerID: done.producerID, FirstOffset: done.firstOffset, LastOffset: res.BaseOffset, LastStableOffset: p.state().markerLSO(done)}
		if err := p.Log.AppendAbortedTxn(e); err != nil {
			// The log is offline now; the transaction stays open here so
			// no read_committed consumer reads past it unfiltered.
			return -1, appendErrorCode(err), err
		}
	}
	p.state().commitMarker(entry, res.BaseOffset, done)
	p.maybeIncrementHighWatermark()
	p.watchers.notify()
	return res.BaseOffset, nil, nil
}

// StartTxnVerification registers the KIP-890 guard for a transactional
// batch before the transaction coordinator is asked about this partition.
// It returns nil when no verification is needed: the producer already has a
// transaction open here at the batch's epoch. supportsEpochBump is true for
// transactions-v2 producers.
func (p *Partition) StartTxnVerification(h record.Header, supportsEpochBump bool) *TxnVerification {
	return p.state().startVerification(h, supportsEpochBump, p.now().UnixMilli())
}

// CollectAbortedTxns returns the aborted transactions a read_committed
// fetch of [fetchOffset, upperBound) must report.
func (p *Partition) CollectAbortedTxns(fetchOffset, upperBound int64) ([]log.AbortedTxn, error) {
	return p.Log.CollectAbortedTxns(fetchOffset, upperBound)
}

// ActiveProducers describes the producers this partition remembers.
func (p *Partition) ActiveProducers() []ProducerInfo { return p.state().active() }

// ExpireProducers forgets producers idle for expirationMs
// (producer.id.expiration.ms) that have no open transaction, and returns
// how many went.
func (p *Partition) ExpireProducers(nowMs, expirationMs int64) int {
	return p.state().removeExpired(nowMs, expirationMs)
}

// WriteSnapshot writes the producer state as a snapshot at the log end
// offset (at clean shutdown), so the next start replays nothing.
func (p *Partition) WriteSnapshot() error {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	return p.state().takeSnapshot(p.Log)
}

// close stops the partition's own use of its log (the log stays open, for
// the partition that may host it next) after a final snapshot. It returns
// what that next partition takes over (handoff.go), also when the snapshot
// could not be written: the state in memory is right either way.
func (p *Partition) close() (*handoff, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	p.retire()
	producers := p.state()
	err := producers.takeSnapshot(p.Log)
	return &handoff{topicID: p.TopicID, log: p.Log, producers: producers.clone()}, err
}
