package txn

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
)

// EndResult is the outcome of EndTxn: an error, a record to write (then
// markers), or success with nothing to do (a retry of an EndTxn that
// already completed). ProducerID and ProducerEpoch are what EndTxn v5+
// answers on success without a write.
type EndResult struct {
	Code          *kerr.Error
	Write         *Write
	ProducerID    int64
	ProducerEpoch int16
}

// EndTxn handles a client's EndTxn. tv is the transaction version of the
// request: 2 for EndTxn v5+ (the epoch is bumped by every EndTxn), else 0.
func (s *Shard) EndTxn(id string, producerID int64, epoch int16, commit bool, tv int8, nowMs int64, newProducerID func() (int64, error)) EndResult {
	if id == "" {
		return EndResult{Code: kerr.InvalidRequest}
	}
	m := s.txns[id]
	if m == nil {
		return EndResult{Code: kerr.InvalidProducerIDMapping}
	}
	return s.endTxn(m, producerID, epoch, commit, true, tv, nowMs, newProducerID)
}

func (s *Shard) endTxn(m *Metadata, producerID int64, epoch int16, commit, fromClient bool, tv int8, nowMs int64, newProducerID func() (int64, error)) EndResult {
	if !supportsEpochBump(tv) {
		return s.endTxnV1(m, producerID, epoch, commit, fromClient, nowMs)
	}
	return s.endTxnV2(m, producerID, epoch, commit, fromClient, tv, nowMs, newProducerID)
}

// endTxnV1 is EndTxn before transactions v2: the epoch must match exactly
// and an EndTxn repeated after completion succeeds without a write.
func (s *Shard) endTxnV1(m *Metadata, producerID int64, epoch int16, commit, fromClient bool, nowMs int64) EndResult {
	isFence := m.pending == PrepareEpochFence
	switch {
	case m.ProducerID != producerID:
		return EndResult{Code: kerr.InvalidProducerIDMapping}
	case (fromClient && epoch != m.ProducerEpoch) || epoch < m.ProducerEpoch:
		return EndResult{Code: kerr.ProducerFenced}
	case m.pendingInProgress() && !isFence:
		return EndResult{Code: kerr.ConcurrentTransactions}
	}
	switch m.State {
	case Ongoing:
		next := PrepareAbort
		if commit {
			next = PrepareCommit
		}
		if next == PrepareAbort && isFence {
			// The fence becomes the abort, at the fenced epoch.
			m.pending, m.ProducerEpoch, m.LastProducerEpoch = noState, epoch, NoProducerEpoch
		}
		t, err := m.prepareAbortOrCommit(next, TV0, NoProducerID, nowMs, false)
		if err != nil {
			return EndResult{Code: kerr.UnknownServerError}
		}
		return EndResult{Write: s.write(m, t)}
	case CompleteCommit:
		return retryOr(commit, nil, kerr.InvalidTxnState)
	case CompleteAbort:
		return retryOr(!commit, nil, kerr.InvalidTxnState)
	case PrepareCommit:
		return retryOr(commit, kerr.ConcurrentTransactions, kerr.InvalidTxnState)
	case PrepareAbort:
		return retryOr(!commit, kerr.ConcurrentTransactions, kerr.InvalidTxnState)
	}
	return EndResult{Code: kerr.InvalidTxnState}
}

// retryOr answers ifMatch (nil: success) when the request asks for what
// the state says, else otherwise.
func retryOr(matches bool, ifMatch, otherwise *kerr.Error) EndResult {
	if matches {
		return EndResult{Code: ifMatch}
	}
	return EndResult{Code: otherwise}
}

