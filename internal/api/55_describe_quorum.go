package api

// DescribeQuorum (key 55), versions 0-2: the state of the metadata quorum,
// as kafka-metadata-quorum and kadm read it.
//
// Behavior:
//   - Only __cluster_metadata partition 0 exists; other partitions answer
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - The leader's view of each voter's log end offset and last contact;
//     a follower knows only its own. There are no observers yet.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/quorum"
)

func init() { register(55, 0, 2, handleDescribeQuorum) }

func handleDescribeQuorum(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeQuorumRequest)
	resp := kmsg.NewPtrDescribeQuorumResponse()
	st := b.Quorum.Status()
	for _, rt := range req.Topics {
		st2 := kmsg.NewDescribeQuorumResponseTopic()
		st2.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDescribeQuorumResponseTopicPartition()
			sp.Partition = rp.Partition
			if rt.Topic != controller.MetadataTopic || rp.Partition != 0 {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st2.Partitions = append(st2.Partitions, sp)
				continue
			}
			sp.LeaderID = st.LeaderID
			sp.LeaderEpoch = int32(st.Epoch)
			sp.HighWatermark = st.HighWatermark
			for _, v := range st.Voters {
				sp.CurrentVoters = append(sp.CurrentVoters, voterState(st, v))
			}
			sp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
			st2.Partitions = append(st2.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st2)
	}
	if c.version >= 2 {
		for _, br := range b.Image().Brokers() {
			for _, v := range st.Voters {
				if v.ID != br.ID {
					continue
				}
				n := kmsg.NewDescribeQuorumResponseNode()
				n.NodeID = br.ID
				for _, ep := range br.Endpoints {
					l := kmsg.NewDescribeQuorumResponseNodeListener()
					l.Name, l.Host, l.Port = ep.Name, ep.Host, uint16(ep.Port)
					n.Listeners = append(n.Listeners, l)
				}
				resp.Nodes = append(resp.Nodes, n)
			}
		}
	}
	c.reply(resp)
}

func voterState(st quorum.Status, v quorum.VoterStatus) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	rs.ReplicaID = v.ID
	rs.LogEndOffset = v.LogEndOffset
	rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = -1, -1
	if !v.LastContact.IsZero() && v.ID != st.LeaderID {
		rs.LastFetchTimestamp = v.LastContact.UnixMilli()
		if v.LogEndOffset >= st.HighWatermark {
			rs.LastCaughtUpTimestamp = rs.LastFetchTimestamp
		}
	}
	return rs
}
