package api

// ReadShareGroupState (key 84), version 0, served by the share
// coordinator to share-partition leaders.
//
// Behavior:
//   - Answers each share-partition's state epoch, start offset and state
//     batches; a share-partition never initialized answers start offset
//     -1 and no batches.
//   - A leader epoch older than the stored one answers
//     FENCED_LEADER_EPOCH; a newer one is recorded.
//   - NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and CLUSTER_ACTION as
//     InitializeShareGroupState.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(84, 0, 0, handleReadShareGroupState) }

func handleReadShareGroupState(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ReadShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	allowed := b.authorizeShareState(c)
	offHandler(func() {
		for _, t := range req.Topics {
			rt := kmsg.NewReadShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
				rp.Partition, rp.StartOffset = p.Partition, -1
				key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
				switch part, code := b.shareStatePartition(key); {
				case !allowed:
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				case code != 0:
					rp.ErrorCode = code
				default:
					s, found, code := b.ShareStates.Read(part, key, p.LeaderEpoch)
					rp.ErrorCode = code
					if code == 0 && found {
						rp.StateEpoch, rp.StartOffset = s.StateEpoch, s.StartOffset
						for _, sb := range s.Batches {
							rp.StateBatches = append(rp.StateBatches, kmsg.ReadShareGroupStateResponseTopicPartitionStateBatch{
								FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset, DeliveryState: int8(sb.State), DeliveryCount: sb.DeliveryCount})
						}
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}
