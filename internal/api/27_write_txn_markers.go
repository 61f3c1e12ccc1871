package api

// WriteTxnMarkers (key 27), versions 0-2.
//
// Behavior:
//   - Sent by a transaction coordinator to the leaders of a transaction's
//     partitions: each partition gets a COMMIT or ABORT control batch for the
//     producer. On one node the coordinator calls WriteTxnMarkers directly.
//   - Per partition: UNKNOWN_TOPIC_OR_PARTITION for a partition that does
//     not exist, NOT_LEADER_OR_FOLLOWER for one led elsewhere,
//     INVALID_PRODUCER_EPOCH for a marker older than the producer's epoch
//     (v2 with transaction version 2: not newer, unless the transaction
//     already ended there), TRANSACTION_COORDINATOR_FENCED for a marker from
//     an older coordinator epoch, KAFKA_STORAGE_ERROR when the log is
//     offline.
//   - A marker in __consumer_offsets also completes the group's pending
//     transactional offsets: committed ones become visible, aborted ones go.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/partition"
)

func init() { register(27, 0, 2, handleWriteTxnMarkers) }

func handleWriteTxnMarkers(b *Broker, c *call, r kmsg.Request) {
	c.reply(b.WriteTxnMarkers(r.(*kmsg.WriteTxnMarkersRequest)))
}

// WriteTxnMarkers writes the markers of req into the partitions this node
// leads and answers per partition.
func (b *Broker) WriteTxnMarkers(req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.Version = req.Version
	now := b.Now().UnixMilli()
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		tv := int8(0)
		if req.Version >= 2 {
			tv = m.TransactionVersion
		}
		marker := partition.TxnMarker{
			ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, CoordinatorEpoch: m.CoordinatorEpoch,
			Commit: m.Committed, TransactionVersion: tv, TimestampMs: now,
		}
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, idx := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = idx
				rp.ErrorCode = b.writeTxnMarker(t.Topic, idx, marker)
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

func (b *Broker) writeTxnMarker(topic string, idx int32, m partition.TxnMarker) int16 {
	p := b.Partitions.Get(topic, idx)
	if p == nil {
		return notHostedError(b, topic, idx).Code
	}
	_, code, err := p.AppendTxnMarker(m)
	if err != nil {
		b.Logger.Error("writing transaction marker", "partition", p, "producer_id", m.ProducerID, "err", err)
	}
	if code != nil {
		return code.Code
	}
	if topic == controller.ConsumerOffsetsTopic && b.Groups != nil {
		b.Groups.CompleteTransaction(idx, m.ProducerID, m.Commit)
	}
	return 0
}
