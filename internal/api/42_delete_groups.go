package api

// DeleteGroups (key 42), versions 0-3, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - A group with members answers NON_EMPTY_GROUP; an unknown one
//     GROUP_ID_NOT_FOUND, at every version.
//   - v3 (KIP-1043) changes no field; it tells the client the broker knows
//     group types, which for the classic and consumer groups Samsa serves
//     changes no answer.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(42, 0, 3, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, c *call, r kmsg.Request) {
	b.authorizeDeleteGroups(c, r.(*kmsg.DeleteGroupsRequest))
	offHandler(func() {
		b.Groups.DeleteGroups(r.(*kmsg.DeleteGroupsRequest), func(resp *kmsg.DeleteGroupsResponse) { c.reply(resp) })
	})
}
