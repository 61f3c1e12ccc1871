package api

// EndTxn (key 26), versions 0-5.
//
// Behavior:
//   - Commits or aborts the producer's transaction: the coordinator writes
//     PrepareCommit/PrepareAbort to __transaction_state and answers; the
//     COMMIT/ABORT markers then go to every partition of the transaction
//     (and the group's pending transactional offsets become visible or are
//     dropped), after which the transaction is CompleteCommit/CompleteAbort.
//   - Errors as Kafka's coordinator: INVALID_PRODUCER_ID_MAPPING for an
//     unknown transactional id or producer id (EndTxn without
//     InitProducerId), PRODUCER_FENCED for another epoch,
//     INVALID_TXN_STATE for a commit with nothing added or an abort after a
//     commit, CONCURRENT_TRANSACTIONS while markers are written,
//     NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS as for any coordinator
//     request.
//   - v0-v4: the epoch must match exactly; a repeated EndTxn after the
//     transaction completed the same way succeeds.
//   - v5+ (transactions v2, KIP-890): every EndTxn bumps the producer epoch
//     and the answer carries the producer id and new epoch; a retry with
//     the epoch one below is recognised; an abort with nothing added is
//     accepted.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(26, 0, 5, handleEndTxn) }

func handleEndTxn(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.EndTxnRequest)
	resp := kmsg.NewPtrEndTxnResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if !b.authorize(c, opWrite, resTransactionalID, req.TransactionalID) {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	if b.Txn == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		c.reply(resp)
		return
	}
	tv := txn.TV0
	if c.version >= 5 && b.Txn.TransactionVersion() >= txn.TV2 {
		tv = txn.TV2
	}
	// Off the handler: the Prepare record is written to
	// __transaction_state with acks=-1 (see offHandler).
	offHandler(func() {
		b.Txn.EndTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, tv, func(pid int64, epoch int16, code *kerr.Error) {
			resp.ProducerID, resp.ProducerEpoch = pid, epoch
			if code != nil {
				resp.ErrorCode = code.Code
			}
			c.reply(resp)
		})
	})
}
