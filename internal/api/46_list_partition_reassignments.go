package api

// ListPartitionReassignments (key 46), version 0 (KIP-455).
//
// Behavior:
//   - Answered by the active controller (forwarded there from other
//     nodes), so a reassignment just accepted is always listed.
//   - Null topics list every reassignment in progress; otherwise the named
//     partitions that have one. Unknown topics and partitions are left
//     out, as in Kafka (the response has no per-partition error).
//   - Replicas is the whole replica set during the move (target first,
//     then the replicas being removed), with AddingReplicas and
//     RemovingReplicas beside it.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
)

func init() {
	register(46, 0, 0, handleListPartitionReassignments)
	registerController(46, 0, 0, handleListPartitionReassignments)
}

func handleListPartitionReassignments(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ListPartitionReassignmentsRequest)
	if b.forwarded(c, req) {
		return
	}
	if !b.authorizeCluster(c, opDescribe) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	var targets []controller.PartitionRef
	if req.Topics != nil {
		targets = []controller.PartitionRef{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				targets = append(targets, controller.PartitionRef{Topic: t.Topic, Partition: p})
			}
		}
	}
	ongoing, err := b.Controller.ListPartitionReassignments(targets)
	if err != nil {
		resp.ErrorCode = controllerErrorCode(err)
		resp.ErrorMessage = strptr(err.Error())
		c.reply(resp)
		return
	}
	index := map[string]int{}
	for _, o := range ongoing {
		i, ok := index[o.Topic]
		if !ok {
			st := kmsg.NewListPartitionReassignmentsResponseTopic()
			st.Topic = o.Topic
			i = len(resp.Topics)
			index[o.Topic] = i
			resp.Topics = append(resp.Topics, st)
		}
		sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		sp.Partition, sp.Replicas, sp.AddingReplicas, sp.RemovingReplicas = o.Partition, o.Replicas, o.AddingReplicas, o.RemovingReplicas
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
	}
	c.reply(resp)
}
