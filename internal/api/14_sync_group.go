package api

// SyncGroup (key 14), versions 0-5, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - A follower's response is parked until the leader sends the assignment.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(14, 0, 5, handleSyncGroup) }

func handleSyncGroup(b *Broker, c *call, r kmsg.Request) {
	if req := r.(*kmsg.SyncGroupRequest); !b.authorize(c, opRead, resGroup, req.Group) {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	offHandler(func() {
		b.Groups.SyncGroup(r.(*kmsg.SyncGroupRequest), func(resp *kmsg.SyncGroupResponse) { c.reply(resp) })
	})
}
