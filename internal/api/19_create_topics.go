package api

// CreateTopics (key 19), versions 2-7.
//
// Behavior:
//   - Topic names follow Kafka's rules (1-249 of [a-zA-Z0-9._-], not "." or
//     "..", no collision between '.' and '_'): INVALID_TOPIC_EXCEPTION.
//   - An existing topic answers TOPIC_ALREADY_EXISTS; a name twice in one
//     request answers INVALID_REQUEST for it.
//   - num_partitions -1 and replication_factor -1 take num.partitions and
//     default.replication.factor; other non-positive values answer
//     INVALID_PARTITIONS / INVALID_REPLICATION_FACTOR; a factor above the
//     number of live brokers answers INVALID_REPLICATION_FACTOR.
//   - Explicit replica assignments (with -1/-1 counts) are validated:
//     INVALID_REPLICA_ASSIGNMENT.
//   - Configs are validated by name and value: INVALID_CONFIG.
//   - validate_only checks everything and creates nothing.
//   - timeout_ms is the deadline of the decision (timeout.go): past it,
//     REQUEST_TIMED_OUT for each topic; 0 or less times out at once, with
//     validate_only too.
//   - v5+ returns the topic id (v7), partitions, replication factor and the
//     topic's configs.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() {
	register(19, 2, 7, handleCreateTopics)
	registerController(19, 2, 7, handleCreateTopics)
}

func handleCreateTopics(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.CreateTopicsRequest)
	b.limitCreateTopics(c, req)
	if b.forwarded(c, req) {
		return
	}
	// Authorized where it is decided, as Kafka's ControllerApis does: a
	// forwarded request as the client the Envelope names.
	b.authorizeCreateTopics(c, req)
	creates := make([]controller.CreateTopic, len(req.Topics))
	for i, rt := range req.Topics {
		ct := controller.CreateTopic{Name: rt.Topic, NumPartitions: rt.NumPartitions, ReplicationFactor: rt.ReplicationFactor, Configs: map[string]*string{}}
		if len(rt.ReplicaAssignment) > 0 {
			assignments := make([][]int32, len(rt.ReplicaAssignment))
			for _, a := range rt.ReplicaAssignment {
				if a.Partition < 0 || int(a.Partition) >= len(assignments) || assignments[a.Partition] != nil {
					ct.Assignments = [][]int32{{}} // rejected below as invalid
					break
				}
				assignments[a.Partition] = a.Replicas
			}
			if ct.Assignments == nil {
				ct.Assignments = assignments
			}
		}
		for _, cfg := range rt.Configs {
			ct.Configs[cfg.Name] = cfg.Value
		}
		creates[i] = ct
	}
	ctx, cancel := requestContext(req.TimeoutMillis)
	defer cancel()
	results := b.Controller.CreateTopics(ctx, creates, req.ValidateOnly)
	resp := kmsg.NewPtrCreateTopicsResponse()
	img := b.Image()
	for i, res := range results {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = res.Name
		st.ErrorCode = res.ErrorCode
		if res.ErrorMessage != "" {
			st.ErrorMessage = strptr(res.ErrorMessage)
		}
		st.NumPartitions = -1
		st.ReplicationFactor = -1
		if res.ErrorCode == 0 {
			st.TopicID = res.TopicID
			st.NumPartitions = res.NumPartitions
			st.ReplicationFactor = res.ReplicationFactor
			overrides := map[string]string{}
			for k, v := range creates[i].Configs {
				if v != nil {
					overrides[k] = *v
				}
			}
			if !req.ValidateOnly {
				overrides = img.Configs(metadata.ResourceTopic, res.Name)
			}
			for _, e := range b.Config().DescribeTopic(overrides, false) {
				sc := kmsg.NewCreateTopicsResponseTopicConfig()
				sc.Name = e.Name
				sc.Value = e.Value
				sc.ReadOnly = e.ReadOnly
				sc.Source = int8(e.Source)
				sc.IsSensitive = e.Sensitive
				st.Configs = append(st.Configs, sc)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}
