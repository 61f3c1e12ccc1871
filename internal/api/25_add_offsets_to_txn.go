package api

// AddOffsetsToTxn (key 25), versions 0-4.
//
// Behavior:
//   - Adds the __consumer_offsets partition coordinating the group to the
//     producer's transaction, so the transaction's markers reach the
//     group's pending TxnOffsetCommit offsets. The answer is the
//     transaction coordinator's, as for AddPartitionsToTxn v0-v3: an empty
//     group id is INVALID_GROUP_ID.
//   - Transactions v2 clients skip it: TxnOffsetCommit v5+ adds the
//     partition itself.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(25, 0, 4, handleAddOffsetsToTxn) }

func handleAddOffsetsToTxn(b *Broker, c *call, r kmsg.Request) {
	// Off the handler: the add is written to __transaction_state with
	// acks=-1 (see offHandler).
	offHandler(func() { addOffsetsToTxn(b, c, r.(*kmsg.AddOffsetsToTxnRequest)) })
}

func addOffsetsToTxn(b *Broker, c *call, req *kmsg.AddOffsetsToTxnRequest) {
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	switch {
	case !b.authorize(c, opWrite, resTransactionalID, req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorize(c, opRead, resGroup, req.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	case req.Group == "":
		resp.ErrorCode = kerr.InvalidGroupID.Code
	case b.Txn == nil:
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
	default:
		tp := txn.TopicPartition{Topic: controller.ConsumerOffsetsTopic, Partition: b.Groups.Partition(req.Group)}
		if code := b.Txn.AddPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, []txn.TopicPartition{tp}, txn.TV0); code != nil {
			resp.ErrorCode = code.Code
		}
	}
	c.reply(resp)
}
