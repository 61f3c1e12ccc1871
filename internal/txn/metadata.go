package txn

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sentinels, as Kafka's RecordBatch.
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// Transaction versions (the transaction.version feature). Version 2 is
// KIP-890 part 2: the epoch is bumped at the end of every transaction, and
// partitions join a transaction implicitly through Produce v12+ and
// TxnOffsetCommit v5+.
const (
	TV0 int8 = 0
	TV1 int8 = 1
	TV2 int8 = 2
)

func supportsEpochBump(tv int8) bool { return tv >= TV2 }

// TopicPartition names a partition of a transaction.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func compareTopicPartitions(a, b TopicPartition) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// partitionSet is a set of partitions; transitions copy it, never share it.
type partitionSet map[TopicPartition]struct{}

func (s partitionSet) clone() partitionSet { return maps.Clone(s) }

func (s partitionSet) sorted() []TopicPartition {
	return slices.SortedFunc(maps.Keys(s), compareTopicPartitions)
}

func (s partitionSet) containsAll(ps []TopicPartition) bool {
	for _, p := range ps {
		if _, ok := s[p]; !ok {
			return false
		}
	}
	return true
}

func (s partitionSet) equal(o partitionSet) bool {
	if len(s) != len(o) {
		return false
	}
	for p := range s {
		if _, ok := o[p]; !ok {
			return false
		}
	}
	return true
}

// Transit is the next state of a transaction: computed by a prepare step,
// written to the log, and applied by completeTransition once written (Kafka's
// TxnTransitMetadata).
type Transit struct {
	ProducerID        int64
	PrevProducerID    int64
	NextProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        partitionSet
	StartTimestampMs  int64
	UpdateTimestampMs int64
	// ClientTransactionVersion is the version the client used.
	ClientTransactionVersion int8
}

// Metadata is the coordinator's state of one transactional id (Kafka's
// TransactionMetadata). It is owned by a shard and only touched under the
// driver's lock for that shard.
type Metadata struct {
	TransactionalID string
	ProducerID      int64
	// PrevProducerID is the producer id before the last transition.
	PrevProducerID int64
	// NextProducerID is the id a transaction ending with an exhausted
	// epoch moves to (transactions v2), else NoProducerID.
	NextProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        partitionSet
	// StartTimestampMs is when the first partition joined, -1 when none.
	StartTimestampMs         int64
	UpdateTimestampMs        int64
	ClientTransactionVersion int8

	// pending is the state a written-but-not-applied transition moves to,
	// noState when none is in flight.
	pending State
	// failedEpochFence is set when a fence's write failed after the epoch
	// was bumped in memory; the next fence does not bump again.
	failedEpochFence bool
}

func newMetadata(id string, producerID int64, timeoutMs int32, nowMs int64) *Metadata {
	return &Metadata{
		TransactionalID: id, ProducerID: producerID, PrevProducerID: NoProducerID, NextProducerID: NoProducerID,
		ProducerEpoch: NoProducerEpoch, LastProducerEpoch: NoProducerEpoch, TimeoutMs: timeoutMs,
		State: Empty, Partitions: partitionSet{}, StartTimestampMs: -1, UpdateTimestampMs: nowMs, pending: noState,
	}
}

// isEpochExhausted: an epoch of MaxInt16-1 or more cannot be bumped for a
// new producer session, so that a fence (one more bump) always fits.
func isEpochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

func (m *Metadata) epochExhausted() bool { return isEpochExhausted(m.ProducerEpoch) }

func (m *Metadata) pendingInProgress() bool { return m.pending != noState }

// base is a transit that changes nothing but the state.
func (m *Metadata) base(state State) Transit {
	return Transit{
		ProducerID: m.ProducerID, NextProducerID: m.NextProducerID, ProducerEpoch: m.ProducerEpoch,
		LastProducerEpoch: m.LastProducerEpoch, TimeoutMs: m.TimeoutMs, State: state,
		Partitions: m.Partitions.clone(), StartTimestampMs: m.StartTimestampMs,
		UpdateTimestampMs: m.UpdateTimestampMs, ClientTransactionVersion: m.ClientTransactionVersion,
	}
}

// errIllegalTransition is returned (never panicked) when a transition is
// not allowed from the current state: a bug, which the caller logs.
var errIllegalTransition = errors.New("txn: illegal state transition")

// prepare marks t as pending. As in Kafka the previous producer id of every
// transit is the id before it.
func (m *Metadata) prepare(t Transit) (Transit, error) {
	if m.pendingInProgress() {
		return t, fmt.Errorf("%w: %s to %s while %s is pending", errIllegalTransition, m.State, t.State, m.pending)
	}
	if t.ProducerID < 0 || (t.State != Dead && t.ProducerEpoch < 0) || !t.State.validPrevious(m.State) {
		return t, fmt.Errorf("%w: %s to %s (producer %d epoch %d)", errIllegalTransition, m.State, t.State, t.ProducerID, t.ProducerEpoch)
	}
	t.PrevProducerID = m.ProducerID
	m.pending = t.State
	return t, nil
}

