package api

// DescribeGroups (key 15), versions 0-5, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - An unknown group is described as Dead with no error, as in Kafka.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(15, 0, 5, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, c *call, r kmsg.Request) {
	b.authorizeDescribeGroups(c, r.(*kmsg.DescribeGroupsRequest))
	offHandler(func() {
		b.Groups.DescribeGroups(r.(*kmsg.DescribeGroupsRequest), func(resp *kmsg.DescribeGroupsResponse) { c.reply(resp) })
	})
}
