package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The request methods below are what the broker's API handlers call with a
// decoded request (its Version set) and a callback for the response. The
// response has the request's version. A method may call respond before it
// returns or later from another goroutine, exactly once; errors Kafka
// reports in the response (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// ...) come back that way, never as a Go error.

// JoinGroup handles JoinGroup (API key 11, v0-v9); client identifies the
// connection. The response waits for the rebalance to complete.
func (c *Coordinator) JoinGroup(client Client, req *kmsg.JoinGroupRequest, respond func(*kmsg.JoinGroupResponse)) {
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.MemberID = code, req.MemberID
		respond(resp)
	}
	switch {
	case req.Group == "":
		fail(kerr.InvalidGroupID.Code)
	case req.SessionTimeoutMillis < c.config.GroupMinSessionTimeoutMs || req.SessionTimeoutMillis > c.config.GroupMaxSessionTimeoutMs:
		fail(kerr.InvalidSessionTimeout.Code)
	default:
		if code := c.run(req.Group, func(s *shard, now time.Time) { s.joinGroup(now, client, req, respond) }); code != 0 {
			fail(code)
		}
	}
}

// SyncGroup handles SyncGroup (API key 14, v0-v5). A follower's response
// waits for the leader's assignment.
func (c *Coordinator) SyncGroup(req *kmsg.SyncGroupRequest, respond func(*kmsg.SyncGroupResponse)) {
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode, resp.MemberAssignment = code, []byte{}
		respond(resp)
	}
	if req.Group == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	if code := c.run(req.Group, func(s *shard, now time.Time) { s.syncGroup(now, req, respond) }); code != 0 {
		fail(code)
	}
}

// Heartbeat handles Heartbeat (API key 12, v0-v4). While the group's
// partition loads the answer is NONE, as Kafka's: the member keeps its
// session and learns of any rebalance on its next heartbeat.
func (c *Coordinator) Heartbeat(req *kmsg.HeartbeatRequest, respond func(*kmsg.HeartbeatResponse)) {
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		if code == kerr.CoordinatorLoadInProgress.Code {
			code = 0
		}
		resp.ErrorCode = code
		respond(resp)
	}
	if req.Group == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	if code := c.run(req.Group, func(s *shard, now time.Time) { s.heartbeat(now, req, respond) }); code != 0 {
		fail(code)
	}
}

// LeaveGroup handles LeaveGroup (API key 13, v0-v5).
func (c *Coordinator) LeaveGroup(req *kmsg.LeaveGroupRequest, respond func(*kmsg.LeaveGroupResponse)) {
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		respond(resp)
	}
	if req.Group == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	if code := c.run(req.Group, func(s *shard, now time.Time) { s.leaveGroup(now, req, respond) }); code != 0 {
		fail(code)
	}
}

// OffsetCommit handles OffsetCommit (API key 8, v0-v10; v10 needs
// Config.Topics). The response waits for the offsets to be appended.
func (c *Coordinator) OffsetCommit(req *kmsg.OffsetCommitRequest, respond func(*kmsg.OffsetCommitResponse)) {
	code := kerr.InvalidGroupID.Code
	if req.Group != "" {
		code = c.run(req.Group, func(s *shard, now time.Time) { s.commitOffsets(now, req, respond) })
	}
	if code == 0 {
		return
	}
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(resp)
}

// OffsetFetch handles OffsetFetch (API key 9, v0-v10; v10 needs
// Config.Topics). Versions: v0-v1 report group errors on each partition;
// v2-v7 in a top-level error code; v2+ fetch every offset when topics is
// null; v8+ batch groups, each with its own error. RequireStable (v7+) only
// matters with transactional offset commits, which are not supported yet.
func (c *Coordinator) OffsetFetch(req *kmsg.OffsetFetchRequest, respond func(*kmsg.OffsetFetchResponse)) {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for i := range req.Groups {
			resp.Groups = append(resp.Groups, c.fetchGroup(req.Version, req.RequireStable, &req.Groups[i]))
		}
		respond(resp)
		return
	}
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = req.Group
	if req.Topics != nil || req.Version < 2 {
		rg.Topics = make([]kmsg.OffsetFetchRequestGroupTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.Partitions = t.Topic, t.Partitions
			rg.Topics = append(rg.Topics, rt)
		}
	}
	g := c.fetchGroup(req.Version, req.RequireStable, &rg)
	switch {
	case g.ErrorCode != 0 && req.Version < 2:
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.Metadata, rp.ErrorCode = p, -1, stringPtr(""), g.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	case g.ErrorCode != 0:
		resp.ErrorCode = g.ErrorCode
	default:
		for _, t := range g.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	respond(resp)
}

