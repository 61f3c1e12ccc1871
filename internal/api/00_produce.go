package api

// Produce (key 0), versions 3-13.
//
// Behavior:
//   - acks must be 0, 1 or -1, else every partition answers INVALID_REQUIRED_ACKS.
//   - Each partition's records must be exactly one RecordBatch v2 (v3+), else
//     INVALID_RECORD; the batch is validated (CRC, structure, compressed
//     records, timestamps, max.message.bytes) before anything is written, and
//     a bad batch answers CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE or
//     INVALID_TIMESTAMP with nothing written.
//   - A batch above max.message.bytes answers MESSAGE_TOO_LARGE; the frame
//     limit (socket.request.max.bytes) is enforced by the network layer.
//   - Unknown topics or partitions answer UNKNOWN_TOPIC_OR_PARTITION (produce
//     never auto-creates); internal topics answer INVALID_TOPIC_EXCEPTION.
//   - Idempotent batches are deduplicated per producer: a retry of one of
//     the producer's last 5 batches answers its original offset and writes
//     nothing. A gap in sequence numbers, or a new epoch not starting at 0,
//     answers OUT_OF_ORDER_SEQUENCE_NUMBER; an epoch older than the
//     producer's INVALID_PRODUCER_EPOCH (the retriable error; Kafka keeps the
//     fatal PRODUCER_FENCED for the coordinator). A producer id the partition
//     does not know (new, expired after producer.id.expiration.ms, or its
//     batches deleted) may start at any sequence, as since KIP-360 (so
//     UNKNOWN_PRODUCER_ID is never answered), except a transactions-v2
//     producer, which must start at 0. The producer state survives restarts
//     (producer snapshots, see package partition) and leader changes: a
//     follower promoted on a running node knows all 5 batches.
//   - acks=0 sends no response; acks=1 answers once the batch is in the
//     leader's log (the page cache); acks=-1 once every in-sync replica has
//     it, refusing it with NOT_ENOUGH_REPLICAS when the ISR is smaller than
//     min.insync.replicas (produce_delayed.go).
//   - Transactional batches need a transactional id (else
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and, unless the producer already
//     has a transaction open in the partition at the batch's epoch, the
//     transaction coordinator's word that the partition is in the
//     transaction (KIP-890 part 1, transaction.partition.verification.enable):
//     a partition not added answers INVALID_TXN_STATE (v3-v10) or
//     TRANSACTION_ABORTABLE (v11). v12+ (transactions v2) adds the partition
//     to the transaction instead of checking it. A producer fenced at the
//     coordinator answers INVALID_PRODUCER_EPOCH; a coordinator busy or
//     unavailable NOT_ENOUGH_REPLICAS, which every client retries. A marker
//     written between the check and the append voids the check (the
//     verification guard), so a late batch cannot reopen an ended
//     transaction. Such a produce runs off the request handler, as the
//     transaction coordinator's requests do.
//   - v13 (KIP-516) names topics by id. An id the metadata does not know,
//     such as the id of a topic deleted and created again under the same
//     name, answers UNKNOWN_TOPIC_ID for each of its partitions, and
//     nothing is written to the topic that now has the name; the response
//     names the topic by the id it was sent.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(0, 3, 13, handleProduce) }

// preparedProduce is a produce request decoded, and its batches' CRCs
// checked, by Prepare, ahead of its turn.
type preparedProduce struct {
	request *kmsg.ProduceRequest
	// crcMatched[topic][partition] is record.CRCMatches of that partition's
	// records.
	crcMatched [][]bool
}

// Prepare implements network.Preparer for Produce, which the network layer
// pipelines: it decodes the request and checks the CRC of every batch, work
// that depends on nothing but the request's bytes, while the connection's
// previous request is being appended. Anything it cannot do is left to
// Handle, which then decodes and checks as if unprepared.
func (b *Broker) Prepare(req *network.Request) {
	h := b.tableFor(req.Conn.Listener)[req.APIKey]
	if req.APIKey != 0 || h == nil || req.APIVersion < h.minVersion || req.APIVersion > h.maxVersion {
		return
	}
	request := kmsg.NewPtrProduceRequest()
	request.SetVersion(req.APIVersion)
	if err := request.ReadFrom(req.Body); err != nil {
		return
	}
	prepared := &preparedProduce{request: request, crcMatched: make([][]bool, len(request.Topics))}
	for ti := range request.Topics {
		partitions := request.Topics[ti].Partitions
		prepared.crcMatched[ti] = make([]bool, len(partitions))
		for pi := range partitions {
			prepared.crcMatched[ti][pi] = record.CRCMatches(partitions[pi].Records)
		}
	}
	req.Prepared = prepared
}

