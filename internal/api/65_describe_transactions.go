package api

// DescribeTransactions (key 65), version 0.
//
// Behavior:
//   - For each transactional id coordinated here: its state name (Empty,
//     Ongoing, PrepareCommit, ...), producer id and epoch, timeout, start
//     time (-1 before the first partition) and partitions.
//   - An id this node does not coordinate answers NOT_COORDINATOR (or
//     COORDINATOR_LOAD_IN_PROGRESS while loading), an unknown one
//     TRANSACTIONAL_ID_NOT_FOUND, an empty one INVALID_REQUEST.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(65, 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeTransactionsRequest)
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		if !b.authorize(c, opDescribe, resTransactionalID, id) {
			st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		// An error entry leaves every other field zero, as Kafka's does.
		if b.Txn == nil {
			st.ErrorCode = kerr.CoordinatorNotAvailable.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		m, code := b.Txn.Describe(id)
		if code != nil {
			st.ErrorCode = code.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		st.State, st.TimeoutMillis, st.StartTimestamp = m.State.String(), m.TimeoutMs, m.StartTimestampMs
		st.ProducerID, st.ProducerEpoch = m.ProducerID, m.ProducerEpoch
		for _, tp := range m.SortedPartitions() {
			if !b.authorizeQuiet(c, opDescribe, resTopic, tp.Topic) {
				continue
			}
			if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic = tp.Topic
				st.Topics = append(st.Topics, t)
			}
			last := &st.Topics[len(st.Topics)-1]
			last.Partitions = append(last.Partitions, tp.Partition)
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	c.reply(resp)
}
