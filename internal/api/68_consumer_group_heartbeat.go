package api

// ConsumerGroupHeartbeat (key 68), versions 0-1, served by the group
// coordinator (internal/group): the consumer group protocol of KIP-848,
// where the coordinator assigns partitions with a server-side assignor and
// members converge on their assignment one heartbeat at a time.
//
// Behavior:
//   - v0: a member joining with an empty member id gets one chosen by the
//     coordinator; v1 requires the client to choose it (KIP-1082) and adds
//     SubscribedTopicRegex (RE2 syntax, matched against whole topic names).
//   - Member epoch 0 joins, -1 leaves, -2 has a static member leave for now
//     (it keeps its partitions for group.consumer.session.timeout.ms).
//   - A partition is given to a member only once its previous owner has
//     acknowledged revoking it.
//   - The response waits for the group's records to be appended to
//     __consumer_offsets.
//   - UNSUPPORTED_VERSION when "consumer" is not in
//     group.coordinator.rebalance.protocols, or the finalized group.version
//     is 0 (UpdateFeatures), as Kafka answers; clients then fall back to the
//     classic protocol.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { register(68, 0, 1, handleConsumerGroupHeartbeat) }

func handleConsumerGroupHeartbeat(b *Broker, c *call, r kmsg.Request) {
	if !b.consumerGroupVersionFinalized() {
		resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		c.reply(resp)
		return
	}
	if code, message := b.authorizeConsumerGroupHeartbeat(c, r.(*kmsg.ConsumerGroupHeartbeatRequest)); code != nil {
		resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
		resp.ErrorCode, resp.ErrorMessage = code.Code, strptr(message)
		c.reply(resp)
		return
	}
	client := group.Client{Host: group.ClientHost(c.req.Conn.RemoteAddr)}
	if c.req.ClientID != nil {
		client.ID = *c.req.ClientID
	}
	offHandler(func() {
		b.Groups.ConsumerGroupHeartbeat(client, r.(*kmsg.ConsumerGroupHeartbeatRequest), func(resp *kmsg.ConsumerGroupHeartbeatResponse) { c.reply(resp) })
	})
}

// consumerGroupVersionFinalized reports whether group.version is at least
// 1, which the consumer group protocol needs.
func (b *Broker) consumerGroupVersionFinalized() bool {
	return b.Image().FeatureLevel(metadata.GroupVersionFeature) >= 1
}
