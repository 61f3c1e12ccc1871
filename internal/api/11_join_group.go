package api

// JoinGroup (key 11), versions 0-9, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - The response is parked until the rebalance completes (every known
//     member rejoined, or rebalance.timeout.ms), never by a sleeping handler.
//   - v4+: a first join without a member id answers MEMBER_ID_REQUIRED with
//     a generated id (KIP-394).
//   - group.instance.id gives static membership (KIP-345).
//   - session.timeout.ms outside group.min/max.session.timeout.ms answers
//     INVALID_SESSION_TIMEOUT; a full group GROUP_MAX_SIZE_REACHED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/group"
)

func init() { register(11, 0, 9, handleJoinGroup) }

func handleJoinGroup(b *Broker, c *call, r kmsg.Request) {
	if req := r.(*kmsg.JoinGroupRequest); !b.authorize(c, opRead, resGroup, req.Group) {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
		c.reply(resp)
		return
	}
	client := group.Client{Host: group.ClientHost(c.req.Conn.RemoteAddr)}
	if c.req.ClientID != nil {
		client.ID = *c.req.ClientID
	}
	offHandler(func() {
		b.Groups.JoinGroup(client, r.(*kmsg.JoinGroupRequest), func(resp *kmsg.JoinGroupResponse) { c.reply(resp) })
	})
}
