package api

// LeaveGroup (key 13), versions 0-5, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - v3+ removes a batch of members, each answered on its own.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(13, 0, 5, handleLeaveGroup) }

func handleLeaveGroup(b *Broker, c *call, r kmsg.Request) {
	offHandler(func() {
		b.Groups.LeaveGroup(r.(*kmsg.LeaveGroupRequest), func(resp *kmsg.LeaveGroupResponse) { c.reply(resp) })
	})
}
