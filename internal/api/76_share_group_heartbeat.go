package api

// ShareGroupHeartbeat (key 76), version 1, served by the group coordinator
// (internal/group): membership of share groups (KIP-932), with KIP-848
// member epochs and the simple assignor.
//
// Behavior:
//   - v0 was Kafka 4.0's early access and is not served (Kafka 4.1+ serve
//     v1 only).
//   - The member id is chosen by the client and required; epoch 0 joins,
//     -1 leaves, any other must be the member's current epoch
//     (FENCED_MEMBER_EPOCH; UNKNOWN_MEMBER_ID for a member the group does
//     not have).
//   - Partitions may be shared by members, so the assignment takes effect
//     at once; it is sent when it changed.
//   - GROUP READ on the group, TOPIC DESCRIBE on every subscribed topic
//     (TOPIC_AUTHORIZATION_FAILED naming the denied ones).
//   - UNSUPPORTED_VERSION when group.share.enable is false or share.version
//     is finalized at 0.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/group"
)

func init() { register(76, 1, 1, handleShareGroupHeartbeat) }

func handleShareGroupHeartbeat(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ShareGroupHeartbeatRequest)
	fail := func(code *kerr.Error, message string) {
		resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = code.Code
		if message != "" {
			resp.ErrorMessage = strptr(message)
		}
		c.reply(resp)
	}
	if !b.sharesEnabled() {
		fail(kerr.UnsupportedVersion, "")
		return
	}
	if b.authorizing() {
		if !b.authorize(c, opRead, resGroup, req.GroupID) {
			fail(kerr.GroupAuthorizationFailed, kerr.GroupAuthorizationFailed.Message)
			return
		}
		var denied []string
		describable := b.topicChecker(c, opDescribe)
		for _, topic := range req.SubscribedTopicNames {
			if !describable.allowed(topic) {
				denied = append(denied, topic)
			}
		}
		if len(denied) > 0 {
			slices.Sort(denied)
			fail(kerr.TopicAuthorizationFailed, "The member is not authorized to describe topics "+joinNames(denied)+".")
			return
		}
	}
	client := group.Client{Host: group.ClientHost(c.req.Conn.RemoteAddr)}
	if c.req.ClientID != nil {
		client.ID = *c.req.ClientID
	}
	offHandler(func() {
		b.Groups.ShareGroupHeartbeat(client, req, func(resp *kmsg.ShareGroupHeartbeatResponse) { c.reply(resp) })
	})
}
