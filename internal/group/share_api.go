package group

import (
	"slices"
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

// ShareGroupInfo is what the share admin APIs need of a group.
type ShareGroupInfo struct {
	Exists  bool
	IsShare bool
	Members int
	// Topics are the topics the members subscribe to, sorted.
	Topics []string
}

// ShareGroup describes group id for the share admin APIs; code is the
// error when its partition cannot answer here (NOT_COORDINATOR, ...).
// With create, an absent group is created as an empty share group (as
// AlterShareGroupOffsets does in Kafka) and adminTopics are remembered for
// DescribeShareGroupOffsets.
func (c *Coordinator) ShareGroup(id string, create bool, adminTopics ...string) (info ShareGroupInfo, code int16) {
	if id == "" {
		return info, kerr.InvalidGroupID.Code
	}
	code = c.run(id, func(s *shard, _ time.Time) {
		g := s.groups[id]
		if g == nil && create {
			sg := newShareGroup(id)
			s.groups[id] = sg
			s.writeShareGroupEpoch(sg, func(error) {})
			g = sg
		}
		info.Exists = g != nil
		sg, ok := g.(*shareGroup)
		if !ok {
			return
		}
		for _, t := range adminTopics {
			if sg.adminTopics == nil {
				sg.adminTopics = map[string]bool{}
			}
			sg.adminTopics[t] = true
		}
		info.IsShare, info.Members = true, len(sg.members)
		for _, m := range sg.members {
			info.Topics = append(info.Topics, m.subscribed...)
		}
		for t := range sg.adminTopics {
			info.Topics = append(info.Topics, t)
		}
		slices.Sort(info.Topics)
		info.Topics = slices.Compact(info.Topics)
	})
	return info, code
}
