package api

// DescribeGroups (key 15), versions 0-6, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - Below v6 an unknown group is described as Dead with no error, as in
//     Kafka; v6 (KIP-1043) answers GROUP_ID_NOT_FOUND with Kafka's message
//     "Group <id> not found." instead, and "Group <id> is not a classic
//     group." for a consumer-protocol group (internal/group).

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(15, 0, 6, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, c *call, r kmsg.Request) {
	b.authorizeDescribeGroups(c, r.(*kmsg.DescribeGroupsRequest))
	offHandler(func() {
		b.Groups.DescribeGroups(r.(*kmsg.DescribeGroupsRequest), func(resp *kmsg.DescribeGroupsResponse) { c.reply(resp) })
	})
}
