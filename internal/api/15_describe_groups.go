package api

// DescribeGroups (key 15), versions 0-6, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - Below v6 an unknown group is described as Dead with no error, as in
//     Kafka; v6 (KIP-1043) answers GROUP_ID_NOT_FOUND with Kafka's message
//     "Group <id> not found." instead.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(15, 0, 6, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, c *call, r kmsg.Request) {
	offHandler(func() {
		b.Groups.DescribeGroups(r.(*kmsg.DescribeGroupsRequest), func(resp *kmsg.DescribeGroupsResponse) {
			if c.version >= 6 {
				for i := range resp.Groups {
					g := &resp.Groups[i]
					if g.ErrorCode == 0 && g.State == "Dead" && len(g.Members) == 0 {
						*g = kmsg.NewDescribeGroupsResponseGroup()
						g.Group, g.ErrorCode = resp.Groups[i].Group, kerr.GroupIDNotFound.Code
						g.ErrorMessage = strptr("Group " + g.Group + " not found.")
					}
				}
			}
			c.reply(resp)
		})
	})
}
