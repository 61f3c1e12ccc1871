package api

// ListGroups (key 16), versions 0-5, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - v4+ filters by state, v5+ by type.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(16, 0, 5, handleListGroups) }

func handleListGroups(b *Broker, c *call, r kmsg.Request) {
	b.authorizeListGroups(c)
	offHandler(func() {
		b.Groups.ListGroups(r.(*kmsg.ListGroupsRequest), func(resp *kmsg.ListGroupsResponse) { c.reply(resp) })
	})
}
