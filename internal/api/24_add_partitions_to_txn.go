package api

// AddPartitionsToTxn (key 24), versions 0-5.
//
// Behavior:
//   - v0-v3 (from producers): the partitions join the producer's
//     transaction, starting it if it is not ongoing. Every partition gets
//     the coordinator's one answer: NOT_COORDINATOR or
//     COORDINATOR_LOAD_IN_PROGRESS when this node does not (yet) coordinate
//     the transactional id, INVALID_PRODUCER_ID_MAPPING for an unknown id or
//     producer id, PRODUCER_FENCED for another epoch, CONCURRENT_TRANSACTIONS
//     while the previous transaction's markers are written. When a
//     partition does not exist it gets UNKNOWN_TOPIC_OR_PARTITION and the
//     others OPERATION_NOT_ATTEMPTED, and nothing is added.
//   - v4+ (from brokers, KIP-890): a batch of transactions, each either
//     verify-only (is each partition in the ongoing transaction? a
//     partition that is not answers TRANSACTION_ABORTABLE) or an add on a
//     producer's behalf (Produce v12+, transactions v2).
//   - A partition leader checking a transactional produce (or a group
//     coordinator a TxnOffsetCommit) for a transactional id coordinated on
//     another broker sends that broker AddPartitionsToTxn v4+, as Kafka's
//     AddPartitionsToTxnManager does; a broker it cannot reach counts as
//     NETWORK_EXCEPTION, which the producer retries.
//   - An add for a produce (Produce v12+) answered CONCURRENT_TRANSACTIONS,
//     the previous transaction's markers still going out, is asked again
//     every add.partitions.to.txn.retry.backoff.ms (20) for up to
//     add.partitions.to.txn.retry.backoff.max.ms (100, at most
//     request.timeout.ms) before the producer is answered (KAFKA-18654).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(24, 0, 5, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(b *Broker, c *call, r kmsg.Request) {
	// Off the handler: an add is written to __transaction_state with
	// acks=-1 (see offHandler).
	offHandler(func() { addPartitionsToTxn(b, c, r.(*kmsg.AddPartitionsToTxnRequest)) })
}