func handleProduce(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ProduceRequest)
	c.recordProduce(len(c.req.Body))
	if req.Version >= 13 {
		resolveProduceTopicIDs(b, req)
	}
	if req.TransactionID != nil && *req.TransactionID != "" &&
		(req.Version >= 12 || b.Config().TransactionPartitionVerificationEnable) {
		// Off the handler: checking or adding a partition at the
		// transaction coordinator may wait for a __transaction_state write
		// to replicate, here or on another broker (see offHandler). The
		// connection's next request still waits for this one's answer
		// (network.Config.PipelinedAPIKeys), so its appends keep their order.
		offHandler(func() { produce(b, c, req) })
		return
	}
	produce(b, c, req)
}

func produce(b *Broker, c *call, req *kmsg.ProduceRequest) {
	prepared, _ := c.req.Prepared.(*preparedProduce)
	resp := kmsg.NewPtrProduceResponse()
	if req.TransactionID != nil && *req.TransactionID != "" && !b.authorize(c, opWrite, resTransactionalID, *req.TransactionID) {
		b.replyProduce(c, req, produceErrorResponse(req, kerr.TransactionalIDAuthorizationFailed))
		return
	}
	writable := b.topicChecker(c, opWrite)
	validAcks := req.Acks == 0 || req.Acks == 1 || req.Acks == -1
	now := b.Now().UnixMilli()
	resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(req.Topics))
	for ti, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(rt.Partitions))
		for pi, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset = -1
			sp.LogAppendTime = -1
			sp.LogStartOffset = -1
			switch {
			case req.Version >= 13 && rt.Topic == "":
				// An id names no topic, so there is nothing to authorize:
				// Kafka answers UNKNOWN_TOPIC_ID before its topic check.
				sp.ErrorCode = kerr.UnknownTopicID.Code
			case !writable.allowed(rt.Topic):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case !validAcks:
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
			case controller.IsInternalTopic(rt.Topic):
				sp.ErrorCode = kerr.InvalidTopicException.Code
			default:
				crcMatched := prepared != nil && prepared.crcMatched[ti][pi]
				produceToPartition(b, req, rt.Topic, &rp, &sp, now, crcMatched)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if req.Acks == 0 {
		// An acks=0 producer reads no answer, so, as Kafka does, a failed
		// partition closes the connection: the client sees it and refreshes
		// its metadata instead of writing on into the void.
		c.req.Respond(network.Response{None: true, Close: produceFailed(resp), ThrottleMs: c.throttleOnReply()})
		return
	}
	b.replyProduce(c, req, resp)
}

// produceFailed reports whether any partition of resp has an error.
func produceFailed(resp *kmsg.ProduceResponse) bool {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return true
			}
		}
	}
	return false
}

// resolveProduceTopicIDs names each topic of a v13+ request, which carries
// only topic ids, after the metadata image; an unknown id leaves the name
// empty, which produce answers with UNKNOWN_TOPIC_ID.
func resolveProduceTopicIDs(b *Broker, req *kmsg.ProduceRequest) {
	img := b.Image()
	for i := range req.Topics {
		req.Topics[i].Topic = ""
		if t := img.TopicByID(metadata.UUID(req.Topics[i].TopicID)); t != nil {
			req.Topics[i].Topic = t.Name
		}
	}
}

