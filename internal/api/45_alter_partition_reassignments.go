package api

// AlterPartitionReassignments (key 45), versions 0-1 (KIP-455).
//
// Behavior:
//   - Decided by the active controller (forwarded there from other nodes);
//     see controller.AlterPartitionReassignments for the state machine.
//   - Non-null replicas set the partition's target: the partition then
//     replicates to target ∪ current until every new replica is in the
//     ISR, when the controller narrows it to the target (moving leadership
//     if the leader is removed). Null replicas cancel the reassignment in
//     progress (NO_REASSIGNMENT_IN_PROGRESS if there is none).
//   - Per partition: UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or
//     partition; INVALID_REPLICA_ASSIGNMENT for an empty target, a broker
//     listed twice or one never registered (fenced brokers are accepted),
//     or a cancel that would need an unclean leader election (refused
//     whatever unclean.leader.election.enable says).
//   - v1 adds AllowReplicationFactorChange: false refuses a target of
//     another size with INVALID_REPLICATION_FACTOR (v0 always allows it).
//   - The call returns once the change is committed, not once data moved;
//     ListPartitionReassignments shows the progress.
//   - timeout_ms is the deadline of the decision (timeout.go): past it, or
//     on another failure to commit, the code is at the top level and on
//     every partition, as Kafka's error response; 0 or less times out at
//     once.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
)

func init() {
	register(45, 0, 1, handleAlterPartitionReassignments)
	registerController(45, 0, 1, handleAlterPartitionReassignments)
}

func handleAlterPartitionReassignments(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterPartitionAssignmentsRequest)
	if b.forwarded(c, req) {
		return
	}
	if !b.authorizeCluster(c, opAlter) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	var reqs []controller.Reassignment
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			reqs = append(reqs, controller.Reassignment{Topic: rt.Topic, Partition: rp.Partition, Replicas: rp.Replicas})
		}
	}
	allowFactorChange := c.version < 1 || req.AllowReplicationFactorChange
	ctx, cancel := requestContext(req.TimeoutMillis)
	defer cancel()
	results, err := b.Controller.AlterPartitionReassignments(ctx, reqs, allowFactorChange)
	if err != nil {
		c.reply(errorResponse(req, c.version, controllerErrorCode(err), err.Error()))
		return
	}
	i := 0
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			if res := results[i]; res.Err != nil {
				sp.ErrorCode = res.Err.Code
				sp.ErrorMessage = strptr(res.Message)
			}
			st.Partitions = append(st.Partitions, sp)
			i++
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}
