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
	// Initialized are the group's topic-partitions with initialized
	// share state (its ShareGroupStatePartitionMetadata), by topic id,
	// each topic's partitions sorted.
	Initialized map[[16]byte][]int32
}

// ShareGroup describes group id for the share admin APIs; code is the
// error when its partition cannot answer here (NOT_COORDINATOR, ...).
// With create, an absent group is created as an empty share group, as
// AlterShareGroupOffsets does in Kafka.
func (c *Coordinator) ShareGroup(id string, create bool) (info ShareGroupInfo, code int16) {
	if id == "" {
		return info, kerr.InvalidGroupID.Code
	}
	code = c.run(id, func(s *shard, _ time.Time) {
		g := s.groups[id]
		if g == nil && create {
			sg := newShareGroup(id)
			s.groups[id] = sg
			s.writeShareGroupEpoch(sg, false, func(error) {})
			g = sg
		}
		info.Exists = g != nil
		sg, ok := g.(*shareGroup)
		if !ok {
			return
		}
		info.IsShare, info.Members = true, len(sg.members)
		for topicID, t := range sg.statePartitions.initialized {
			if info.Initialized == nil {
				info.Initialized = map[[16]byte][]int32{}
			}
			info.Initialized[topicID] = slices.Clone(t.partitions)
		}
	})
	return info, code
}

// ShareStateInitialized records partitions of topic as initialized in share
// group id (AlterShareGroupOffsets initialized their durable state) and
// appends the group's ShareGroupStatePartitionMetadata record; the code is
// the append's error, or GROUP_ID_NOT_FOUND when id is not a share group.
func (c *Coordinator) ShareStateInitialized(id string, topicID [16]byte, topic string, partitions []int32) int16 {
	return c.changeShareStatePartitions(id, func(p *shareStatePartitions, nowMs int64) bool {
		return p.addInitialized(topicID, topic, partitions, nowMs)
	})
}

// ShareStateDeleting moves topic's share-partitions of group id to the
// deleting topics, before DeleteShareGroupOffsets deletes their state.
func (c *Coordinator) ShareStateDeleting(id string, topicID [16]byte, topic string) int16 {
	return c.changeShareStatePartitions(id, func(p *shareStatePartitions, nowMs int64) bool {
		p.markDeleting(topicID, topic, nowMs)
		return true
	})
}

// ShareStateDeleted forgets a deleting topic of group id once its state is
// deleted.
func (c *Coordinator) ShareStateDeleted(id string, topicID [16]byte) int16 {
	return c.changeShareStatePartitions(id, func(p *shareStatePartitions, _ int64) bool {
		_, ok := p.deleting[topicID]
		delete(p.deleting, topicID)
		return ok
	})
}

func (c *Coordinator) changeShareStatePartitions(id string, change func(p *shareStatePartitions, nowMs int64) bool) int16 {
	if id == "" {
		return kerr.InvalidGroupID.Code
	}
	var result int16
	code := c.run(id, func(s *shard, now time.Time) {
		g, ok := s.groups[id].(*shareGroup)
		if !ok {
			result = kerr.GroupIDNotFound.Code
			return
		}
		if !change(&g.statePartitions, now.UnixMilli()) {
			return
		}
		// The append runs before run returns (drainLocked), so result
		// is set when it does.
		s.write([]KV{shareGroupStatePartitionsKV(id, &g.statePartitions)}, func(_ time.Time, err error) {
			if err != nil {
				result = appendErrorCode(err)
			}
		})
	})
	if code != 0 {
		return code
	}
	return result
}
