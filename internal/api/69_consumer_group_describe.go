package api

// ConsumerGroupDescribe (key 69), versions 0-1, served by the group
// coordinator (internal/group): the KIP-848 counterpart of DescribeGroups.
//
// Behavior:
//   - v1 adds each member's type (1: a member of the consumer protocol).
//   - A group that does not exist, or is a classic group, answers
//     GROUP_ID_NOT_FOUND; an empty group id INVALID_GROUP_ID.
//   - Authorized operations are not computed yet (INT32_MIN, "omitted").
//   - UNSUPPORTED_VERSION for every group while the finalized group.version
//     is 0, as Kafka answers.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(69, 0, 1, handleConsumerGroupDescribe) }

func handleConsumerGroupDescribe(b *Broker, c *call, r kmsg.Request) {
	if !b.consumerGroupVersionFinalized() {
		resp := kmsg.NewPtrConsumerGroupDescribeResponse()
		for _, id := range r.(*kmsg.ConsumerGroupDescribeRequest).Groups {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = id, kerr.UnsupportedVersion.Code
			g.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, g)
		}
		c.reply(resp)
		return
	}
	b.authorizeConsumerGroupDescribe(c, r.(*kmsg.ConsumerGroupDescribeRequest))
	offHandler(func() {
		b.Groups.ConsumerGroupDescribe(r.(*kmsg.ConsumerGroupDescribeRequest), func(resp *kmsg.ConsumerGroupDescribeResponse) { c.reply(resp) })
	})
}
