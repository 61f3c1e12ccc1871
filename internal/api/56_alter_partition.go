package api

// AlterPartition (key 56), versions 0-3: a partition leader asks the active
// controller to change the ISR (KIP-497).
//
// Behavior:
//   - Only the active controller answers; others answer NOT_CONTROLLER at
//     the top level.
//   - v0-1 name topics, v2+ use topic ids; v3 sends the ISR with broker
//     epochs (the epochs are not checked: brokers are fenced by heartbeats).
//   - Each partition is checked as in controller.AlterPartition: a stale
//     leader epoch answers FENCED_LEADER_EPOCH, a stale partition epoch
//     INVALID_UPDATE_VERSION, a fenced or non-replica member
//     INELIGIBLE_REPLICA. A success answers the new ISR and partition
//     epoch, which the leader adopts.
//   - An ISR change that completes a partition reassignment and moves
//     leadership away from the asking leader answers NEW_LEADER_ELECTED
//     (FENCED_LEADER_EPOCH before v2); the change is committed.
//   - LeaderRecoveryState is always 0 (unclean election is off).

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { registerController(56, 0, 3, handleAlterPartition) }

func handleAlterPartition(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterPartitionRequest)
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrAlterPartitionResponse()
	img := b.Image()
	var reqs []controller.AlterPartitionRequest
	type slot struct{ topic, partition int }
	var slots []slot
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionResponseTopic()
		st.Topic, st.TopidID = rt.Topic, rt.TopicID
		id := metadata.UUID(rt.TopicID)
		if c.version < 2 {
			if t := img.Topic(rt.Topic); t != nil {
				id = t.ID
			}
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionResponseTopicPartition()
			sp.Partition = rp.Partition
			isr := rp.NewISR
			if c.version >= 3 {
				isr = nil
				for _, e := range rp.NewEpochISR {
					isr = append(isr, e.BrokerID)
				}
			}
			reqs = append(reqs, controller.AlterPartitionRequest{Broker: req.BrokerID, TopicID: id, Partition: rp.Partition,
				LeaderEpoch: rp.LeaderEpoch, PartitionEpoch: rp.PartitionEpoch, NewISR: isr})
			slots = append(slots, slot{len(resp.Topics), len(st.Partitions)})
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	results, err := b.Controller.AlterPartition(reqs)
	switch {
	case errors.Is(err, controller.ErrNotActive):
		resp.ErrorCode = kerr.NotController.Code
	case err != nil:
		resp.ErrorCode = kerr.UnknownServerError.Code
	default:
		for i, res := range results {
			sp := &resp.Topics[slots[i].topic].Partitions[slots[i].partition]
			if res.Err != nil {
				sp.ErrorCode = res.Err.Code
				if res.Err == kerr.UnknownTopicOrPartition && c.version >= 2 {
					sp.ErrorCode = kerr.UnknownTopicID.Code
				}
				if res.Err == kerr.NewLeaderElected && c.version < 2 {
					sp.ErrorCode = kerr.FencedLeaderEpoch.Code
				}
				continue
			}
			sp.LeaderID, sp.LeaderEpoch, sp.ISR, sp.PartitionEpoch = res.Leader, res.LeaderEpoch, res.ISR, res.PartitionEpoch
		}
	}
	c.reply(resp)
}
