package api

// DescribeQuorum (key 55), versions 0-2: the state of the metadata quorum,
// as kafka-metadata-quorum and kadm read it.
//
// Behavior:
//   - Only __cluster_metadata partition 0 exists; other partitions answer
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - The leader's view of each voter's log end offset and last contact;
//     a follower knows only its own. The leader's own entry says it
//     fetched and caught up now, as Kafka's does.
//   - Observers are the brokers that fetched the metadata log from this
//     voter (01_fetch_metadata.go), with their fetch offset and time.
//   - A broker-only node, not a voter, forwards the request to the active
//     controller.
//   - v2 Nodes: each voter's controller listener, from controller.quorum.voters.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/quorum"
)

func init() {
	register(55, 0, 2, handleDescribeQuorum)
	registerController(55, 0, 2, handleDescribeQuorum)
}

func handleDescribeQuorum(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeQuorumRequest)
	if b.Quorum == nil && b.ForwardToController != nil && !c.enveloped {
		b.forward(c, req)
		return
	}
	if !b.authorizeCluster(c, opDescribe) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	if b.Quorum == nil {
		c.reply(describeQuorumError(req, kerr.NotController.Code))
		return
	}
	resp := kmsg.NewPtrDescribeQuorumResponse()
	st := b.Quorum.Status()
	nowMs := time.Now().UnixMilli()
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
				sp.CurrentVoters = append(sp.CurrentVoters, voterState(st, v, nowMs))
			}
			sp.Observers = b.observers.list()
			st2.Partitions = append(st2.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st2)
	}
	if c.version >= 2 {
		resp.Nodes = b.voterNodes(st)
	}
	c.reply(resp)
}

func voterState(st quorum.Status, v quorum.VoterStatus, nowMs int64) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	rs.ReplicaID = v.ID
	rs.LogEndOffset = v.LogEndOffset
	rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = -1, -1
	if v.ID == st.LeaderID && st.LeaderID == st.NodeID {
		// Kafka's leader reports itself fetched and caught up now.
		rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = nowMs, nowMs
	}
	if !v.LastContact.IsZero() && v.ID != st.LeaderID {
		rs.LastFetchTimestamp = v.LastContact.UnixMilli()
		if v.LogEndOffset >= st.HighWatermark {
			rs.LastCaughtUpTimestamp = rs.LastFetchTimestamp
		}
	}
	return rs
}

// voterNodes lists every voter's controller listener; a quorum of one with
// no controller.quorum.voters (the zero-config node) lists the node's client
// listeners.
func (b *Broker) voterNodes(st quorum.Status) []kmsg.DescribeQuorumResponseNode {
	var nodes []kmsg.DescribeQuorumResponseNode
	if b.StaticConfig == nil || len(b.StaticConfig.ControllerQuorumVoters) == 0 || len(b.StaticConfig.ControllerListenerNames) == 0 {
		for _, v := range st.Voters {
			br := b.Image().Broker(v.ID)
			if br == nil {
				continue
			}
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = br.ID
			for _, ep := range br.Endpoints {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = ep.Name, ep.Host, uint16(ep.Port)
				n.Listeners = append(n.Listeners, l)
			}
			nodes = append(nodes, n)
		}
		return nodes
	}
	for _, v := range b.StaticConfig.ControllerQuorumVoters {
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = v.NodeID
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = b.StaticConfig.ControllerListenerNames[0], v.Host, uint16(v.Port)
		n.Listeners = append(n.Listeners, l)
		nodes = append(nodes, n)
	}
	return nodes
}

// describeQuorumError answers every partition of req with code.
func describeQuorumError(req *kmsg.DescribeQuorumRequest, code int16) *kmsg.DescribeQuorumResponse {
	resp := kmsg.NewPtrDescribeQuorumResponse()
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeQuorumResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDescribeQuorumResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
