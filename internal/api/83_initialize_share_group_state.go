package api

// InitializeShareGroupState (key 83), version 0, served by the share
// coordinator (internal/share) to share-partition leaders and admin
// tools.
//
// Behavior:
//   - Sets each share-partition's durable state to start at StartOffset
//     with nothing in flight, at StateEpoch; FENCED_STATE_EPOCH when the
//     stored state is newer.
//   - NOT_COORDINATOR for share-partitions whose __share_group_state
//     partition this node does not lead; COORDINATOR_LOAD_IN_PROGRESS
//     while it loads.
//   - CLUSTER_ACTION on the cluster (CLUSTER_AUTHORIZATION_FAILED on every
//     partition otherwise).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(83, 0, 0, handleInitializeShareGroupState) }

func handleInitializeShareGroupState(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.InitializeShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	allowed := b.authorizeShareState(c)
	offHandler(func() {
		for _, t := range req.Topics {
			rt := kmsg.NewInitializeShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
				rp.Partition = p.Partition
				key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
				switch part, code := b.shareStatePartition(key); {
				case !allowed:
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				case code != 0:
					rp.ErrorCode = code
				default:
					rp.ErrorCode = b.ShareStates.Initialize(part, key, p.StateEpoch, p.StartOffset)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}
