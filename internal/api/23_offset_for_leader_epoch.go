package api

// OffsetForLeaderEpoch (key 23), versions 2-4.
//
// Behavior:
//   - For each partition, the end offset of the requested leader epoch: the
//     start offset of the next larger epoch in the leader-epoch cache, or the
//     log end offset for the current epoch, with the largest epoch at or
//     below the requested one. An epoch newer than any known answers -1/-1.
//   - current_leader_epoch is checked as in Fetch.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(23, 2, 4, handleOffsetForLeaderEpoch) }

func handleOffsetForLeaderEpoch(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.OffsetForLeaderEpochRequest)
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	if c.version >= 3 && req.ReplicaID >= 0 && !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	describable := b.topicChecker(c, opDescribe)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch = -1
			sp.EndOffset = -1
			p := b.Partitions.Get(rt.Topic, rp.Partition)
			switch {
			case !describable.allowed(rt.Topic):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case p == nil:
				sp.ErrorCode = notHostedError(b, rt.Topic, rp.Partition).Code
			case checkLeaderEpoch(p, rp.CurrentLeaderEpoch) != 0:
				sp.ErrorCode = checkLeaderEpoch(p, rp.CurrentLeaderEpoch)
			default:
				sp.LeaderEpoch, sp.EndOffset = p.Log.EndOffsetForEpoch(rp.LeaderEpoch)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}
