package api

// DeleteTopics (key 20), versions 1-6.
//
// Behavior:
//   - Topics are named (v0-5) or, from v6, named or identified by id.
//   - An unknown name answers UNKNOWN_TOPIC_OR_PARTITION, an unknown id
//     UNKNOWN_TOPIC_ID; delete.topic.enable=false answers
//     TOPIC_DELETION_DISABLED.
//   - The partitions' logs are deleted once the removal is committed to the
//     metadata log.
//   - timeout_ms is the deadline of the decision (timeout.go): past it,
//     REQUEST_TIMED_OUT; 0 or less answers it for every topic at once.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() {
	register(20, 1, 6, handleDeleteTopics)
	registerController(20, 1, 6, handleDeleteTopics)
}

func handleDeleteTopics(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DeleteTopicsRequest)
	b.limitDeleteTopics(c, req)
	if b.forwarded(c, req) {
		return
	}
	b.authorizeDeleteTopics(c, req)
	ctx, cancel := requestContext(req.TimeoutMillis)
	defer cancel()
	if ctx.Err() != nil {
		c.reply(timedOutResponse(req, c.version))
		return
	}
	img := b.Image()
	type named struct {
		name *string
		id   metadata.UUID
	}
	var wanted []named
	if c.version >= 6 {
		for _, t := range req.Topics {
			wanted = append(wanted, named{t.Topic, metadata.UUID(t.TopicID)})
		}
	} else {
		for _, n := range req.TopicNames {
			wanted = append(wanted, named{strptr(n), metadata.UUID{}})
		}
	}
	resp := kmsg.NewPtrDeleteTopicsResponse()
	var ids []metadata.UUID
	var at []int
	for _, w := range wanted {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic = w.name
		st.TopicID = w.id
		var t *metadata.Topic
		if w.name != nil {
			t = img.Topic(*w.name)
			if t == nil {
				st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
		} else {
			t = img.TopicByID(w.id)
			if t == nil {
				st.ErrorCode = kerr.UnknownTopicID.Code
			}
		}
		if t != nil {
			st.Topic = strptr(t.Name)
			st.TopicID = t.ID
			ids = append(ids, t.ID)
			at = append(at, len(resp.Topics))
		}
		resp.Topics = append(resp.Topics, st)
	}
	results := b.Controller.DeleteTopics(ctx, ids)
	for i, res := range results {
		resp.Topics[at[i]].ErrorCode = res.ErrorCode
		if res.ErrorMessage != "" {
			resp.Topics[at[i]].ErrorMessage = strptr(res.ErrorMessage)
		}
	}
	c.reply(resp)
}
