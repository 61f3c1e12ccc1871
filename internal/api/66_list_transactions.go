package api

// ListTransactions (key 66), versions 0-2.
//
// Behavior:
//   - Lists the transactional ids this node coordinates, with producer id
//     and state, filtered by state names (an unknown name is echoed in
//     UnknownStateFilters and matches nothing), by producer ids, v1+ by
//     minimum running time (DurationFilterMillis, -1 for any; KIP-994) and
//     v2+ by a regular expression the whole id must match (KIP-1152; an
//     invalid one answers INVALID_REGULAR_EXPRESSION).
//   - COORDINATOR_LOAD_IN_PROGRESS while a __transaction_state partition
//     loads.

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(66, 0, 2, handleListTransactions) }

func handleListTransactions(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ListTransactionsRequest)
	resp := kmsg.NewPtrListTransactionsResponse()
	f := txn.ListFilter{ProducerIDs: req.ProducerIDFilters, MinDurationMs: -1}
	if c.version >= 1 {
		f.MinDurationMs = req.DurationFilterMillis
	}
	unknownOnly := false
	for _, name := range req.StateFilters {
		if st, ok := txn.StateByName(name); ok {
			f.States = append(f.States, st)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	if len(req.StateFilters) > 0 && len(f.States) == 0 {
		unknownOnly = true
	}
	if c.version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile("^(?:" + *req.TransactionalIDPattern + ")$")
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			c.reply(resp)
			return
		}
		f.Pattern = re.MatchString
	}
	if b.Txn == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		c.reply(resp)
		return
	}
	listed, code := b.Txn.List(f)
	if code != nil {
		resp.ErrorCode = code.Code
		c.reply(resp)
		return
	}
	if unknownOnly {
		listed = nil
	}
	for _, l := range listed {
		if !b.authorizeQuiet(c, opDescribe, resTransactionalID, l.TransactionalID) {
			continue
		}
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = l.TransactionalID, l.ProducerID, l.State.String()
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	c.reply(resp)
}