func (c *Coordinator) fetchGroup(version int16, requireStable bool, rg *kmsg.OffsetFetchRequestGroup) kmsg.OffsetFetchResponseGroup {
	out := kmsg.NewOffsetFetchResponseGroup()
	out.Group = rg.Group
	code := kerr.InvalidGroupID.Code
	if rg.Group != "" {
		code = c.run(rg.Group, func(s *shard, _ time.Time) {
			out = s.fetchOffsets(version, rg)
			s.markUnstableOffsets(&out, requireStable)
		})
	}
	if code != 0 {
		out.ErrorCode = code
	}
	return out
}

// DescribeGroups handles DescribeGroups (API key 15, v0-v6). Authorized
// operations (v3+) are the API handler's to fill in.
func (c *Coordinator) DescribeGroups(req *kmsg.DescribeGroupsRequest, respond func(*kmsg.DescribeGroupsResponse)) {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		var d kmsg.DescribeGroupsResponseGroup
		if code := c.run(id, func(s *shard, _ time.Time) { d = s.describeGroup(req.Version, id) }); code != 0 {
			d = kmsg.NewDescribeGroupsResponseGroup()
			d.Group, d.ErrorCode = id, code
		}
		resp.Groups = append(resp.Groups, d)
	}
	respond(resp)
}

// ListGroups handles ListGroups (API key 16, v0-v5): the groups of every
// partition this broker leads, filtered by state (v4+) and type (v5+). While
// any partition loads the answer is COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) ListGroups(req *kmsg.ListGroupsRequest, respond func(*kmsg.ListGroupsResponse)) {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	resp.Groups = []kmsg.ListGroupsResponseGroup{}
	c.mu.Lock()
	closed := c.mu.closed
	c.mu.Unlock()
	if closed {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		respond(resp)
		return
	}
	for _, p := range c.partitions() {
		code := c.runOn(p, func(s *shard, _ time.Time) {
			resp.Groups = s.listGroups(req.StatesFilter, req.TypesFilter, resp.Groups)
		})
		if code == kerr.CoordinatorLoadInProgress.Code {
			resp.ErrorCode = code
			resp.Groups = []kmsg.ListGroupsResponseGroup{}
			break
		}
	}
	respond(resp)
}

// DeleteGroups handles DeleteGroups (API key 42, v0-v3): empty groups are
// deleted with their offsets.
func (c *Coordinator) DeleteGroups(req *kmsg.DeleteGroupsRequest, respond func(*kmsg.DeleteGroupsResponse)) {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	results := make(map[string]kmsg.DeleteGroupsResponseGroup, len(req.Groups))
	byPartition := make(map[*partition][]string)
	var order []*partition
	for _, id := range req.Groups {
		p, code := c.route(id)
		if code != 0 {
			r := kmsg.NewDeleteGroupsResponseGroup()
			r.Group, r.ErrorCode = id, code
			results[id] = r
			continue
		}
		if byPartition[p] == nil {
			order = append(order, p)
		}
		byPartition[p] = append(byPartition[p], id)
	}
	for _, p := range order {
		ids := byPartition[p]
		code := c.runOn(p, func(s *shard, now time.Time) {
			s.deleteGroups(now, ids, func(rs []kmsg.DeleteGroupsResponseGroup) {
				for _, r := range rs {
					results[r.Group] = r
				}
			})
		})
		if code != 0 {
			for _, id := range ids {
				r := kmsg.NewDeleteGroupsResponseGroup()
				r.Group, r.ErrorCode = id, code
				results[id] = r
			}
		}
	}
	for _, id := range req.Groups {
		resp.Groups = append(resp.Groups, results[id])
	}
	respond(resp)
}

// OffsetDelete handles OffsetDelete (API key 47, v0).
func (c *Coordinator) OffsetDelete(req *kmsg.OffsetDeleteRequest, respond func(*kmsg.OffsetDeleteResponse)) {
	code := kerr.InvalidGroupID.Code
	if req.Group != "" {
		code = c.run(req.Group, func(s *shard, now time.Time) { s.deleteOffsets(now, req, respond) })
	}
	if code != 0 {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		respond(resp)
	}
}
