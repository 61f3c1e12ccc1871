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
//   - Observers are the controllers being added as voters (raft learners,
//     AddRaftVoter) and the brokers that fetched the metadata log from
//     this voter (01_fetch_metadata.go), with their fetch offset and time.
//   - The voters are the latest voter set in the log (committed or not),
//     as Kafka's are; v2 gives each voter's directory id.
//   - A broker-only node, not a voter, forwards the request to the active
//     controller.
//   - v2 Nodes: each voter's and learner's controller listeners, from the
//     voter set (controller.quorum.voters at kraft.version 0, the voters'
//     own endpoints from AddRaftVoter and UpdateRaftVoter after).

import (
	"slices"
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
			for _, v := range st.Observers {
				sp.Observers = append(sp.Observers, voterState(st, v, nowMs))
			}
			sp.Observers = append(sp.Observers, b.observers.list()...)
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
	rs.ReplicaDirectoryID = v.DirectoryID
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

// voterNodes lists every voter's and learner's controller listeners; a
// quorum of one with no controller.quorum.voters (the zero-config node)
// lists the node's client listeners.
func (b *Broker) voterNodes(st quorum.Status) []kmsg.DescribeQuorumResponseNode {
	var nodes []kmsg.DescribeQuorumResponseNode
	zeroConfig := b.StaticConfig == nil || (len(b.StaticConfig.ControllerQuorumVoters) == 0 && len(b.StaticConfig.ControllerQuorumBootstrapServers) == 0) || len(b.StaticConfig.ControllerListenerNames) == 0
	for _, v := range append(slices.Clone(st.Voters), st.Observers...) {
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = v.ID
		if zeroConfig {
			br := b.Image().Broker(v.ID)
			if br == nil {
				continue
			}
			for _, ep := range br.Endpoints {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = ep.Name, ep.Host, uint16(ep.Port)
				n.Listeners = append(n.Listeners, l)
			}
		} else {
			for _, ep := range v.Endpoints {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = ep.Name, ep.Host, ep.Port
				n.Listeners = append(n.Listeners, l)
			}
		}
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
