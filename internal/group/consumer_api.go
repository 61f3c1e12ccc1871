package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupHeartbeat handles ConsumerGroupHeartbeat (API key 68, v0-v1);
// client identifies the connection. The response is sent once the records
// the heartbeat produced are appended. When the consumer protocol is not
// enabled the answer is UNSUPPORTED_VERSION, as Kafka's.
func (c *Coordinator) ConsumerGroupHeartbeat(client Client, req *kmsg.ConsumerGroupHeartbeatRequest, respond func(*kmsg.ConsumerGroupHeartbeatResponse)) {
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		respond(resp)
	}
	if !c.config.ConsumerGroup.Enabled {
		fail(kerr.UnsupportedVersion.Code)
		return
	}
	if code := c.run(req.Group, func(s *shard, now time.Time) { s.consumerGroupHeartbeat(now, client, req, respond) }); code != 0 {
		fail(code)
	}
}

// ConsumerGroupDescribe handles ConsumerGroupDescribe (API key 69, v0-v1).
// Authorized operations are the API handler's to fill in.
func (c *Coordinator) ConsumerGroupDescribe(req *kmsg.ConsumerGroupDescribeRequest, respond func(*kmsg.ConsumerGroupDescribeResponse)) {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		d := kmsg.NewConsumerGroupDescribeResponseGroup()
		d.Group = id
		if id == "" {
			d.ErrorCode = kerr.InvalidGroupID.Code
		} else if code := c.run(id, func(s *shard, _ time.Time) { d = s.describeConsumerGroup(req.Version, id) }); code != 0 {
			d.ErrorCode = code
		}
		resp.Groups = append(resp.Groups, d)
	}
	respond(resp)
}

// describeConsumerGroup answers one group of ConsumerGroupDescribe.
// Versions: v1 adds each member's type (1: consumer protocol).
func (s *shard) describeConsumerGroup(version int16, id string) kmsg.ConsumerGroupDescribeResponseGroup {
	d := kmsg.NewConsumerGroupDescribeResponseGroup()
	d.Group = id
	d.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{}
	g, ok := s.groups[id].(*consumerGroup)
	if !ok {
		d.ErrorCode = kerr.GroupIDNotFound.Code
		if s.groups[id] == nil {
			d.ErrorMessage = stringPtr("Group " + id + " not found.")
		} else {
			d.ErrorMessage = stringPtr("Group " + id + " is not a consumer group.")
		}
		return d
	}
	d.State = g.stateName()
	d.Epoch = g.groupEpoch
	d.AssignmentEpoch = g.targetAssignmentEpoch
	d.AssignorName = g.preferredAssignor(nil)
	if supported := s.config.ConsumerGroup.assignorNames(); !slices.Contains(supported, d.AssignorName) {
		d.AssignorName = supported[0]
	}
	for _, memberID := range g.sortedMemberIDs() {
		m := g.members[memberID]
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.RackID = m.id, m.instanceID, m.rackID
		dm.MemberEpoch = m.memberEpoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopics = append([]string{}, m.subscribedTopicNames...)
		dm.SubscribedTopicRegex = stringPtr(m.subscribedTopicRegex)
		dm.Assignment = s.describeAssignment(m.assigned)
		dm.TargetAssignment = s.describeAssignment(g.target[m.id])
		if version >= 1 {
			dm.MemberType = 1
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// describeAssignment names an assignment's topics; topics that no longer
// exist are left out, as Kafka does.
func (s *shard) describeAssignment(a assignment) kmsg.Assignment {
	out := kmsg.NewAssignment()
	out.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	if s.config.Topics == nil {
		return out
	}
	for _, t := range a.sortedTopics() {
		name, ok := s.config.Topics.TopicName(t)
		if !ok {
			continue
		}
		tp := kmsg.NewAssignmentTopicPartition()
		tp.TopicID, tp.Topic, tp.Partitions = t, name, slices.Clone(a[t])
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return out
}

// validateOffsetFetchMember validates the member id and epoch an
// OffsetFetch v9+ names, for consumer and streams groups; other groups
// accept any.
func (s *shard) validateOffsetFetchMember(req *kmsg.OffsetFetchRequestGroup) int16 {
	switch g := s.groups[req.Group].(type) {
	case *consumerGroup:
		return g.validateOffsetFetch(req.MemberID, req.MemberEpoch)
	case *streamsGroup:
		return g.validateOffsetFetch(req.MemberID, req.MemberEpoch)
	}
	return 0
}

// replaceEmptyConsumerGroup deletes the consumer group id so that a classic
// group can take its place, if it has no members, as Kafka does when a
// classic member joins an empty consumer group. Its offsets are kept.
func (s *shard) replaceEmptyConsumerGroup(id string) bool {
	g, ok := s.groups[id].(*consumerGroup)
	if !ok || len(g.members) > 0 {
		return false
	}
	s.write(s.groupTombstoneKVs(id), func(_ time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to write the tombstones of a consumer group replaced by a classic group", "group", id, "err", err)
		}
	})
	s.forgetGroup(id)
	return true
}
