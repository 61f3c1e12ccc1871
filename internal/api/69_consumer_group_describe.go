package api

// ConsumerGroupDescribe (key 69), versions 0-1, served by the group
// coordinator (internal/group): the KIP-848 counterpart of DescribeGroups.
//
// Behavior:
//   - v1 adds each member's type (1: a member of the consumer protocol).
//   - A group that does not exist, or is a classic group, answers
//     GROUP_ID_NOT_FOUND; an empty group id INVALID_GROUP_ID.
//   - Authorized operations are not computed yet (INT32_MIN, "omitted").

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(69, 0, 1, handleConsumerGroupDescribe) }

func handleConsumerGroupDescribe(b *Broker, c *call, r kmsg.Request) {
	b.Groups.ConsumerGroupDescribe(r.(*kmsg.ConsumerGroupDescribeRequest), func(resp *kmsg.ConsumerGroupDescribeResponse) { c.reply(resp) })
}
