package api

// ReadShareGroupStateSummary (key 87), versions 0-1, served by the share
// coordinator: each share-partition's state epoch, leader epoch and start
// offset, without its batches (for DescribeShareGroupOffsets).
//
// Behavior:
//   - A share-partition never initialized answers start offset -1.
//   - v1 adds DeliveryCompleteCount, answered -1 (not tracked).
//   - NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and CLUSTER_ACTION as
//     InitializeShareGroupState.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(87, 0, 1, handleReadShareGroupStateSummary) }

func handleReadShareGroupStateSummary(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ReadShareGroupStateSummaryRequest)
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	allowed := b.authorizeShareState(c)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.DeliveryCompleteCount = p.Partition, -1, -1, -1
			key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
			switch part, code := b.shareStatePartition(key); {
			case !allowed:
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			case code != 0:
				rp.ErrorCode = code
			default:
				// -1: a summary does not fence the share-partition leader.
				s, found, code := b.ShareStates.Read(part, key, -1)
				rp.ErrorCode = code
				if code == 0 && found {
					rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = s.StateEpoch, s.LeaderEpoch, s.StartOffset
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	c.reply(resp)
}