func addPartitionsToTxn(b *Broker, c *call, req *kmsg.AddPartitionsToTxnRequest) {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	if c.version >= 4 && !b.authorizeCluster(c, opClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	if c.version < 4 {
		codes := b.authorizeAddPartitions(c, req.TransactionalID, req.Topics)
		if codes == nil {
			codes = b.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, topicsOf(req.Topics), false, txn.TV0)
		}
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, codes[txn.TopicPartition{Topic: t.Topic, Partition: p}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
		return
	}
	for _, tr := range req.Transactions {
		topics := make([]kmsg.AddPartitionsToTxnRequestTopic, 0, len(tr.Topics))
		for _, t := range tr.Topics {
			topics = append(topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
		codes := b.authorizeAddPartitions(c, tr.TransactionalID, topics)
		if codes == nil {
			codes = b.addPartitions(tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, topicsOf(topics), tr.VerifyOnly, txn.TV2)
		}
		rtr := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rtr.TransactionalID = tr.TransactionalID
		for _, t := range tr.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = p, codes[txn.TopicPartition{Topic: t.Topic, Partition: p}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			rtr.Topics = append(rtr.Topics, rt)
		}
		resp.Transactions = append(resp.Transactions, rtr)
	}
	c.reply(resp)
}

func topicsOf(topics []kmsg.AddPartitionsToTxnRequestTopic) []txn.TopicPartition {
	var out []txn.TopicPartition
	for _, t := range topics {
		for _, p := range t.Partitions {
			out = append(out, txn.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return out
}

// addPartitions adds (or verifies) partitions of one transaction and
// returns each partition's error code.
func (b *Broker) addPartitions(id string, producerID int64, epoch int16, parts []txn.TopicPartition, verifyOnly bool, tv int8) map[txn.TopicPartition]int16 {
	codes := make(map[txn.TopicPartition]int16, len(parts))
	all := func(code int16) map[txn.TopicPartition]int16 {
		for _, p := range parts {
			codes[p] = code
		}
		return codes
	}
	if b.Txn == nil {
		return all(kerr.CoordinatorNotAvailable.Code)
	}
	img := b.Image()
	missing := false
	for _, p := range parts {
		if t := img.Topic(p.Topic); t == nil || p.Partition < 0 || int(p.Partition) >= len(t.Partitions) {
			codes[p] = kerr.UnknownTopicOrPartition.Code
			missing = true
		}
	}
	if missing {
		for _, p := range parts {
			if codes[p] == 0 {
				codes[p] = kerr.OperationNotAttempted.Code
			}
		}
		return codes
	}
	if verifyOnly {
		results, code := b.Txn.VerifyPartitions(id, producerID, epoch, parts)
		if code != nil {
			return all(code.Code)
		}
		for _, p := range parts {
			if e := results[p]; e != nil {
				codes[p] = e.Code
			}
		}
		return codes
	}
	if code := b.Txn.AddPartitions(id, producerID, epoch, parts, tv); code != nil {
		return all(code.Code)
	}
	return all(0)
}

// addPartitionsAtCoordinator adds (verifyOnly false: transactions v2) or
// verifies partitions of a producer's transaction at the transaction
// coordinator of id, wherever it runs: directly when this node leads the
// id's __transaction_state partition, else with AddPartitionsToTxn to the
// broker that does. It returns each partition's error (nil: in the
// transaction) and the error of the whole request.
func (b *Broker) addPartitionsAtCoordinator(id string, producerID int64, epoch int16, parts []txn.TopicPartition, verifyOnly bool) (map[txn.TopicPartition]*kerr.Error, *kerr.Error) {
	coordinator := b.transactionCoordinator(id)
	if coordinator < 0 || coordinator == b.NodeID || b.SendToBroker == nil {
		if verifyOnly {
			return b.Txn.VerifyPartitions(id, producerID, epoch, parts)
		}
		return nil, b.Txn.AddPartitions(id, producerID, epoch, parts, txn.TV2)
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 5
	tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = id, producerID, epoch, verifyOnly
	for _, p := range parts {
		if n := len(tr.Topics); n == 0 || tr.Topics[n-1].Topic != p.Topic {
			t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			t.Topic = p.Topic
			tr.Topics = append(tr.Topics, t)
		}
		last := &tr.Topics[len(tr.Topics)-1]
		last.Partitions = append(last.Partitions, p.Partition)
	}
	req.Transactions = append(req.Transactions, tr)
	raw, err := b.SendToBroker(context.Background(), coordinator, req)
	if err != nil {
		b.Logger.Debug("transaction verification at the coordinator failed", "coordinator", coordinator, "transactional_id", id, "err", err)
		return nil, kerr.NetworkException
	}
	resp := raw.(*kmsg.AddPartitionsToTxnResponse)
	if code := kerr.ErrorForCode(resp.ErrorCode); code != nil {
		return nil, asKafkaError(code)
	}
	out := make(map[txn.TopicPartition]*kerr.Error, len(parts))
	answered := 0
	for _, rtr := range resp.Transactions {
		if rtr.TransactionalID != id {
			continue
		}
		for _, t := range rtr.Topics {
			for _, p := range t.Partitions {
				answered++
				if code := kerr.ErrorForCode(p.ErrorCode); code != nil {
					out[txn.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = asKafkaError(code)
				}
			}
		}
	}
	if answered < len(parts) {
		return nil, kerr.UnknownServerError
	}
	if verifyOnly {
		return out, nil
	}
	// An add answers one error for every partition.
	for _, code := range out {
		return nil, code
	}
	return nil, nil
}

// transactionCoordinator is the broker leading the __transaction_state
// partition of transactionalID, or -1.
func (b *Broker) transactionCoordinator(transactionalID string) int32 {
	t := b.Image().Topic(controller.TransactionStateTopic)
	p := b.Txn.PartitionFor(transactionalID)
	if t == nil || p < 0 || int(p) >= len(t.Partitions) || t.Partitions[p] == nil {
		return -1
	}
	return t.Partitions[p].Leader
}

// asKafkaError returns code as a *kerr.Error (an unknown code becomes
// UNKNOWN_SERVER_ERROR).
func asKafkaError(code error) *kerr.Error {
	if ke, ok := code.(*kerr.Error); ok {
		return ke
	}
	return kerr.UnknownServerError
}

// addPartitionForProduce adds a produce's partition to its transaction
// (transactions v2), asking again while the coordinator answers
// CONCURRENT_TRANSACTIONS, within add.partitions.to.txn.retry.backoff.max.ms.
func (b *Broker) addPartitionForProduce(id string, producerID int64, epoch int16, tp txn.TopicPartition) *kerr.Error {
	cfg := b.Config()
	backoff := time.Duration(max(cfg.AddPartitionsToTxnRetryBackoffMs, 1)) * time.Millisecond
	budget := time.Duration(min(cfg.AddPartitionsToTxnRetryBackoffMaxMs, cfg.RequestTimeoutMs)) * time.Millisecond
	start := time.Now()
	for {
		_, code := b.addPartitionsAtCoordinator(id, producerID, epoch, []txn.TopicPartition{tp}, false)
		if code != kerr.ConcurrentTransactions || time.Since(start)+backoff > budget {
			return code
		}
		// A bounded wait, as Kafka's ReplicaManager retries: the markers
		// of the previous transaction take a replication round or two.
		<-time.After(backoff)
	}
}
