package api

// DeleteShareGroupState (key 86), version 0, served by the share
// coordinator: the durable state of each share-partition is deleted (a
// tombstone in __share_group_state). Deleting state that does not exist
// succeeds. NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and
// CLUSTER_ACTION as InitializeShareGroupState.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(86, 0, 0, handleDeleteShareGroupState) }

func handleDeleteShareGroupState(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DeleteShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	allowed := b.authorizeShareState(c)
	offHandler(func() {
		for _, t := range req.Topics {
			rt := kmsg.NewDeleteShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
				rp.Partition = p.Partition
				key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
				switch part, code := b.shareStatePartition(key); {
				case !allowed:
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				case code != 0:
					rp.ErrorCode = code
				default:
					rp.ErrorCode = b.ShareStates.Delete(part, key)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}
