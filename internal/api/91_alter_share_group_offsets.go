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
//     here. The partitions set are added to the group's initialized
//     share-partitions (its ShareGroupStatePartitionMetadata record),
//     which DescribeShareGroupOffsets with null topics describes.
//   - While the share coordinator cannot answer yet (loading
//     __share_group_state on a fresh node, moving), its calls are retried
//     with Kafka's persister backoff (1 s doubling, ±20%, 5 attempts)
//     before the error is answered.
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
		if _, err := b.shareAdminGroup(req.GroupID, true, true); err != nil {
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
			var initialized []int32
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
					var s share.PersistedState
					code := b.retryShareState(func() (code int16) {
						s, _, code = b.readShareState(key, -1)
						return code
					})
					if code == 0 {
						code = b.retryShareState(func() int16 { return b.initializeShareState(key, s.StateEpoch+1, p.StartOffset) })
					}
					rp.ErrorCode = code
					b.forgetLocalSharePartition(key)
					if code == 0 {
						initialized = append(initialized, p.Partition)
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			if len(initialized) > 0 {
				// Kafka's coordinator records the partitions initialized
				// once the persister initialized them.
				if code := b.Groups.ShareStateInitialized(req.GroupID, topic.ID, t.Topic, initialized); code != 0 {
					for i := range rt.Partitions {
						if rt.Partitions[i].ErrorCode == 0 {
							rt.Partitions[i].ErrorCode = code
						}
					}
				}
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}
