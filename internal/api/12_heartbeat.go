package api

// Heartbeat (key 12), versions 0-4, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - REBALANCE_IN_PROGRESS tells a member to rejoin; ILLEGAL_GENERATION and
//     UNKNOWN_MEMBER_ID that it was removed.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(12, 0, 4, handleHeartbeat) }

func handleHeartbeat(b *Broker, c *call, r kmsg.Request) {
	if req := r.(*kmsg.HeartbeatRequest); !b.authorize(c, opRead, resGroup, req.Group) {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	offHandler(func() {
		b.Groups.Heartbeat(r.(*kmsg.HeartbeatRequest), func(resp *kmsg.HeartbeatResponse) { c.reply(resp) })
	})
}