// prepareFenceEpoch starts fencing the producer of an ongoing transaction:
// the epoch goes up by one (unless a previous fence failed to be written),
// and the transaction is then aborted at the new epoch.
func (m *Metadata) prepareFenceEpoch() (Transit, error) {
	t := m.base(PrepareEpochFence)
	if !m.failedEpochFence && m.ProducerEpoch != math.MaxInt16 {
		t.ProducerEpoch = m.ProducerEpoch + 1
	}
	return m.prepare(t)
}

// prepareIncrementEpoch is InitProducerId on an idle transactional id: a
// new epoch, unless the caller's expected epoch shows it is retrying a call
// that already succeeded. An expected epoch matching neither the current
// nor the last epoch is fenced.
func (m *Metadata) prepareIncrementEpoch(timeoutMs int32, expectedEpoch *int16, nowMs int64) (Transit, *kerr.Error, error) {
	t := m.base(Empty)
	bumped := m.ProducerEpoch + 1
	switch {
	case expectedEpoch == nil:
		t.ProducerEpoch, t.LastProducerEpoch = bumped, NoProducerEpoch
	case m.ProducerEpoch == NoProducerEpoch || *expectedEpoch == m.ProducerEpoch:
		t.ProducerEpoch, t.LastProducerEpoch = bumped, m.ProducerEpoch
	case *expectedEpoch == m.LastProducerEpoch:
		// A retry of a call that succeeded: the epoch it was given.
		t.ProducerEpoch, t.LastProducerEpoch = m.ProducerEpoch, m.LastProducerEpoch
	default:
		return t, kerr.ProducerFenced, nil
	}
	t.TimeoutMs, t.Partitions, t.StartTimestampMs, t.UpdateTimestampMs = timeoutMs, partitionSet{}, -1, nowMs
	t, err := m.prepare(t)
	return t, nil, err
}

// prepareProducerIDRotation moves an idle transactional id whose epoch is
// exhausted to a new producer id at epoch 0.
func (m *Metadata) prepareProducerIDRotation(newProducerID int64, timeoutMs int32, nowMs int64, recordLastEpoch bool) (Transit, error) {
	t := m.base(Empty)
	t.ProducerID, t.ProducerEpoch, t.LastProducerEpoch = newProducerID, 0, NoProducerEpoch
	if recordLastEpoch {
		t.LastProducerEpoch = m.ProducerEpoch
	}
	t.TimeoutMs, t.Partitions, t.StartTimestampMs, t.UpdateTimestampMs = timeoutMs, partitionSet{}, -1, nowMs
	return m.prepare(t)
}

// prepareAddPartitions adds partitions to the transaction, starting it if
// it is not ongoing.
func (m *Metadata) prepareAddPartitions(add []TopicPartition, nowMs int64, tv int8) (Transit, error) {
	t := m.base(Ongoing)
	if m.State == Empty || m.State == CompleteCommit || m.State == CompleteAbort {
		t.StartTimestampMs = nowMs
	}
	for _, p := range add {
		t.Partitions[p] = struct{}{}
	}
	t.UpdateTimestampMs, t.ClientTransactionVersion = nowMs, tv
	return m.prepare(t)
}

// prepareAbortOrCommit moves the transaction to PrepareCommit or
// PrepareAbort. Transactions v2 bump the epoch here, so the markers carry
// an epoch above every batch of the transaction.
func (m *Metadata) prepareAbortOrCommit(state State, tv int8, nextProducerID, nowMs int64, noPartitionAdded bool) (Transit, error) {
	t := m.base(state)
	if supportsEpochBump(tv) {
		if !(m.ProducerEpoch == math.MaxInt16 && state == PrepareAbort) {
			t.ProducerEpoch = m.ProducerEpoch + 1
		}
		t.LastProducerEpoch = m.ProducerEpoch
	}
	if noPartitionAdded {
		// A v2 abort with nothing added: the start time is now.
		t.StartTimestampMs = nowMs
	}
	t.NextProducerID, t.UpdateTimestampMs, t.ClientTransactionVersion = nextProducerID, nowMs, tv
	return m.prepare(t)
}

// prepareComplete moves a prepared transaction to CompleteCommit or
// CompleteAbort once its markers are written; an exhausted v2 epoch moves
// to the next producer id here.
func (m *Metadata) prepareComplete(nowMs int64) (Transit, error) {
	m.failedEpochFence = false
	state := CompleteAbort
	if m.State == PrepareCommit {
		state = CompleteCommit
	}
	t := m.base(state)
	if supportsEpochBump(m.ClientTransactionVersion) && m.NextProducerID != NoProducerID {
		t.ProducerID, t.ProducerEpoch = m.NextProducerID, 0
	}
	t.NextProducerID, t.Partitions, t.UpdateTimestampMs = NoProducerID, partitionSet{}, nowMs
	return m.prepare(t)
}