// endTxnV2 is EndTxn under transactions v2 (KIP-890 part 2). Every EndTxn
// bumps the epoch, so a retry is recognised by an epoch one below the
// current one. The outcomes by state, for Current (the request's epoch is
// the current one) and Retry (one below):
//
//	                 Abort            Commit
//	                 Retry  Current   Retry  Current
//	Empty            FENCED bump      FENCED INVALID_TXN_STATE
//	CompleteAbort    none   bump      INVALID_TXN_STATE
//	CompleteCommit   INVALID bump     none   INVALID_TXN_STATE
//
// where "bump" writes an abort of an empty transaction at the next epoch.
func (s *Shard) endTxnV2(m *Metadata, producerID int64, epoch int16, commit, fromClient bool, tv int8, nowMs int64, newProducerID func() (int64, error)) EndResult {
	isFence := m.pending == PrepareEpochFence
	retryOnOverflow := !isFence && m.PrevProducerID == producerID && epoch == math.MaxInt16-1 && m.ProducerEpoch == 0
	retryOnEpochBump := !isFence && m.ProducerEpoch == epoch+1
	var validEpoch bool
	if isFence {
		validEpoch = (!fromClient || epoch == m.ProducerEpoch) && epoch >= m.ProducerEpoch
	} else {
		switch m.State {
		case PrepareCommit, PrepareAbort:
			validEpoch = retryOnEpochBump
		case CompleteCommit, CompleteAbort:
			validEpoch = retryOnEpochBump || retryOnOverflow || epoch == m.ProducerEpoch
		default:
			validEpoch = epoch == m.ProducerEpoch
		}
	}
	isRetry := retryOnEpochBump || retryOnOverflow
	// A transition in progress answers CONCURRENT_TRANSACTIONS before the
	// epoch is checked (KAFKA-18464): while the markers of a commit or
	// abort are written (pending CompleteCommit/CompleteAbort) the client
	// already holds the bumped epoch, and its next EndTxn at that epoch
	// (such as an empty abort) must wait for the completion, not be fenced.
	switch {
	case m.ProducerID != producerID && !retryOnOverflow:
		return EndResult{Code: kerr.InvalidProducerIDMapping}
	case m.pendingInProgress() && !isFence:
		return EndResult{Code: kerr.ConcurrentTransactions}
	case !validEpoch:
		return EndResult{Code: kerr.ProducerFenced}
	}
	done := EndResult{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch}
	prepare := func(next State, noPartitionAdded bool) EndResult {
		nextProducerID := NoProducerID
		if !isFence && m.epochExhausted() {
			pid, err := newProducerID()
			if err != nil {
				return EndResult{Code: kerr.CoordinatorNotAvailable}
			}
			nextProducerID = pid
		}
		if next == PrepareAbort && isFence {
			m.pending, m.ProducerEpoch, m.LastProducerEpoch = noState, epoch, NoProducerEpoch
		}
		t, err := m.prepareAbortOrCommit(next, tv, nextProducerID, nowMs, noPartitionAdded)
		if err != nil {
			return EndResult{Code: kerr.UnknownServerError}
		}
		return EndResult{Write: s.write(m, t)}
	}
	switch m.State {
	case Ongoing:
		if commit {
			return prepare(PrepareCommit, false)
		}
		return prepare(PrepareAbort, false)
	case CompleteCommit:
		switch {
		case commit && isRetry:
			return done
		case commit:
			return EndResult{Code: kerr.InvalidTxnState}
		case isRetry:
			return EndResult{Code: kerr.InvalidTxnState}
		}
		return prepare(PrepareAbort, true)
	case CompleteAbort:
		switch {
		case commit:
			return EndResult{Code: kerr.InvalidTxnState}
		case isRetry:
			return done
		}
		return prepare(PrepareAbort, true)
	case PrepareCommit:
		return retryOr(commit, kerr.ConcurrentTransactions, kerr.InvalidTxnState)
	case PrepareAbort:
		return retryOr(!commit, kerr.ConcurrentTransactions, kerr.InvalidTxnState)
	case Empty:
		if commit {
			return EndResult{Code: kerr.InvalidTxnState}
		}
		return prepare(PrepareAbort, true)
	}
	return EndResult{Code: kerr.InvalidTxnState}
}
