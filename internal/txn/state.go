package txn

import "strconv"

// State is a transaction's state, with Kafka's ids (the TransactionStatus
// byte of the log value) and names (DescribeTransactions, ListTransactions).
type State int8

const (
	Empty             State = 0
	Ongoing           State = 1
	PrepareCommit     State = 2
	PrepareAbort      State = 3
	CompleteCommit    State = 4
	CompleteAbort     State = 5
	Dead              State = 6
	PrepareEpochFence State = 7

	// noState marks "no pending transition".
	noState State = -1
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown(" + strconv.Itoa(int(s)) + ")"
}

// StateByName returns the state a ListTransactions filter names.
func StateByName(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return noState, false
}

func (s State) valid() bool { return s >= Empty && s <= PrepareEpochFence }

// validPrevious reports whether a transaction may move from prev to s
// (Kafka's TransactionState.validPreviousStates).
func (s State) validPrevious(prev State) bool {
	switch s {
	case Empty:
		return prev == Empty || prev == CompleteCommit || prev == CompleteAbort
	case Ongoing:
		return prev == Ongoing || prev == Empty || prev == CompleteCommit || prev == CompleteAbort
	case PrepareCommit:
		return prev == Ongoing
	case PrepareAbort:
		// Transactions v2 may abort from Empty and the Complete states:
		// a client unsure of the outcome sends EndTxn(abort).
		return prev == Ongoing || prev == PrepareEpochFence || prev == Empty || prev == CompleteCommit || prev == CompleteAbort
	case CompleteCommit:
		return prev == PrepareCommit
	case CompleteAbort:
		return prev == PrepareAbort
	case Dead:
		return prev == Empty || prev == CompleteCommit || prev == CompleteAbort
	case PrepareEpochFence:
		return prev == Ongoing
	}
	return false
}

// expirationAllowed reports whether an idle transactional id in state s may
// be expired (transactional.id.expiration.ms).
func (s State) expirationAllowed() bool {
	return s == Empty || s == CompleteCommit || s == CompleteAbort
}