// prepareDead expires an idle transactional id.
func (m *Metadata) prepareDead() (Transit, error) {
	t := m.base(Dead)
	t.Partitions = partitionSet{}
	return m.prepare(t)
}

// completeTransition applies a transit whose record was written. It checks
// what Kafka checks (the pending state, epochs, partitions) and refuses an
// inconsistent transit with an error rather than corrupting the state.
func (m *Metadata) completeTransition(t Transit) error {
	if m.pending != t.State {
		return fmt.Errorf("%w: completing %s while pending %s", errIllegalTransition, t.State, m.pending)
	}
	ok := true
	switch t.State {
	case Empty:
		ok = (m.ProducerEpoch == t.ProducerEpoch || m.validEpochBump(t)) && len(t.Partitions) == 0 && t.StartTimestampMs == -1
	case Ongoing:
		ok = m.validProducerEpoch(t) && containsSet(t.Partitions, m.Partitions) && m.TimeoutMs == t.TimeoutMs
	case PrepareCommit, PrepareAbort:
		allowedEmptyAbort := t.State == PrepareAbort && supportsEpochBump(t.ClientTransactionVersion) &&
			(m.State == Empty || m.State == CompleteCommit || m.State == CompleteAbort)
		ok = m.validProducerEpoch(t) && m.Partitions.equal(t.Partitions) && m.TimeoutMs == t.TimeoutMs &&
			(m.StartTimestampMs == t.StartTimestampMs || allowedEmptyAbort)
	case CompleteCommit, CompleteAbort:
		ok = m.validProducerEpoch(t) && m.TimeoutMs == t.TimeoutMs && t.StartTimestampMs != -1
	case PrepareEpochFence, Dead:
		// A fence is never written on its own, and a Dead id is removed
		// rather than applied.
		ok = false
	}
	if !ok {
		m.pending = noState
		return fmt.Errorf("%w: %s to %+v refused", errIllegalTransition, m.State, t)
	}
	m.ProducerID, m.PrevProducerID, m.NextProducerID = t.ProducerID, t.PrevProducerID, t.NextProducerID
	m.ProducerEpoch, m.LastProducerEpoch, m.TimeoutMs = t.ProducerEpoch, t.LastProducerEpoch, t.TimeoutMs
	m.Partitions, m.StartTimestampMs, m.UpdateTimestampMs = t.Partitions, t.StartTimestampMs, t.UpdateTimestampMs
	m.ClientTransactionVersion = t.ClientTransactionVersion
	m.State, m.pending = t.State, noState
	return nil
}

func containsSet(super, sub partitionSet) bool {
	for p := range sub {
		if _, ok := super[p]; !ok {
			return false
		}
	}
	return true
}

func (m *Metadata) validProducerEpoch(t Transit) bool {
	v2 := supportsEpochBump(t.ClientTransactionVersion)
	if v2 && (t.State == CompleteCommit || t.State == CompleteAbort) && t.ProducerEpoch == 0 {
		// The overflow case: a new producer id at epoch 0.
		return t.LastProducerEpoch == m.LastProducerEpoch && t.PrevProducerID == m.ProducerID
	}
	if v2 && (t.State == PrepareCommit || t.State == PrepareAbort) {
		return t.LastProducerEpoch == m.ProducerEpoch && t.ProducerID == m.ProducerID
	}
	return t.ProducerEpoch == m.ProducerEpoch && t.ProducerID == m.ProducerID
}

func (m *Metadata) validEpochBump(t Transit) bool {
	return t.ProducerEpoch == m.ProducerEpoch+1 || (t.ProducerEpoch == 0 && t.ProducerID != m.ProducerID)
}

// metadataFromTransit is the metadata a loaded log record describes.
func metadataFromTransit(id string, t Transit) *Metadata {
	return &Metadata{
		TransactionalID: id, ProducerID: t.ProducerID, PrevProducerID: t.PrevProducerID, NextProducerID: t.NextProducerID,
		ProducerEpoch: t.ProducerEpoch, LastProducerEpoch: NoProducerEpoch, TimeoutMs: t.TimeoutMs, State: t.State,
		Partitions: t.Partitions, StartTimestampMs: t.StartTimestampMs, UpdateTimestampMs: t.UpdateTimestampMs,
		ClientTransactionVersion: t.ClientTransactionVersion, pending: noState,
	}
}

// SortedPartitions returns the transaction's partitions, by topic and
// partition.
func (m *Metadata) SortedPartitions() []TopicPartition { return m.Partitions.sorted() }
