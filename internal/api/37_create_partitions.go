package api

// CreatePartitions (key 37), versions 0-3.
//
// Behavior:
//   - A count not above the current one answers INVALID_PARTITIONS; an
//     unknown topic UNKNOWN_TOPIC_OR_PARTITION; assignments that don't match
//     the added count or name unknown brokers INVALID_REPLICA_ASSIGNMENT.
//   - validate_only checks without creating.
//   - timeout_ms is the deadline of the decision (timeout.go): past it,
//     REQUEST_TIMED_OUT; 0 or less answers it for every topic at once, with
//     validate_only too.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(37, 0, 3, handleCreatePartitions)
	registerController(37, 0, 3, handleCreatePartitions)
}

func handleCreatePartitions(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.CreatePartitionsRequest)
	b.limitCreatePartitions(c, req)
	if b.forwarded(c, req) {
		return
	}
	b.authorizeCreatePartitions(c, req)
	ctx, cancel := requestContext(req.TimeoutMillis)
	defer cancel()
	if ctx.Err() != nil {
		c.reply(timedOutResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrCreatePartitionsResponse()
	seen := map[string]int{}
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	for _, t := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = t.Topic
		if seen[t.Topic] > 1 {
			st.ErrorCode = kerr.InvalidRequest.Code
			st.ErrorMessage = strptr("duplicate topic in request")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		var assignments [][]int32
		for _, a := range t.Assignment {
			assignments = append(assignments, a.Replicas)
		}
		res := b.Controller.CreatePartitions(ctx, t.Topic, t.Count, assignments, req.ValidateOnly)
		st.ErrorCode = res.ErrorCode
		if res.ErrorMessage != "" {
			st.ErrorMessage = strptr(res.ErrorMessage)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}
