package api

// AlterShareGroupOffsets (key 91), version 0, served by the share group's
// coordinator: each share-partition starts over at the given offset with
// nothing in flight, at a new state epoch (InitializeShareGroupState
// through the share coordinator), which fences the state a partition
// leader on another node still holds.
//
// Behavior:
//   - The group must be an empty share group (NON_EMPTY_GROUP,
//     GROUP_ID_NOT_FOUND for another type); an absent one is created
//     empty, as Kafka does; NOT_COORDINATOR when it is not coordinated
//     here. Its topics are then described by DescribeShareGroupOffsets
//     with null topics, with the members' subscriptions.
//   - UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist,
//     INVALID_REQUEST for a negative offset.
//   - GROUP READ on the group (top level), TOPIC READ on each topic.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(91, 0, 0, handleAlterShareGroupOffsets) }

func handleAlterShareGroupOffsets(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if !b.authorize(c, opRead, resGroup, req.GroupID) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	readable := b.topicChecker(c, opRead)
	allowed := map[string]bool{}
	for _, t := range req.Topics {
		allowed[t.Topic] = readable.allowed(t.Topic)
	}
	offHandler(func() {
		var topics []string
		for _, t := range req.Topics {
			topics = append(topics, t.Topic)
		}
		if _, err := b.shareAdminGroupOf(req.GroupID, true, true, topics...); err != nil {
			resp.ErrorCode = err.Code
			c.reply(resp)
			return
		}
		img := b.Image()
		for _, t := range req.Topics {
			rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
			rt.Topic = t.Topic
			topic, n := topicPartitionCount(img, t.Topic)
			if topic != nil {
				rt.TopicID = topic.ID
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
				rp.Partition = p.Partition
				switch {
				case !allowed[t.Topic]:
					rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				case topic == nil || p.Partition < 0 || p.Partition >= n:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case p.StartOffset < 0:
					rp.ErrorCode = kerr.InvalidRequest.Code
				default:
					key := share.Key{Group: req.GroupID, TopicID: topic.ID, Partition: p.Partition}
					s, _, code := b.readShareState(key, -1)
					if code == 0 {
						code = b.initializeShareState(key, s.StateEpoch+1, p.StartOffset)
					}
					rp.ErrorCode = code
					b.forgetLocalSharePartition(key)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}
