package txn

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ProducerIDAndEpoch is the producer a KIP-360 InitProducerId names as its
// current one.
type ProducerIDAndEpoch struct {
	ProducerID int64
	Epoch      int16
}

// shardConfig is what a shard needs of the broker's configuration.
type shardConfig struct {
	// maxTimeoutMs is transaction.max.timeout.ms.
	maxTimeoutMs int32
	// clusterTV returns the finalized transaction.version, which may change
	// at any time (UpdateFeatures): it decides the value version written and
	// the rules of coordinator-initiated aborts.
	clusterTV func() int8
	// idExpirationMs is transactional.id.expiration.ms.
	idExpirationMs int64
}

// Write is one record a shard asks the driver to append to its
// __transaction_state partition; the driver reports the outcome with
// Shard.Applied or Shard.Failed.
type Write struct {
	TransactionalID string
	Transit         Transit
	Key, Value      []byte
	// fence marks the abort that fences a producer; a failed fence is
	// remembered so the next one does not bump the epoch again.
	fence bool
}

// MarkerJob is the work of writing one transaction's markers: a marker for
// ProducerID/ProducerEpoch in every partition, then the Complete record.
type MarkerJob struct {
	TransactionalID    string
	CoordinatorEpoch   int32
	ProducerID         int64
	ProducerEpoch      int16
	Commit             bool
	TransactionVersion int8
	// Partitions still without a marker.
	Partitions []TopicPartition
	// complete is the transit to write once every marker is written.
	complete Transit
}

// Shard is the deterministic core of the transaction coordinator for one
// __transaction_state partition: the transactional ids that hash to it and
// their state. It does no I/O and reads no clock: every step takes the time
// (ms) and returns the records to write, which the driver appends and
// reports back. It is not safe for concurrent use.
type Shard struct {
	partition        int32
	coordinatorEpoch int32
	config           shardConfig
	// txns holds every transactional id of the partition.
	// Invariant: txns[id].TransactionalID == id.
	txns map[string]*Metadata
}

func newShard(partition, coordinatorEpoch int32, cfg shardConfig) *Shard {
	return &Shard{partition: partition, coordinatorEpoch: coordinatorEpoch, config: cfg, txns: map[string]*Metadata{}}
}

func (s *Shard) write(m *Metadata, t Transit) *Write {
	return &Write{TransactionalID: m.TransactionalID, Transit: t, Key: EncodeKey(m.TransactionalID), Value: EncodeValue(t, s.config.clusterTV())}
}

// replay applies a record read back from the log while loading.
func (s *Shard) replay(key, value []byte) error {
	r, err := DecodeRecord(key, value)
	if err != nil {
		return err
	}
	if r.Tombstone {
		delete(s.txns, r.TransactionalID)
		return nil
	}
	s.txns[r.TransactionalID] = metadataFromTransit(r.TransactionalID, r.Transit)
	return nil
}

// loaded finishes a load: transactions found prepared (the coordinator
// died between the Prepare record and the Complete one) have their markers
// written again.
func (s *Shard) loaded(nowMs int64) []*MarkerJob {
	var jobs []*MarkerJob
	for _, id := range slices.Sorted(maps.Keys(s.txns)) {
		m := s.txns[id]
		if m.State != PrepareCommit && m.State != PrepareAbort {
			continue
		}
		if job, err := s.startMarkers(m, nowMs); err == nil {
			jobs = append(jobs, job)
		}
	}
	return jobs
}

// startMarkers prepares the Complete transition of a prepared transaction
// and describes its markers.
func (s *Shard) startMarkers(m *Metadata, nowMs int64) (*MarkerJob, error) {
	commit := m.State == PrepareCommit
	complete, err := m.prepareComplete(nowMs)
	if err != nil {
		return nil, err
	}
	return &MarkerJob{
		TransactionalID: m.TransactionalID, CoordinatorEpoch: s.coordinatorEpoch,
		ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Commit: commit,
		TransactionVersion: m.ClientTransactionVersion, Partitions: m.Partitions.sorted(), complete: complete,
	}, nil
}

