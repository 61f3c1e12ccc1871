package api

// ElectLeaders (key 43), versions 0-2.
//
// Behavior:
//   - Decided by the active controller (forwarded there from other nodes).
//   - Preferred elections (type 0) make the first replica the leader when it
//     is unfenced and in sync (PREFERRED_LEADER_NOT_AVAILABLE otherwise,
//     ELECTION_NOT_NEEDED when it already leads); unclean elections (type 1,
//     v1+) give a leaderless partition its first live replica.
//   - A null topic list means every partition.
//   - timeout_ms is the deadline of the decision (timeout.go): past it,
//     REQUEST_TIMED_OUT at the top level (v1+) and for every named
//     partition; 0 or less times out at once.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
)

func init() {
	register(43, 0, 2, handleElectLeaders)
	registerController(43, 0, 2, handleElectLeaders)
}

func handleElectLeaders(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ElectLeadersRequest)
	if b.forwarded(c, req) {
		return
	}
	if !b.authorizeCluster(c, opAlter) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrElectLeadersResponse()
	var targets []controller.PartitionRef
	if req.Topics != nil {
		targets = []controller.PartitionRef{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				targets = append(targets, controller.PartitionRef{Topic: t.Topic, Partition: p})
			}
		}
	}
	ctx, cancel := requestContext(req.TimeoutMillis)
	defer cancel()
	results, err := b.Controller.ElectLeaders(ctx, c.version >= 1 && req.ElectionType == 1, targets)
	if err != nil {
		c.reply(errorResponse(req, c.version, controllerErrorCode(err), err.Error()))
		return
	}
	byTopic := map[string]*kmsg.ElectLeadersResponseTopic{}
	var order []string
	for ref, code := range results {
		rt := byTopic[ref.Topic]
		if rt == nil {
			t := kmsg.NewElectLeadersResponseTopic()
			t.Topic = ref.Topic
			rt = &t
			byTopic[ref.Topic] = rt
			order = append(order, ref.Topic)
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode = ref.Partition, code
		rt.Partitions = append(rt.Partitions, rp)
	}
	for _, name := range order {
		resp.Topics = append(resp.Topics, *byTopic[name])
	}
	c.reply(resp)
}
