package api

// DescribeTopicPartitions (key 75), version 0 (KIP-966).
//
// Behavior:
//   - Describes the partitions of the named topics, or of every topic when
//     none is named, topics in name order and partitions in index order,
//     with leader, leader epoch, replicas, ISR and offline replicas as
//     Metadata does. The Java Admin client's describeTopics uses it.
//   - At most min(response_partition_limit, max.request.partition.size.limit)
//     partitions are described; when more remain, next_cursor names the
//     topic and partition to continue from (partition 0 of the next topic
//     when the limit ends exactly at a topic's end), as Kafka pages them.
//   - A cursor starts the description at its topic and partition: with named
//     topics the cursor's topic must be one of them, and the cursor's
//     partition must not be negative, else every named topic answers
//     INVALID_REQUEST. A cursor past a topic's last partition describes the
//     topic with no partitions; a cursor naming a topic that does not exist
//     starts, when every topic is asked for, at the first topic after that
//     name.
//   - A named topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION
//     (INVALID_TOPIC_EXCEPTION for an invalid name); when every topic is
//     asked for there are only existing ones.
//   - eligible_leader_replicas and last_known_elr are empty lists:
//     eligible leader replicas (KIP-966's ELR) are off, as in Kafka without
//     eligible.leader.replicas.version 1.

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { register(75, 0, 0, handleDescribeTopicPartitions) }

func handleDescribeTopicPartitions(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeTopicPartitionsRequest)
	img := b.Image()
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	fetchAll := len(req.Topics) == 0
	var names []string
	if fetchAll {
		names = img.TopicNames()
	} else {
		for _, t := range req.Topics {
			names = append(names, t.Topic)
		}
		sort.Strings(names)
		names = slices.Compact(names)
	}
	cursorTopic, cursorPartition := "", int32(0)
	if req.Cursor != nil {
		cursorTopic, cursorPartition = req.Cursor.Topic, req.Cursor.Partition
		if (!fetchAll && !slices.Contains(names, cursorTopic)) || cursorPartition < 0 {
			for _, name := range names {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic, rt.ErrorCode = strptr(name), kerr.InvalidRequest.Code
				resp.Topics = append(resp.Topics, rt)
			}
			c.reply(resp)
			return
		}
	}
	remaining := min(req.ResponsePartitionLimit, b.Config().MaxRequestPartitionSizeLimit)
	describable := b.topicChecker(c, opDescribe)
	for _, name := range names {
		if name < cursorTopic {
			continue
		}
		// Authorization before existence, as Metadata: a listing of every
		// topic leaves out what the principal may not describe, a named
		// topic it may not describe answers TOPIC_AUTHORIZATION_FAILED.
		if !describable.allowed(name) {
			if !fetchAll {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic, rt.ErrorCode = strptr(name), kerr.TopicAuthorizationFailed.Code
				resp.Topics = append(resp.Topics, rt)
			}
			continue
		}
		if remaining <= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			break
		}
		start := int32(0)
		if name == cursorTopic {
			start = cursorPartition
		}
		topic := img.Topic(name)
		if topic == nil {
			if fetchAll {
				continue
			}
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = strptr(name), kerr.UnknownTopicOrPartition.Code
			rt.IsInternal = controller.IsInternalTopic(name)
			if controller.ValidateTopicName(name) != nil {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		rt, next := describeTopicPartitions(img, topic, start, remaining)
		rt.AuthorizedOperations = b.authorizedOperations(c, resTopic, name, authz.TopicOperations)
		resp.Topics = append(resp.Topics, rt)
		if next >= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			break
		}
		remaining -= int32(len(rt.Partitions))
	}
	c.reply(resp)
}

// describeTopicPartitions describes up to limit partitions of topic from
// index start, and returns the index to continue from, or -1 when the
// topic's last partition was described.
func describeTopicPartitions(img *metadata.Image, topic *metadata.Topic, start, limit int32) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic, rt.TopicID = strptr(topic.Name), topic.ID
	rt.IsInternal = controller.IsInternalTopic(topic.Name)
	rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	count := int32(len(topic.Partitions))
	if start >= count {
		return rt, -1
	}
	end := count
	if limit < count-start {
		end = start + limit
	}
	for i := start; i < end; i++ {
		p := topic.Partitions[i]
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Partition, p.Leader, p.LeaderEpoch
		rp.Replicas, rp.ISR = p.Replicas, p.ISR
		rp.EligibleLeaderReplicas, rp.LastKnownELR = []int32{}, []int32{}
		rp.OfflineReplicas = offlineReplicas(img, p.Replicas)
		if p.Leader < 0 {
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	if end < count {
		return rt, end
	}
	return rt, -1
}

// offlineReplicas are the replicas on brokers that are not registered: the
// replica cannot be served until its broker is back.
func offlineReplicas(img *metadata.Image, replicas []int32) []int32 {
	out := []int32{}
	for _, r := range replicas {
		if img.Broker(r) == nil {
			out = append(out, r)
		}
	}
	return out
}