// InitResult is the outcome of InitProducerID: an error to answer now, or
// a record to write first.
type InitResult struct {
	Code  *kerr.Error
	Write *Write
	// Fenced: the write aborts the transaction the old producer left
	// ongoing; once it is written the answer is CONCURRENT_TRANSACTIONS
	// (the client retries and gets a fresh epoch after the abort).
	Fenced bool
}

// InitProducerID handles InitProducerId for a transactional id: a new
// producer id the first time, else the next epoch, fencing older producers
// (KIP-360: a producer naming its current id and epoch may keep its id).
func (s *Shard) InitProducerID(id string, timeoutMs int32, expected *ProducerIDAndEpoch, nowMs int64, newProducerID func() (int64, error)) InitResult {
	if id == "" {
		return InitResult{Code: kerr.InvalidRequest}
	}
	if timeoutMs <= 0 || timeoutMs > s.config.maxTimeoutMs {
		return InitResult{Code: kerr.InvalidTransactionTimeout}
	}
	m := s.txns[id]
	if m == nil {
		pid, err := newProducerID()
		if err != nil {
			return InitResult{Code: kerr.CoordinatorNotAvailable}
		}
		m = newMetadata(id, pid, timeoutMs, nowMs)
		s.txns[id] = m
	}
	if m.pendingInProgress() {
		return InitResult{Code: kerr.ConcurrentTransactions}
	}
	if expected != nil && !(m.ProducerEpoch == NoProducerEpoch || expected.ProducerID == m.ProducerID ||
		(expected.ProducerID == m.PrevProducerID && isEpochExhausted(expected.Epoch))) {
		return InitResult{Code: kerr.ProducerFenced}
	}
	switch m.State {
	case PrepareAbort, PrepareCommit:
		return InitResult{Code: kerr.ConcurrentTransactions}
	case CompleteAbort, CompleteCommit, Empty:
		var t Transit
		var err error
		if m.epochExhausted() && (expected == nil || expected.Epoch == m.ProducerEpoch) {
			pid, perr := newProducerID()
			if perr != nil {
				return InitResult{Code: kerr.CoordinatorNotAvailable}
			}
			t, err = m.prepareProducerIDRotation(pid, timeoutMs, nowMs, expected != nil)
		} else {
			var expectedEpoch *int16
			if expected != nil {
				expectedEpoch = &expected.Epoch
			}
			var code *kerr.Error
			t, code, err = m.prepareIncrementEpoch(timeoutMs, expectedEpoch, nowMs)
			if code != nil {
				return InitResult{Code: code}
			}
		}
		if err != nil {
			return InitResult{Code: kerr.UnknownServerError}
		}
		return InitResult{Write: s.write(m, t)}
	case Ongoing:
		// Abort what the old producer left open, at a fenced epoch.
		w, code := s.fenceAndAbort(m, nowMs, newProducerID)
		if code != nil {
			return InitResult{Code: code}
		}
		return InitResult{Write: w, Fenced: true}
	}
	return InitResult{Code: kerr.UnknownServerError}
}

// fenceAndAbort bumps the epoch of an ongoing transaction and prepares its
// abort at that epoch, fencing the producer that left it open.
func (s *Shard) fenceAndAbort(m *Metadata, nowMs int64, newProducerID func() (int64, error)) (*Write, *kerr.Error) {
	fence, err := m.prepareFenceEpoch()
	if err != nil {
		return nil, kerr.ConcurrentTransactions
	}
	res := s.endTxn(m, fence.ProducerID, fence.ProducerEpoch, false, false, s.config.clusterTV(), nowMs, newProducerID)
	if res.Code != nil || res.Write == nil {
		m.pending = noState
		return nil, cmpCode(res.Code, kerr.UnknownServerError)
	}
	res.Write.fence = true
	return res.Write, nil
}

func cmpCode(code, otherwise *kerr.Error) *kerr.Error {
	if code != nil {
		return code
	}
	return otherwise
}

