package api

// ShareGroupDescribe (key 77), version 1, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - A group that does not exist or is not a share group answers
//     GROUP_ID_NOT_FOUND; an empty group id INVALID_GROUP_ID.
//   - GROUP DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED for the
//     others); authorized operations (KIP-430) when asked.
//   - The assignor is "simple", the group's assignment epoch its group
//     epoch (assignments apply at once).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func init() { register(77, 1, 1, handleShareGroupDescribe) }

func handleShareGroupDescribe(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ShareGroupDescribeRequest)
	if !b.sharesEnabled() {
		resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
		for _, id := range req.GroupIDs {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode = id, kerr.UnsupportedVersion.Code
			g.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, g)
		}
		c.reply(resp)
		return
	}
	var denied []string
	if b.authorizing() {
		req.GroupIDs, denied = splitAllowed(req.GroupIDs, func(g string) bool { return b.authorize(c, opDescribe, resGroup, g) })
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.ShareGroupDescribeResponse)
		for i := range resp.Groups {
			resp.Groups[i].AuthorizedOperations = authorizedOperationsOmitted
			if req.IncludeAuthorizedOperations && resp.Groups[i].ErrorCode == 0 {
				resp.Groups[i].AuthorizedOperations = b.authorizedOperations(c, resGroup, resp.Groups[i].GroupID, authz.GroupOperations)
			}
		}
		for _, g := range denied {
			res := kmsg.NewShareGroupDescribeResponseGroup()
			res.GroupID, res.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			res.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, res)
		}
	}
	offHandler(func() {
		b.Groups.ShareGroupDescribe(req, func(resp *kmsg.ShareGroupDescribeResponse) { c.reply(resp) })
	})
}
