package api

// Authorization of the transaction and producer-id APIs, as Kafka's
// KafkaApis checks them.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/txn"
)

// authorizeInitProducerID needs WRITE on the transactional id for a
// transactional producer (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and for an
// idempotent one IDEMPOTENT_WRITE on the cluster or WRITE on some topic
// (CLUSTER_AUTHORIZATION_FAILED).
func (b *Broker) authorizeInitProducerID(c *call, req *kmsg.InitProducerIDRequest) *kerr.Error {
	if !b.authorizing() {
		return nil
	}
	if req.TransactionalID != nil {
		if !b.authorize(c, opWrite, resTransactionalID, *req.TransactionalID) {
			return kerr.TransactionalIDAuthorizationFailed
		}
		return nil
	}
	if !b.authorizeQuiet(c, opIdempotentWrite, resCluster, clusterName) && !b.authorizeByResourceType(c, opWrite, resTopic) {
		b.denied(c, c.principal(), c.host(), opIdempotentWrite, resCluster, clusterName)
		return kerr.ClusterAuthorizationFailed
	}
	return nil
}

// authorizeAddPartitions checks one transaction's AddPartitionsToTxn: WRITE
// on the transactional id, else every partition answers
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; WRITE on each topic, else its
// partitions answer TOPIC_AUTHORIZATION_FAILED, unknown topics
// UNKNOWN_TOPIC_OR_PARTITION, and the rest OPERATION_NOT_ATTEMPTED. It
// returns nil when everything is authorized and the coordinator decides.
func (b *Broker) authorizeAddPartitions(c *call, transactionalID string, topics []kmsg.AddPartitionsToTxnRequestTopic) map[txn.TopicPartition]int16 {
	if !b.authorizing() {
		return nil
	}
	all := func(code int16) map[txn.TopicPartition]int16 {
		codes := map[txn.TopicPartition]int16{}
		for _, t := range topics {
			for _, p := range t.Partitions {
				codes[txn.TopicPartition{Topic: t.Topic, Partition: p}] = code
			}
		}
		return codes
	}
	if !b.authorize(c, opWrite, resTransactionalID, transactionalID) {
		return all(kerr.TransactionalIDAuthorizationFailed.Code)
	}
	writable := b.topicChecker(c, opWrite)
	img := b.Image()
	failed := false
	for _, t := range topics {
		if !writable.allowed(t.Topic) || img.Topic(t.Topic) == nil {
			failed = true
		}
	}
	if !failed {
		return nil
	}
	codes := all(kerr.OperationNotAttempted.Code)
	for _, t := range topics {
		code := int16(0)
		switch {
		case !writable.allowed(t.Topic):
			code = kerr.TopicAuthorizationFailed.Code
		case img.Topic(t.Topic) == nil:
			code = kerr.UnknownTopicOrPartition.Code
		default:
			continue
		}
		for _, p := range t.Partitions {
			codes[txn.TopicPartition{Topic: t.Topic, Partition: p}] = code
		}
	}
	return codes
}

// writeTxnMarkersErrors answers every partition of every marker with err.
func writeTxnMarkersErrors(req *kmsg.WriteTxnMarkersRequest, err *kerr.Error) *kmsg.WriteTxnMarkersResponse {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, err.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

// authorizeTxnOffsetCommit needs WRITE on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and READ on the group
// (GROUP_AUTHORIZATION_FAILED), each for every partition, then READ on each
// topic (TOPIC_AUTHORIZATION_FAILED for its partitions, which are not
// committed). It reports whether the request goes on.
func (b *Broker) authorizeTxnOffsetCommit(c *call, req *kmsg.TxnOffsetCommitRequest) bool {
	if !b.authorizing() {
		return true
	}
	errorsFor := func(topics []kmsg.TxnOffsetCommitRequestTopic, err *kerr.Error) []kmsg.TxnOffsetCommitResponseTopic {
		var out []kmsg.TxnOffsetCommitResponseTopic
		for _, t := range topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, err.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			out = append(out, rt)
		}
		return out
	}
	var whole *kerr.Error
	switch {
	case !b.authorize(c, opWrite, resTransactionalID, req.TransactionalID):
		whole = kerr.TransactionalIDAuthorizationFailed
	case !b.authorize(c, opRead, resGroup, req.Group):
		whole = kerr.GroupAuthorizationFailed
	}
	if whole != nil {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = errorsFor(req.Topics, whole)
		c.reply(resp)
		return false
	}
	readable := b.topicChecker(c, opRead)
	var denied []kmsg.TxnOffsetCommitRequestTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) bool {
		if readable.allowed(t.Topic) {
			return false
		}
		denied = append(denied, t)
		return true
	})
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.TxnOffsetCommitResponse)
			resp.Topics = append(resp.Topics, errorsFor(denied, kerr.TopicAuthorizationFailed)...)
		}
	}
	return true
}
