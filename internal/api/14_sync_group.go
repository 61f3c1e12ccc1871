package api

// SyncGroup (key 14), versions 0-5, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - A follower's response is parked until the leader sends the assignment.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(14, 0, 5, handleSyncGroup) }

func handleSyncGroup(b *Broker, c *call, r kmsg.Request) {
	offHandler(func() {
		b.Groups.SyncGroup(r.(*kmsg.SyncGroupRequest), func(resp *kmsg.SyncGroupResponse) { c.reply(resp) })
	})
}
