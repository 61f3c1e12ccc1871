package api

// Heartbeat (key 12), versions 0-4, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - REBALANCE_IN_PROGRESS tells a member to rejoin; ILLEGAL_GENERATION and
//     UNKNOWN_MEMBER_ID that it was removed.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(12, 0, 4, handleHeartbeat) }

func handleHeartbeat(b *Broker, c *call, r kmsg.Request) {
	offHandler(func() {
		b.Groups.Heartbeat(r.(*kmsg.HeartbeatRequest), func(resp *kmsg.HeartbeatResponse) { c.reply(resp) })
	})
}
