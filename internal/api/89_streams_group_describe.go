package api

// StreamsGroupDescribe (key 89), versions 0-1, served by the group
// coordinator (internal/group): the KIP-1071 counterpart of DescribeGroups.
//
// Behavior:
//   - v1 adds the assignor name ("sticky") and the topology description
//     status: NOT_REQUESTED, or NOT_STORED when asked (no topology
//     description plugin is configured).
//   - A group that does not exist, or is not a streams group, answers
//     GROUP_ID_NOT_FOUND; an empty group id INVALID_GROUP_ID.
//   - Needs DESCRIBE on each group; authorized operations are filled in
//     when asked (KIP-430).
//   - UNSUPPORTED_VERSION for every group while streams groups are not
//     enabled, as Kafka answers.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(89, 0, 1, handleStreamsGroupDescribe) }

func handleStreamsGroupDescribe(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.StreamsGroupDescribeRequest)
	if !b.streamsGroupsEnabled() {
		resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
		for _, id := range req.Groups {
			g := kmsg.NewStreamsGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = id, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, g)
		}
		c.reply(resp)
		return
	}
	b.authorizeStreamsGroupDescribe(c, req)
	offHandler(func() {
		b.Groups.StreamsGroupDescribe(req, func(resp *kmsg.StreamsGroupDescribeResponse) { c.reply(resp) })
	})
}
