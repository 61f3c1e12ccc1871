package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// splitUnknownCommitPartitions removes from an OffsetCommit the partitions
// of topics the metadata image does not know and returns the answers for
// them, as Kafka 4.x does before the group coordinator sees the request: a
// topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (v10, which
// names topics by id: UNKNOWN_TOPIC_ID) for each of its partitions, and a
// partition index the topic does not have answers UNKNOWN_TOPIC_OR_PARTITION.
// The request keeps only the partitions that exist.
func splitUnknownCommitPartitions(img *metadata.Image, req *kmsg.OffsetCommitRequest) []kmsg.OffsetCommitResponseTopic {
	var rejected []kmsg.OffsetCommitResponseTopic
	kept := req.Topics[:0]
	for _, t := range req.Topics {
		var topic *metadata.Topic
		code := kerr.UnknownTopicOrPartition.Code
		if req.Version >= 10 {
			topic, code = img.TopicByID(metadata.UUID(t.TopicID)), kerr.UnknownTopicID.Code
		} else {
			topic = img.Topic(t.Topic)
		}
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		valid := t.Partitions[:0]
		for _, p := range t.Partitions {
			switch {
			case topic == nil:
			case p.Partition < 0 || int(p.Partition) >= len(topic.Partitions):
				code = kerr.UnknownTopicOrPartition.Code
			default:
				valid = append(valid, p)
				continue
			}
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			rejected = append(rejected, rt)
		}
		if len(valid) > 0 {
			t.Partitions = valid
			kept = append(kept, t)
		}
	}
	req.Topics = kept
	return rejected
}

// mergeCommitAnswers adds the rejected partitions' answers to the group
// coordinator's response, under the same topic entry where there is one.
func mergeCommitAnswers(resp *kmsg.OffsetCommitResponse, rejected []kmsg.OffsetCommitResponseTopic) {
	for _, rt := range rejected {
		merged := false
		for i := range resp.Topics {
			if resp.Topics[i].Topic == rt.Topic && resp.Topics[i].TopicID == rt.TopicID {
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rt.Partitions...)
				merged = true
				break
			}
		}
		if !merged {
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// splitUnknownTxnCommitPartitions is splitUnknownCommitPartitions for
// TxnOffsetCommit, whose v6 names topics by id: the ids are resolved to
// names in the request (an unknown id answers UNKNOWN_TOPIC_ID), and a
// topic or partition the metadata does not have answers
// UNKNOWN_TOPIC_OR_PARTITION, as Kafka 4.x checks before the group
// coordinator.
func splitUnknownTxnCommitPartitions(img *metadata.Image, req *kmsg.TxnOffsetCommitRequest) []kmsg.TxnOffsetCommitResponseTopic {
	var rejected []kmsg.TxnOffsetCommitResponseTopic
	kept := req.Topics[:0]
	for _, t := range req.Topics {
		var topic *metadata.Topic
		code := kerr.UnknownTopicOrPartition.Code
		if req.Version >= 6 {
			topic, code = img.TopicByID(metadata.UUID(t.TopicID)), kerr.UnknownTopicID.Code
			if topic != nil {
				t.Topic = topic.Name
			}
		} else {
			topic = img.Topic(t.Topic)
		}
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		valid := t.Partitions[:0]
		for _, p := range t.Partitions {
			switch {
			case topic == nil:
			case p.Partition < 0 || int(p.Partition) >= len(topic.Partitions):
				code = kerr.UnknownTopicOrPartition.Code
			default:
				valid = append(valid, p)
				continue
			}
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			rejected = append(rejected, rt)
		}
		if len(valid) > 0 {
			t.Partitions = valid
			kept = append(kept, t)
		}
	}
	req.Topics = kept
	return rejected
}

// mergeTxnCommitAnswers adds the rejected partitions' answers to the
// response, under the same topic entry where there is one.
func mergeTxnCommitAnswers(resp *kmsg.TxnOffsetCommitResponse, rejected []kmsg.TxnOffsetCommitResponseTopic) {
	for _, rt := range rejected {
		merged := false
		for i := range resp.Topics {
			if resp.Topics[i].Topic == rt.Topic && resp.Topics[i].TopicID == rt.TopicID {
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rt.Partitions...)
				merged = true
				break
			}
		}
		if !merged {
			resp.Topics = append(resp.Topics, rt)
		}
	}
}
