package api

// DescribeShareGroupOffsets (key 90), versions 0-1, served by the share
// group's coordinator: each share-partition's start offset, from its
// durable state (ReadShareGroupStateSummary through the share coordinator).
//
// Behavior:
//   - Topics null describes the group's initialized share-partitions (its
//     ShareGroupStatePartitionMetadata record: those assigned to members
//     and those AlterShareGroupOffsets set), leaving out topics deleted
//     since and topics the caller may not describe.
//   - While the share coordinator cannot answer yet (loading
//     __share_group_state, moving), a read is retried with Kafka's
//     persister backoff before its error is answered.
//   - A share-partition never initialized answers start offset -1.
//   - v1 adds Lag: the records from the start offset to the high watermark
//     when this node leads the partition, -1 when it does not know.
//   - GROUP_ID_NOT_FOUND for a group that is not a share group,
//     NOT_COORDINATOR when it is not coordinated here,
//     UNKNOWN_TOPIC_OR_PARTITION for topics or partitions that do not
//     exist.
//   - GROUP DESCRIBE on the group, TOPIC DESCRIBE on each topic.

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(90, 0, 1, handleDescribeShareGroupOffsets) }

func handleDescribeShareGroupOffsets(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	describable := b.topicChecker(c, opDescribe)
	groupAllowed := make([]bool, len(req.Groups))
	for i, g := range req.Groups {
		groupAllowed[i] = b.authorize(c, opDescribe, resGroup, g.GroupID)
	}
	offHandler(func() {
		img := b.Image()
		for i, g := range req.Groups {
			rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			rg.GroupID = g.GroupID
			if !groupAllowed[i] {
				rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
				resp.Groups = append(resp.Groups, rg)
				continue
			}
			info, err := b.shareAdminGroup(g.GroupID, false, false)
			if err != nil {
				rg.ErrorCode = err.Code
				resp.Groups = append(resp.Groups, rg)
				continue
			}
			topics := g.Topics
			if topics == nil {
				topics = initializedShareTopics(img, info.Initialized, describable)
			}
			for _, t := range topics {
				rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
				rt.Topic = t.Topic
				topic, n := topicPartitionCount(img, t.Topic)
				partitions := t.Partitions
				if partitions == nil {
					for p := range max(n, 0) {
						partitions = append(partitions, p)
					}
				}
				if topic != nil {
					rt.TopicID = topic.ID
				}
				for _, p := range partitions {
					rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
					rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, -1, -1
					switch {
					case !describable.allowed(t.Topic):
						rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
					case topic == nil || p < 0 || p >= n:
						rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
					default:
						var s share.PersistedState
						var found bool
						code := b.retryShareState(func() (code int16) {
							s, found, code = b.readShareState(share.Key{Group: g.GroupID, TopicID: topic.ID, Partition: p}, -1)
							return code
						})
						rp.ErrorCode = code
						if code == 0 && found {
							rp.StartOffset, rp.LeaderEpoch = s.StartOffset, s.LeaderEpoch
							if lp := b.Partitions.Get(t.Topic, p); lp != nil {
								rp.Lag = max(lp.HighWatermark()-s.StartOffset, 0)
							}
						}
					}
					rt.Partitions = append(rt.Partitions, rp)
				}
				rg.Topics = append(rg.Topics, rt)
			}
			resp.Groups = append(resp.Groups, rg)
		}
		c.reply(resp)
	})
}

// initializedShareTopics are the group's initialized share-partitions, by
// topic name in name order, for a request naming no topics: topics since
// deleted, and topics the caller may not describe, are left out without a
// row, as Kafka leaves them out.
func initializedShareTopics(img *metadata.Image, initialized map[[16]byte][]int32, describable *topicAuthorizer) []kmsg.DescribeShareGroupOffsetsRequestGroupTopic {
	var out []kmsg.DescribeShareGroupOffsetsRequestGroupTopic
	for id, partitions := range initialized {
		t := img.TopicByID(metadata.UUID(id))
		if t == nil || !describable.allowed(t.Name) {
			continue
		}
		out = append(out, kmsg.DescribeShareGroupOffsetsRequestGroupTopic{Topic: t.Name, Partitions: slices.Clone(partitions)})
	}
	slices.SortFunc(out, func(a, b kmsg.DescribeShareGroupOffsetsRequestGroupTopic) int {
		return strings.Compare(a.Topic, b.Topic)
	})
	return out
}
