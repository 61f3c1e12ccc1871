package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// StreamsGroupHeartbeat handles StreamsGroupHeartbeat (API key 88,
// v0-v1); client identifies the connection. The response is sent once the
// records the heartbeat produced are appended, with the internal topics of
// the group's topology that do not exist yet: the caller creates them (as
// Kafka's KafkaApis does), and the group sees them on a later heartbeat.
// When streams groups are not enabled the answer is UNSUPPORTED_VERSION.
func (c *Coordinator) StreamsGroupHeartbeat(client Client, req *kmsg.StreamsGroupHeartbeatRequest, respond func(*kmsg.StreamsGroupHeartbeatResponse, []StreamsTopicToCreate)) {
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = code
		respond(resp, nil)
	}
	if !c.config.StreamsGroup.Enabled {
		fail(kerr.UnsupportedVersion.Code)
		return
	}
	if code := c.run(req.Group, func(s *shard, now time.Time) { s.streamsGroupHeartbeat(now, client, req, respond) }); code != 0 {
		fail(code)
	}
}

// StreamsGroupDescribe handles StreamsGroupDescribe (API key 89, v0-v1).
// Authorized operations are the API handler's to fill in.
func (c *Coordinator) StreamsGroupDescribe(req *kmsg.StreamsGroupDescribeRequest, respond func(*kmsg.StreamsGroupDescribeResponse)) {
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	for _, id := range req.Groups {
		d := kmsg.NewStreamsGroupDescribeResponseGroup()
		d.Group = id
		if id == "" {
			d.ErrorCode = kerr.InvalidGroupID.Code
		} else if code := c.run(id, func(s *shard, _ time.Time) { d = s.describeStreamsGroup(req, id) }); code != 0 {
			d.ErrorCode = code
		}
		resp.Groups = append(resp.Groups, d)
	}
	respond(resp)
}

// describeStreamsGroup answers one group of StreamsGroupDescribe.
// Versions: v1 adds the assignor name and the topology description status
// (NOT_REQUESTED, or NOT_STORED: no topology description plugin).
func (s *shard) describeStreamsGroup(req *kmsg.StreamsGroupDescribeRequest, id string) kmsg.StreamsGroupDescribeResponseGroup {
	d := kmsg.NewStreamsGroupDescribeResponseGroup()
	d.Group = id
	d.Members = []kmsg.StreamsGroupDescribeResponseGroupMember{}
	g, ok := s.groups[id].(*streamsGroup)
	if !ok {
		d.ErrorCode = kerr.GroupIDNotFound.Code
		if s.groups[id] == nil {
			d.ErrorMessage = stringPtr("Group " + id + " not found.")
		} else {
			d.ErrorMessage = stringPtr("Group " + id + " is not a streams group.")
		}
		return d
	}
	d.State = g.stateName()
	d.Epoch = g.groupEpoch
	d.AssignmentEpoch = g.targetAssignmentEpoch
	if req.Version >= 1 {
		d.AssignorName = stringPtr(streamsAssignorSticky)
		if req.IncludeTopologyDescription {
			d.TopologyDescriptionStatus = 1 // NOT_STORED
		}
	}
	if g.topology != nil {
		t := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
		t.Epoch = g.topology.epoch
		if g.validatedTopologyEpoch == g.topology.epoch {
			t.Subtopologies = []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{}
			for _, st := range g.topology.subtopologies {
				ds := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
				ds.SubtopologyID = st.id
				ds.SourceTopics = append([]string{}, st.sourceTopics...)
				ds.RepartitionSinkTopics = append([]string{}, st.repartitionSinkTopics...)
				ds.StateChangelogTopics = topicInfosToWire(st.stateChangelogTopics)
				ds.RepartitionSourceTopics = topicInfosToWire(st.repartitionSourceTopics)
				t.Subtopologies = append(t.Subtopologies, ds)
			}
		}
		d.Topology = &t
	}
	for _, memberID := range g.sortedMemberIDs() {
		m := g.members[memberID]
		dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch, dm.InstanceID, dm.RackID = m.id, m.memberEpoch, m.instanceID, m.rackID
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.TopologyEpoch, dm.ProcessID = m.topologyEpoch, m.processID
		if m.userEndpoint != nil {
			dm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.userEndpoint.host, Port: m.userEndpoint.port}
		}
		dm.ClientTags = []kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{}
		for _, kv := range m.clientTags {
			dm.ClientTags = append(dm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: kv.key, Value: kv.value})
		}
		dm.TaskOffsets, dm.TaskEndOffsets = taskOffsetsToWire(g.taskOffsets[m.id]), taskOffsetsToWire(g.taskEndOffsets[m.id])
		dm.Assignment = streamsAssignmentToWire(m.assigned)
		dm.TargetAssignment = streamsAssignmentToWire(g.target[m.id])
		d.Members = append(d.Members, dm)
	}
	return d
}

func topicInfosToWire(in []streamsTopicInfo) []kmsg.TopicInfo {
	out := make([]kmsg.TopicInfo, 0, len(in))
	for _, t := range in {
		ti := kmsg.NewTopicInfo()
		ti.Topic, ti.NumPartitions, ti.ReplicationFactor = t.name, t.partitions, t.replicationFactor
		for _, c := range t.configs {
			ti.Configs = append(ti.Configs, kmsg.TopicInfoConfig{Key: c.key, Value: c.value})
		}
		out = append(out, ti)
	}
	return out
}

func streamsAssignmentToWire(t streamsTasks) kmsg.StreamsAssignment {
	return kmsg.StreamsAssignment{ActiveTasks: taskSetToWire(t.active), StandbyTasks: taskSetToWire(t.standby), WarmupTasks: taskSetToWire(t.warmup)}
}

// taskOffsetsToWire lists task offsets in task order.
func taskOffsetsToWire(offsets map[taskID]int64) []kmsg.TaskOffset {
	tasks := make([]taskID, 0, len(offsets))
	for t := range offsets {
		tasks = append(tasks, t)
	}
	out := []kmsg.TaskOffset{}
	for t := range taskSetOf(tasks).each() {
		out = append(out, kmsg.TaskOffset{SubtopologyID: t.subtopology, Partition: t.partition, Offset: offsets[t]})
	}
	return out
}
