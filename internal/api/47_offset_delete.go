package api

// OffsetDelete (key 47), versions 0-0, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - Offsets of topics the group is subscribed to answer
//     GROUP_SUBSCRIBED_TO_TOPIC.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(47, 0, 0, handleOffsetDelete) }

func handleOffsetDelete(b *Broker, c *call, r kmsg.Request) {
	if !b.authorizeOffsetDelete(c, r.(*kmsg.OffsetDeleteRequest)) {
		return
	}
	offHandler(func() {
		b.Groups.OffsetDelete(r.(*kmsg.OffsetDeleteRequest), func(resp *kmsg.OffsetDeleteResponse) { c.reply(resp) })
	})
}