// AddPartitions adds partitions to a transaction (AddPartitionsToTxn,
// AddOffsetsToTxn, and implicitly Produce v12+ and TxnOffsetCommit v5+).
// It returns nil, nil when there is nothing to write (already added).
func (s *Shard) AddPartitions(id string, producerID int64, epoch int16, parts []TopicPartition, tv int8, nowMs int64) (*Write, *kerr.Error) {
	m := s.txns[id]
	switch {
	case id == "":
		return nil, kerr.InvalidRequest
	case m == nil || m.ProducerID != producerID:
		return nil, kerr.InvalidProducerIDMapping
	case m.ProducerEpoch != epoch:
		return nil, kerr.ProducerFenced
	case m.pendingInProgress(), m.State == PrepareCommit, m.State == PrepareAbort:
		return nil, kerr.ConcurrentTransactions
	case m.State == Ongoing && m.Partitions.containsAll(parts):
		return nil, nil
	}
	t, err := m.prepareAddPartitions(parts, nowMs, tv)
	if err != nil {
		return nil, kerr.UnknownServerError
	}
	return s.write(m, t), nil
}

// VerifyPartitions answers a verify-only AddPartitionsToTxn (KIP-890 part
// 1): which of parts are in the producer's ongoing transaction. A partition
// not in it gets TRANSACTION_ABORTABLE. A non-nil code applies to all.
func (s *Shard) VerifyPartitions(id string, producerID int64, epoch int16, parts []TopicPartition) (map[TopicPartition]*kerr.Error, *kerr.Error) {
	m := s.txns[id]
	switch {
	case id == "":
		return nil, kerr.InvalidRequest
	case m == nil || m.ProducerID != producerID:
		return nil, kerr.InvalidProducerIDMapping
	case m.ProducerEpoch != epoch:
		return nil, kerr.ProducerFenced
	case m.State == PrepareCommit || m.State == PrepareAbort:
		return nil, kerr.ConcurrentTransactions
	}
	out := make(map[TopicPartition]*kerr.Error, len(parts))
	for _, p := range parts {
		if _, ok := m.Partitions[p]; ok {
			out[p] = nil
		} else {
			out[p] = kerr.TransactionAbortable
		}
	}
	return out, nil
}

// Applied applies a written record. For a Prepare record it returns the
// markers to write next.
func (s *Shard) Applied(w *Write, nowMs int64) (*MarkerJob, error) {
	m := s.txns[w.TransactionalID]
	if m == nil {
		return nil, fmt.Errorf("txn: %q vanished while its record was written", w.TransactionalID)
	}
	if w.Transit.State == Dead {
		if m.pending == Dead {
			delete(s.txns, w.TransactionalID)
		}
		return nil, nil
	}
	defer s.checkInvariants()
	if err := m.completeTransition(w.Transit); err != nil {
		return nil, err
	}
	if m.State == PrepareCommit || m.State == PrepareAbort {
		return s.startMarkers(m, nowMs)
	}
	return nil, nil
}

// Failed reports a record that could not be written: the transition is
// dropped (a failed fence is remembered).
func (s *Shard) Failed(w *Write) {
	m := s.txns[w.TransactionalID]
	if m == nil {
		return
	}
	m.pending = noState
	if w.fence {
		m.failedEpochFence = true
	}
}

// MarkerWritten records that partition tp has the job's marker.
func (s *Shard) MarkerWritten(job *MarkerJob, tp TopicPartition) {
	job.Partitions = slices.DeleteFunc(job.Partitions, func(p TopicPartition) bool { return p == tp })
	if m := s.current(job); m != nil {
		delete(m.Partitions, tp)
	}
}

// MarkersDone returns the Complete record of a job whose markers are all
// written, or an error when the transaction moved on meanwhile (a new
// coordinator epoch, or the job was abandoned).
func (s *Shard) MarkersDone(job *MarkerJob) (*Write, error) {
	m := s.current(job)
	if m == nil {
		return nil, errors.New("txn: transaction changed while its markers were written")
	}
	return s.write(m, job.complete), nil
}

// AbandonMarkers gives up a job (a partition refused the marker as fenced):
// the transaction stays prepared until the coordinator reloads.
func (s *Shard) AbandonMarkers(job *MarkerJob) {
	if m := s.current(job); m != nil {
		m.pending = noState
	}
}