// produceToPartition validates and appends one partition's batch; crcMatched
// says Prepare found its CRC right already.
func produceToPartition(b *Broker, req *kmsg.ProduceRequest, topic string, rp *kmsg.ProduceRequestTopicPartition, sp *kmsg.ProduceResponseTopicPartition, nowMs int64, crcMatched bool) {
	p := b.Partitions.Get(topic, rp.Partition)
	if p == nil {
		sp.ErrorCode = notHostedError(b, topic, rp.Partition).Code
		return
	}
	cfg := p.Config()
	if n, err := record.CountBatches(rp.Records); err != nil || n != 1 {
		if err != nil {
			sp.ErrorCode = record.KafkaErrorCode(err)
		} else {
			sp.ErrorCode = kerr.InvalidRecord.Code
		}
		sp.ErrorMessage = strptr("produce requests must carry exactly one record batch per partition")
		return
	}
	h, err := record.Validate(rp.Records, record.ValidateOptions{
		MaxMessageBytes:      int(cfg.MaxMessageBytes),
		NowMs:                nowMs,
		TimestampBeforeMaxMs: cfg.TimestampBeforeMaxMs,
		TimestampAfterMaxMs:  cfg.TimestampAfterMaxMs,
		LogAppendTime:        cfg.MessageTimestampType == "LogAppendTime",
		Compacted:            cfg.Compact(),
		MaxRecordBodyBytes:   int(cfg.MaxDecompressedMessageBytes),
		CRCMatched:           crcMatched,
	})
	if err != nil {
		sp.ErrorCode = record.KafkaErrorCode(err)
		sp.ErrorMessage = strptr(err.Error())
		return
	}
	if cfg.KeySchemaValidation || cfg.ValueSchemaValidation {
		if message := b.checkSchemaIDs(topic, rp.Records, cfg.KeySchemaValidation, cfg.ValueSchemaValidation); message != "" {
			sp.ErrorCode = kerr.InvalidRecord.Code
			sp.ErrorMessage = strptr(message)
			return
		}
	}
	if code := checkMinInsyncReplicas(req, p); code != nil {
		sp.ErrorCode = code.Code
		return
	}
	opts := partition.AppendOptions{LogAppendTime: -1, Origin: partition.OriginClient}
	if cfg.MessageTimestampType == "LogAppendTime" {
		opts.LogAppendTime = nowMs
	}
	if h.IsTransactional() {
		if code, msg := b.verifyTransactionalProduce(req, p, h, &opts); code != nil {
			sp.ErrorCode = code.Code
			sp.ErrorMessage = strptr(msg)
			return
		}
	}
	res, kafkaErr, err := p.AppendWith(rp.Records, h, opts)
	if kafkaErr != nil {
		sp.ErrorCode = kafkaErr.Code
		if err != nil {
			b.Logger.Error("append failed", "partition", p, "err", err)
		}
		return
	}
	b.Metrics.BytesIn(topic, len(rp.Records), int64(h.RecordCount))
	sp.BaseOffset = res.BaseOffset
	sp.LogAppendTime = res.LogAppendTime
	sp.LogStartOffset = res.LogStartOffset
}

// notHostedError is the error for a partition this node does not host:
// UNKNOWN_TOPIC_OR_PARTITION if it does not exist, NOT_LEADER_OR_FOLLOWER if
// another broker leads it.
func notHostedError(b *Broker, topic string, partition int32) *kerr.Error {
	t := b.Image().Topic(topic)
	if t == nil || partition < 0 || int(partition) >= len(t.Partitions) {
		return kerr.UnknownTopicOrPartition
	}
	return kerr.NotLeaderForPartition
}

// verifyTransactionalProduce checks (v3-v11) or adds (v12+) the partition
// with the transaction coordinator before a transactional batch is
// appended, and fills opts with the verification guard to append with.
func (b *Broker) verifyTransactionalProduce(req *kmsg.ProduceRequest, p *partition.Partition, h record.Header, opts *partition.AppendOptions) (*kerr.Error, string) {
	if req.TransactionID == nil || *req.TransactionID == "" {
		return kerr.TransactionalIDAuthorizationFailed, "transactional records need a transactional id"
	}
	addPartition := req.Version >= 12
	if !addPartition && !b.Config().TransactionPartitionVerificationEnable {
		return nil, ""
	}
	opts.RequireVerification = true
	guard := p.StartTxnVerification(h, addPartition)
	if guard == nil {
		return nil, "" // already in the transaction here
	}
	opts.Verification = guard
	if b.Txn == nil {
		return kerr.NotEnoughReplicas, "the transaction coordinator is not available"
	}
	tp := txn.TopicPartition{Topic: p.Topic, Partition: p.Index}
	if addPartition {
		return produceVerificationError(b.addPartitionForProduce(*req.TransactionID, h.ProducerID, h.ProducerEpoch, tp), req.Version)
	}
	results, code := b.addPartitionsAtCoordinator(*req.TransactionID, h.ProducerID, h.ProducerEpoch, []txn.TopicPartition{tp}, true)
	if code == nil {
		code = results[tp]
	}
	return produceVerificationError(code, req.Version)
}

// produceVerificationError converts the coordinator's answer as Kafka's
// AddPartitionsToTxnManager and ReplicaManager do for produce responses.
func produceVerificationError(code *kerr.Error, version int16) (*kerr.Error, string) {
	switch code {
	case nil:
		return nil, ""
	case kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch, "the producer was fenced at the transaction coordinator"
	case kerr.TransactionAbortable:
		if version <= 10 {
			return kerr.InvalidTxnState, "the partition was not added to the transaction"
		}
		return kerr.TransactionAbortable, "the partition was not added to the transaction"
	case kerr.InvalidTxnState:
		return kerr.InvalidTxnState, "the partition was not added to the transaction"
	case kerr.ConcurrentTransactions, kerr.NetworkException, kerr.CoordinatorLoadInProgress,
		kerr.CoordinatorNotAvailable, kerr.NotCoordinator:
		return kerr.NotEnoughReplicas, "transaction verification failed with a retriable error: " + code.Message
	}
	return code, "transaction verification failed"
}
