package api

// DeleteShareGroupOffsets (key 92), version 0, served by the share group's
// coordinator: the durable state of every partition of each topic is
// deleted (DeleteShareGroupState through the share coordinator); a later
// fetch starts the share-partition afresh at share.auto.offset.reset.
//
// Behavior:
//   - The group must be an empty share group (NON_EMPTY_GROUP,
//     GROUP_ID_NOT_FOUND); NOT_COORDINATOR when it is not coordinated
//     here.
//   - UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist.
//   - The topic leaves the group's initialized share-partitions: it is
//     recorded deleting (ShareGroupStatePartitionMetadata) before its
//     state is deleted and dropped from the record after; a failed delete
//     leaves it deleting, and DescribeShareGroupOffsets with null topics
//     no longer lists it.
//   - While the share coordinator cannot answer yet, each delete is
//     retried with Kafka's persister backoff before its error is
//     answered.
//   - GROUP DELETE on the group (top level), TOPIC READ on each topic.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(92, 0, 0, handleDeleteShareGroupOffsets) }

func handleDeleteShareGroupOffsets(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DeleteShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if !b.authorize(c, opDelete, resGroup, req.GroupID) {
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
		if _, err := b.shareAdminGroup(req.GroupID, true, false); err != nil {
			resp.ErrorCode = err.Code
			c.reply(resp)
			return
		}
		img := b.Image()
		for _, t := range req.Topics {
			rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
			rt.Topic = t.Topic
			topic, n := topicPartitionCount(img, t.Topic)
			switch {
			case !allowed[t.Topic]:
				rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case topic == nil:
				rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				rt.TopicID = topic.ID
				// The topic is marked deleting first, as Kafka's
				// coordinator marks it, and forgotten once its state is.
				if code := b.Groups.ShareStateDeleting(req.GroupID, topic.ID, t.Topic); code != 0 {
					rt.ErrorCode = code
					break
				}
				for p := range n {
					key := share.Key{Group: req.GroupID, TopicID: topic.ID, Partition: p}
					if code := b.retryShareState(func() int16 { return b.deleteShareState(key) }); code != 0 && rt.ErrorCode == 0 {
						rt.ErrorCode = code
					}
					b.forgetLocalSharePartition(key)
				}
				if rt.ErrorCode == 0 {
					rt.ErrorCode = b.Groups.ShareStateDeleted(req.GroupID, topic.ID)
				}
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}
