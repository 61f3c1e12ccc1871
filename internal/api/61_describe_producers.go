package api

// DescribeProducers (key 61), version 0.
//
// Behavior:
//   - For each partition asked, the producers its leader remembers: id,
//     epoch, last sequence, last timestamp, the coordinator epoch of the
//     last marker and the first offset of the open transaction (-1 when
//     none), as kafka-transactions.sh describe-producers shows them.
//   - A partition that does not exist answers UNKNOWN_TOPIC_OR_PARTITION,
//     one led elsewhere NOT_LEADER_OR_FOLLOWER.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(61, 0, 0, handleDescribeProducers) }

func handleDescribeProducers(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeProducersRequest)
	resp := kmsg.NewPtrDescribeProducersResponse()
	readable := b.topicChecker(c, opRead)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, idx := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = idx
			if !readable.allowed(t.Topic) {
				rp.ErrorCode, rp.ErrorMessage = kerr.TopicAuthorizationFailed.Code, strptr(kerr.TopicAuthorizationFailed.Message)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			p := b.Partitions.Get(t.Topic, idx)
			if p == nil {
				code := notHostedError(b, t.Topic, idx)
				rp.ErrorCode, rp.ErrorMessage = code.Code, strptr(code.Message)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			for _, info := range p.ActiveProducers() {
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = info.ProducerID, int32(info.ProducerEpoch), info.LastSequence
				ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = info.LastTimestamp, info.CoordinatorEpoch, info.CurrentTxnStartOffset
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	c.reply(resp)
}
