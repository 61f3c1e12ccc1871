package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupHeartbeat handles ShareGroupHeartbeat (API key 76, v1); client
// identifies the connection. The response is sent once the group's epoch
// record is appended. Without share groups enabled the answer is
// UNSUPPORTED_VERSION.
func (c *Coordinator) ShareGroupHeartbeat(client Client, req *kmsg.ShareGroupHeartbeatRequest, respond func(*kmsg.ShareGroupHeartbeatResponse)) {
	fail := func(code int16, message string) {
		resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = code
		if message != "" {
			resp.ErrorMessage = stringPtr(message)
		}
		respond(resp)
	}
	switch {
	case !c.config.ShareGroup.Enabled:
		fail(kerr.UnsupportedVersion.Code, "")
	case req.GroupID == "":
		fail(kerr.InvalidRequest.Code, "GroupId can't be empty.")
	default:
		if code := c.run(req.GroupID, func(s *shard, now time.Time) { s.shareGroupHeartbeat(now, client, req, respond) }); code != 0 {
			fail(code, "")
		}
	}
}

// ShareGroupDescribe handles ShareGroupDescribe (API key 77, v1).
// Authorized operations are the API handler's to fill in.
func (c *Coordinator) ShareGroupDescribe(req *kmsg.ShareGroupDescribeRequest, respond func(*kmsg.ShareGroupDescribeResponse)) {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		d := kmsg.NewShareGroupDescribeResponseGroup()
		d.GroupID = id
		if id == "" {
			d.ErrorCode = kerr.InvalidGroupID.Code
		} else if code := c.run(id, func(s *shard, _ time.Time) { d = s.describeShareGroup(id) }); code != 0 {
			d.ErrorCode = code
		}
		resp.Groups = append(resp.Groups, d)
	}
	respond(resp)
}

// ShareGroupMember reports whether member belongs to share group id with
// the partitions it is assigned, from the coordinator's view (false when
// the group is not coordinated here).
func (c *Coordinator) ShareGroupMember(id, member string) (assigned map[[16]byte][]int32, ok bool) {
	c.run(id, func(s *shard, _ time.Time) {
		if g, isShare := s.groups[id].(*shareGroup); isShare {
			if m := g.members[member]; m != nil {
				assigned, ok = m.assigned, true
			}
		}
	})
	return assigned, ok
}

// IsShareGroup reports whether id is a share group coordinated here; code
// is the error when the group's partition cannot answer.
func (c *Coordinator) IsShareGroup(id string) (isShare bool, exists bool, code int16) {
	code = c.run(id, func(s *shard, _ time.Time) {
		g := s.groups[id]
		_, isShare = g.(*shareGroup)
		exists = g != nil
	})
	return isShare, exists, code
}