// current returns the transaction of a job if the job still drives it.
func (s *Shard) current(job *MarkerJob) *Metadata {
	m := s.txns[job.TransactionalID]
	if job.CoordinatorEpoch != s.coordinatorEpoch || m == nil || m.pending != job.complete.State || m.ProducerID != job.ProducerID {
		return nil
	}
	return m
}

// TimedOut aborts every ongoing transaction older than its timeout, fencing
// its producer (transaction.abort.timed.out.transaction.cleanup.interval.ms).
func (s *Shard) TimedOut(nowMs int64, newProducerID func() (int64, error)) []*Write {
	var out []*Write
	for _, id := range slices.Sorted(maps.Keys(s.txns)) {
		m := s.txns[id]
		if m.pendingInProgress() || m.State != Ongoing || m.StartTimestampMs+int64(m.TimeoutMs) >= nowMs {
			continue
		}
		if w, code := s.fenceAndAbort(m, nowMs, newProducerID); code == nil {
			out = append(out, w)
		}
	}
	return out
}

// Expire returns tombstones for transactional ids idle longer than
// transactional.id.expiration.ms in a state that allows it.
func (s *Shard) Expire(nowMs int64) []*Write {
	var out []*Write
	for _, id := range slices.Sorted(maps.Keys(s.txns)) {
		m := s.txns[id]
		if m.pendingInProgress() || !m.State.expirationAllowed() || m.UpdateTimestampMs > nowMs-s.config.idExpirationMs {
			continue
		}
		t, err := m.prepareDead()
		if err != nil {
			continue
		}
		out = append(out, &Write{TransactionalID: id, Transit: t, Key: EncodeKey(id)})
	}
	return out
}

// Describe returns a copy of a transactional id's state, if known.
func (s *Shard) Describe(id string) (Metadata, bool) {
	m := s.txns[id]
	if m == nil || m.State == Dead {
		return Metadata{}, false
	}
	c := *m
	c.Partitions = m.Partitions.clone()
	return c, true
}

// ListFilter selects transactions for ListTransactions.
type ListFilter struct {
	States      []State
	ProducerIDs []int64
	// MinDurationMs keeps transactions running at least this long (-1: any).
	MinDurationMs int64
	// Pattern, when set, is a regular-expression test on the id.
	Pattern func(string) bool
}

// Listed is one transaction ListTransactions reports.
type Listed struct {
	TransactionalID string
	ProducerID      int64
	State           State
}

// List returns the transactions matching f, by id.
func (s *Shard) List(f ListFilter, nowMs int64) []Listed {
	var out []Listed
	for _, id := range slices.Sorted(maps.Keys(s.txns)) {
		m := s.txns[id]
		switch {
		case m.State == Dead:
		case len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, m.ProducerID):
		case len(f.States) > 0 && !slices.Contains(f.States, m.State):
		case f.MinDurationMs >= 0 && (m.StartTimestampMs < 0 || nowMs-m.StartTimestampMs < f.MinDurationMs):
		case f.Pattern != nil && !f.Pattern(id):
		default:
			out = append(out, Listed{TransactionalID: id, ProducerID: m.ProducerID, State: m.State})
		}
	}
	return out
}

// String summarises the shard for logs.
func (s *Shard) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "__transaction_state-%d@%d:", s.partition, s.coordinatorEpoch)
	for _, id := range slices.Sorted(maps.Keys(s.txns)) {
		fmt.Fprintf(&b, " %s=%s", id, s.txns[id].State)
	}
	return b.String()
}

// checkInvariants verifies the invariants on the shard's fields, in builds
// with the invariants tag.
func (s *Shard) checkInvariants() {
	if !invariantsEnabled {
		return
	}
	for id, m := range s.txns {
		if m.TransactionalID != id {
			panic(fmt.Sprintf("txn: %q stored under %q", m.TransactionalID, id))
		}
		if !m.State.valid() || (m.pending != noState && !m.pending.valid()) {
			panic(fmt.Sprintf("txn: %q in state %d pending %d", id, m.State, m.pending))
		}
		if (m.State == Empty || m.State == CompleteCommit || m.State == CompleteAbort) && len(m.Partitions) != 0 {
			panic(fmt.Sprintf("txn: %q is %s with partitions", id, m.State))
		}
	}
}
