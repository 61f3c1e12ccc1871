package api

// LeaveGroup (key 13), versions 0-5, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - v3+ removes a batch of members, each answered on its own.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(13, 0, 5, handleLeaveGroup) }

func handleLeaveGroup(b *Broker, c *call, r kmsg.Request) {
	if req := r.(*kmsg.LeaveGroupRequest); !b.authorize(c, opRead, resGroup, req.Group) {
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	offHandler(func() {
		b.Groups.LeaveGroup(r.(*kmsg.LeaveGroupRequest), func(resp *kmsg.LeaveGroupResponse) { c.reply(resp) })
	})
}
