package api

// TxnOffsetCommit (key 28), versions 0-6.
//
// Behavior:
//   - Commits a consumer group's offsets inside a producer's transaction:
//     they are written to __consumer_offsets as a transactional batch of the
//     producer and become the group's committed offsets only when the
//     transaction commits (dropped when it aborts). Until then an
//     OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for
//     those partitions. The batch is appended with acks=-1, as OffsetCommit's.
//   - v0-v4: the group's __consumer_offsets partition must be in the
//     transaction (AddOffsetsToTxn); with
//     transaction.partition.verification.enable the transaction coordinator
//     is asked, and a partition not added answers INVALID_TXN_STATE (v0-v3)
//     or TRANSACTION_ABORTABLE (v4). v5+ (transactions v2) adds it.
//   - A producer fenced at the coordinator answers INVALID_PRODUCER_EPOCH.
//   - v3+ carries the member's generation, member id and instance id, which
//     must match the group when given (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
//     FENCED_INSTANCE_ID); a commit naming none of them (all of v0-v2, and
//     v3+ sent with the group id alone) is accepted whatever the group's
//     state; a commit without generation to a group that does not exist
//     creates a simple group when it commits.
//   - A topic or partition the metadata does not have answers
//     UNKNOWN_TOPIC_OR_PARTITION for that partition, before the transaction
//     is checked, as Kafka 4.x does; the rest of the request is committed.
//   - v6 names topics by id; an unknown id answers UNKNOWN_TOPIC_ID.
//   - The group coordinator need not be the transaction coordinator: the
//     check or add goes to the transaction coordinator's broker as
//     AddPartitionsToTxn v4+.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(28, 0, 6, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.TxnOffsetCommitRequest)
	// Off the handler: the check or add at the transaction coordinator
	// may write to __transaction_state or wait for another broker, and the
	// offsets are appended with acks=-1.
	offHandler(func() { txnOffsetCommit(b, c, req) })
}

func txnOffsetCommit(b *Broker, c *call, req *kmsg.TxnOffsetCommitRequest) {
	// Authorization first, then existence, as in Kafka.
	if !b.authorizeTxnOffsetCommit(c, req) {
		return
	}
	rejected := splitUnknownTxnCommitPartitions(b.Image(), req)
	respond := func(resp *kmsg.TxnOffsetCommitResponse) {
		mergeTxnCommitAnswers(resp, rejected)
		c.reply(resp)
	}
	if len(req.Topics) == 0 && len(rejected) > 0 {
		respond(req.ResponseKind().(*kmsg.TxnOffsetCommitResponse))
		return
	}
	if req.Group != "" {
		if code := b.verifyTxnOffsetCommit(req); code != nil {
			resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
			for _, t := range req.Topics {
				rt := kmsg.NewTxnOffsetCommitResponseTopic()
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p.Partition, code.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			respond(resp)
			return
		}
	}
	b.Groups.TxnOffsetCommit(req, respond)
}

// verifyTxnOffsetCommit checks (v0-v4) or adds (v5+) the group's
// __consumer_offsets partition with the transaction coordinator.
func (b *Broker) verifyTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) *kerr.Error {
	addPartition := req.Version >= 5
	if !addPartition && !b.Config().TransactionPartitionVerificationEnable {
		return nil
	}
	if b.Txn == nil {
		return kerr.CoordinatorNotAvailable
	}
	tp := txn.TopicPartition{Topic: controller.ConsumerOffsetsTopic, Partition: b.Groups.Partition(req.Group)}
	results, code := b.addPartitionsAtCoordinator(req.TransactionalID, req.ProducerID, req.ProducerEpoch, []txn.TopicPartition{tp}, !addPartition)
	if code == nil {
		code = results[tp]
	}
	switch {
	case code == kerr.NetworkException:
		// The transaction coordinator's broker could not be reached: the
		// client finds the coordinators again and retries.
		return kerr.CoordinatorNotAvailable
	case code == kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch
	case code == kerr.TransactionAbortable && req.Version <= 3:
		return kerr.InvalidTxnState
	}
	return code
}
