package group

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wordCountTopology is the word count's topology as Kafka Streams sends it:
// subtopology 0 reads "words" and writes the repartition topic, 1 reads it
// and keeps a store with a changelog.
func wordCountTopology(epoch int32) *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = epoch
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{
		{SubtopologyID: "0", SourceTopics: []string{"words"}, RepartitionSinkTopics: []string{"app-repartition"}},
		{SubtopologyID: "1",
			RepartitionSourceTopics: []kmsg.TopicInfo{{Topic: "app-repartition"}},
			StateChangelogTopics:    []kmsg.TopicInfo{{Topic: "app-changelog", Configs: []kmsg.TopicInfoConfig{{Key: "message.timestamp.type", Value: "CreateTime"}}}}},
	}
	return &t
}

// shb is one StreamsGroupHeartbeat; owned nil leaves the task fields null.
type shb struct {
	member   string
	process  string
	epoch    int32
	topology *kmsg.StreamsGroupHeartbeatRequestTopology
	owned    *streamsTasks
	instance string
	// endpoint is the member's endpoint for interactive queries.
	endpoint *kmsg.StreamsGroupHeartbeatRequestUserEndpoint
	// endpointEpoch is the endpoint information epoch the member has.
	endpointEpoch int32
	// offsets and endOffsets are reported task changelog offsets.
	offsets, endOffsets map[string]int64
}

func wireTaskOffsets(m map[string]int64) []kmsg.TaskOffset {
	if m == nil {
		return nil
	}
	out := []kmsg.TaskOffset{}
	for _, name := range sortedKeys(m) {
		for t := range tasksOf(name).each() {
			out = append(out, kmsg.TaskOffset{SubtopologyID: t.subtopology, Partition: t.partition, Offset: m[name]})
		}
	}
	return out
}

type streamsAnswer struct {
	resp     *kmsg.StreamsGroupHeartbeatResponse
	toCreate []StreamsTopicToCreate
}

func (h *harness) sgHeartbeat(r shb) streamsAnswer {
	h.t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = "app", r.member, r.epoch
	if r.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topology = r.topology
		req.ProcessID = stringPtr(r.process)
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	if r.owned != nil {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = taskSetToWire(r.owned.active), taskSetToWire(r.owned.standby), taskSetToWire(r.owned.warmup)
	}
	req.TaskOffsets, req.TaskEndOffsets = wireTaskOffsets(r.offsets), wireTaskOffsets(r.endOffsets)
	if r.instance != "" {
		req.InstanceID = stringPtr(r.instance)
	}
	req.UserEndpoint, req.EndpointInformationEpoch = r.endpoint, r.endpointEpoch
	var out streamsAnswer
	h.s.streamsGroupHeartbeat(h.now, Client{ID: "client", Host: "/127.0.0.1"}, req, func(resp *kmsg.StreamsGroupHeartbeatResponse, tc []StreamsTopicToCreate) {
		out = streamsAnswer{resp, tc}
	})
	h.drain()
	if out.resp == nil {
		h.t.Fatal("heartbeat not answered")
	}
	return out
}

func statusCodes(resp *kmsg.StreamsGroupHeartbeatResponse) []int8 {
	var out []int8
	for _, s := range resp.Status {
		out = append(out, s.StatusCode)
	}
	return out
}

// newStreamsHarness is a harness whose broker has the given topics, with
// no initial rebalance delay (TestStreamsGroupInitialRebalanceDelay has one).
func newStreamsHarness(t *testing.T, topics fakeTopics, configure ...func(*Config)) *harness {
	return newConsumerHarness(t, topics, append([]func(*Config){func(c *Config) { c.StreamsGroup.InitialRebalanceDelayMs = 0 }}, configure...)...)
}

func (h *harness) streamsGroup(id string) *streamsGroup {
	h.t.Helper()
	g, ok := h.s.groups[id].(*streamsGroup)
	if !ok {
		h.t.Fatalf("no streams group %q", id)
	}
	return g
}

// TestStreamsGroupLifecycle: a member joins before the internal topics
// exist (they are returned to be created, no tasks), gets every task once
// they do, shares them with a second member joining (revoked before they
// move), and the group replays from its records to the same state.
func TestStreamsGroupLifecycle(t *testing.T) {
	topics := fakeTopics{"words": 4}
	h := newStreamsHarness(t, topics)

	a := h.sgHeartbeat(shb{member: "a", process: "pa", topology: wordCountTopology(1)})
	if a.resp.ErrorCode != 0 || a.resp.MemberEpoch != 1 || !slices.Equal(statusCodes(a.resp), []int8{streamsStatusMissingInternalTopics}) {
		t.Fatalf("join: %+v", a.resp)
	}
	if len(a.toCreate) != 2 || a.toCreate[0].Name != "app-changelog" || a.toCreate[0].NumPartitions != 4 ||
		a.toCreate[0].Configs["cleanup.policy"] != "compact" || a.toCreate[0].Configs["message.timestamp.type"] != "CreateTime" ||
		a.toCreate[1].Name != "app-repartition" || a.toCreate[1].NumPartitions != 4 || a.toCreate[1].Configs["cleanup.policy"] != "delete" {
		t.Fatalf("topics to create: %+v", a.toCreate)
	}
	if len(a.resp.ActiveTasks) != 0 || h.streamsGroup("app").stateName() != "NotReady" {
		t.Fatalf("tasks before the topics exist: %+v, state %s", a.resp.ActiveTasks, h.streamsGroup("app").stateName())
	}

	topics["app-changelog"], topics["app-repartition"] = 4, 4
	a = h.sgHeartbeat(shb{member: "a", epoch: 1, owned: &streamsTasks{}})
	if a.resp.MemberEpoch != 2 || len(a.resp.Status) != 0 || taskSetFromWire(a.resp.ActiveTasks).size() != 8 {
		t.Fatalf("once the topics exist: %+v", a.resp)
	}
	ownedA := streamsTasks{active: taskSetFromWire(a.resp.ActiveTasks)}

	b := h.sgHeartbeat(shb{member: "b", process: "pb", topology: wordCountTopology(1)})
	if b.resp.MemberEpoch != 3 || taskSetFromWire(b.resp.ActiveTasks).size() != 0 {
		t.Fatalf("b joins: %+v", b.resp)
	}
	if m := h.streamsGroup("app").members["b"]; m.state != memberUnreleasedPartitions {
		t.Fatalf("b is %d, want unreleased while a still owns its tasks", m.state)
	}
	a = h.sgHeartbeat(shb{member: "a", epoch: 2, owned: &ownedA})
	if a.resp.MemberEpoch != 2 || taskSetFromWire(a.resp.ActiveTasks).size() != 4 {
		t.Fatalf("a must revoke half at its epoch: %+v", a.resp)
	}
	ownedA = streamsTasks{active: taskSetFromWire(a.resp.ActiveTasks)}
	a = h.sgHeartbeat(shb{member: "a", epoch: 2, owned: &ownedA})
	if a.resp.MemberEpoch != 3 {
		t.Fatalf("a revoked, moves to epoch 3: %+v", a.resp)
	}
	b = h.sgHeartbeat(shb{member: "b", epoch: 3, owned: &streamsTasks{}})
	if taskSetFromWire(b.resp.ActiveTasks).size() != 4 || !slices.Equal(names(taskSetFromWire(b.resp.ActiveTasks).intersect(ownedA.active)), nil) {
		t.Fatalf("b gets the other half: %+v", b.resp)
	}
	if s := h.streamsGroup("app").stateName(); s != "Stable" {
		t.Fatalf("state %s, want Stable", s)
	}

	// ListGroups knows the type and state; DescribeGroups (classic) and
	// ConsumerGroupDescribe refuse it, DeleteGroups while it has members.
	listed := h.s.listGroups(nil, []string{"Streams"}, nil)
	if len(listed) != 1 || listed[0].Group != "app" || listed[0].GroupType != "streams" || listed[0].GroupState != "Stable" || listed[0].ProtocolType != "streams" {
		t.Fatalf("ListGroups: %+v", listed)
	}
	if l := h.s.listGroups(nil, []string{"consumer"}, nil); len(l) != 0 {
		t.Fatalf("ListGroups of consumer groups: %+v", l)
	}
	if d := h.s.describeGroup(6, "app"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("DescribeGroups: %+v", d)
	}
	if d := h.s.describeConsumerGroup(1, "app"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("ConsumerGroupDescribe: %+v", d)
	}
	var deleted []kmsg.DeleteGroupsResponseGroup
	h.s.deleteGroups(h.now, []string{"app"}, func(r []kmsg.DeleteGroupsResponseGroup) { deleted = r })
	h.drain()
	if deleted[0].ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("DeleteGroups of a group with members: %+v", deleted)
	}
	// A consumer-protocol member cannot take the streams group's id.
	if r := h.cgHeartbeat(hb{group: "app", member: "c", topics: []string{"words"}, rebalanceMs: 30000, ownedEmpty: true}); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat on a streams group: %+v", r)
	}
	if _, ok := h.s.groups["app"].(*streamsGroup); !ok {
		t.Fatal("the consumer heartbeat replaced the streams group")
	}

	// Offset commits carry the member epoch: the current one is accepted.
	if r := h.commit("app", "a", 3, 9, map[string]map[int32]int64{"words": {0: 5}}); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit at the member epoch: %+v", r)
	}
	if r := h.commit("app", "a", 2, 9, map[string]map[int32]int64{"words": {0: 5}}); r.Topics[0].Partitions[0].ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at an old epoch: %+v", r)
	}
	if r := h.commit("app", "nobody", 3, 9, map[string]map[int32]int64{"words": {0: 5}}); r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("commit by an unknown member: %+v", r)
	}
	fetch := kmsg.NewOffsetFetchRequestGroup()
	fetch.Group, fetch.MemberID, fetch.MemberEpoch = "app", stringPtr("a"), 1
	fetch.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "words", Partitions: []int32{0}}}
	if g := h.s.fetchOffsets(9, &fetch); g.ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("offset fetch at an old epoch: %+v", g)
	}
	fetch.MemberEpoch = 3
	if g := h.s.fetchOffsets(9, &fetch); g.ErrorCode != 0 || g.Topics[0].Partitions[0].Offset != 5 {
		t.Fatalf("offset fetch at the member epoch: %+v", g)
	}

	before := h.s.describeStreamsGroup(&kmsg.StreamsGroupDescribeRequest{Version: 1}, "app")
	h.reload()
	after := h.s.describeStreamsGroup(&kmsg.StreamsGroupDescribeRequest{Version: 1}, "app")
	if before.State != after.State || before.Epoch != after.Epoch || len(after.Members) != 2 ||
		!taskSetFromWire(before.Members[0].Assignment.ActiveTasks).equal(taskSetFromWire(after.Members[0].Assignment.ActiveTasks)) {
		t.Fatalf("after reload: %+v, before %+v", after, before)
	}

	// b leaves: a gets everything back on its next heartbeats.
	if r := h.sgHeartbeat(shb{member: "b", epoch: -1}); r.resp.ErrorCode != 0 || r.resp.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", r.resp)
	}
	a = h.sgHeartbeat(shb{member: "a", epoch: 3, owned: &ownedA})
	if taskSetFromWire(a.resp.ActiveTasks).size() != 8 {
		t.Fatalf("after b left: %+v", a.resp)
	}
	// The group is deleted once empty, with tombstones.
	h.sgHeartbeat(shb{member: "a", epoch: -1})
	var results []kmsg.DeleteGroupsResponseGroup
	h.s.deleteGroups(h.now, []string{"app"}, func(r []kmsg.DeleteGroupsResponseGroup) { results = r })
	h.drain()
	if results[0].ErrorCode != 0 || h.s.groups["app"] != nil {
		t.Fatalf("delete: %+v", results)
	}
	h.reload()
	if h.s.groups["app"] != nil {
		t.Fatal("deleted streams group back after reload")
	}
}

// TestStreamsGroupBadInput: Kafka's error codes for bad heartbeats, and
// the group keeps working.
func TestStreamsGroupBadInput(t *testing.T) {
	topics := fakeTopics{"words": 4, "app-changelog": 4, "app-repartition": 4}
	h := newStreamsHarness(t, topics)
	badChangelog := wordCountTopology(1)
	badChangelog.Subtopologies[1].StateChangelogTopics[0].NumPartitions = 3
	other := wordCountTopology(1)
	other.Subtopologies[0].SourceTopics = []string{"lines"}
	for _, c := range []struct {
		name string
		hb   shb
		code int16
	}{
		{"unknown group", shb{member: "x", epoch: 5, owned: &streamsTasks{}}, kerr.GroupIDNotFound.Code},
		{"empty member id", shb{member: "", topology: wordCountTopology(1)}, kerr.InvalidRequest.Code},
		{"join without topology", shb{member: "x"}, kerr.InvalidRequest.Code},
		{"changelog with a partition count", shb{member: "x", topology: badChangelog}, kerr.InvalidRequest.Code},
		{"epoch below -2", shb{member: "x", epoch: -3}, kerr.InvalidRequest.Code},
	} {
		if r := h.sgHeartbeat(c.hb); r.resp.ErrorCode != c.code {
			t.Errorf("%s: error %d, want %d (%v)", c.name, r.resp.ErrorCode, c.code, r.resp.ErrorMessage)
		}
	}
	a := h.sgHeartbeat(shb{member: "a", process: "pa", topology: wordCountTopology(1)})
	if a.resp.ErrorCode != 0 || len(a.toCreate) != 0 {
		t.Fatalf("join: %+v", a.resp)
	}
	h.sgHeartbeat(shb{member: "b", process: "pb", topology: wordCountTopology(1)})
	for _, c := range []struct {
		name string
		hb   shb
		code int16
	}{
		{"epoch ahead", shb{member: "a", epoch: 9, owned: &streamsTasks{}}, kerr.FencedMemberEpoch.Code},
		{"stale epoch", shb{member: "b", epoch: 1, owned: &streamsTasks{}}, kerr.FencedMemberEpoch.Code},
		{"unknown member", shb{member: "z", epoch: 1, owned: &streamsTasks{}}, kerr.UnknownMemberID.Code},
		{"another topology while others run", shb{member: "c", process: "pc", topology: other}, kerr.InvalidRequest.Code},
		{"owned task of an unknown subtopology", shb{member: "a", epoch: a.resp.MemberEpoch, owned: &streamsTasks{active: tasksOf("9_0")}}, kerr.InvalidRequest.Code},
		{"owned task out of range", shb{member: "a", epoch: a.resp.MemberEpoch, owned: &streamsTasks{active: tasksOf("0_7")}}, kerr.InvalidRequest.Code},
	} {
		if r := h.sgHeartbeat(c.hb); r.resp.ErrorCode != c.code {
			t.Errorf("%s: error %d, want %d (%v)", c.name, r.resp.ErrorCode, c.code, r.resp.ErrorMessage)
		}
	}
	// A topology whose source topic is missing reports it and assigns nothing.
	missing := wordCountTopology(1)
	missing.Subtopologies[0].SourceTopics = []string{"nope"}
	h2 := newStreamsHarness(t, fakeTopics{})
	r := h2.sgHeartbeat(shb{member: "m", process: "p", topology: missing})
	if r.resp.ErrorCode != 0 || !slices.Equal(statusCodes(r.resp), []int8{streamsStatusMissingSourceTopics}) || len(r.toCreate) != 0 {
		t.Fatalf("missing source topic: %+v", r.resp)
	}
	// Copartitioned topics of different sizes.
	co := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	co.Epoch = 1
	co.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{SubtopologyID: "0", SourceTopics: []string{"l", "r"},
		CopartitionGroups: []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{{SourceTopics: []int16{0, 1}}}}}
	h3 := newStreamsHarness(t, fakeTopics{"l": 2, "r": 3})
	r = h3.sgHeartbeat(shb{member: "m", process: "p", topology: &co})
	if !slices.Equal(statusCodes(r.resp), []int8{streamsStatusIncorrectlyPartitionedTopics}) {
		t.Fatalf("copartition mismatch: %+v", r.resp)
	}
	// The session timeout removes a silent member.
	h.advance(46 * 1e9)
	h.advance(1e9) // the second removal waits for the first one's write
	if n := len(h.streamsGroup("app").members); n != 0 {
		t.Fatalf("%d members after their sessions expired", n)
	}
}

// TestStreamsGroupWarmups: a process joining without state gets the
// stateful tasks it is to run as warm-ups while their owner keeps them;
// once it reports its changelog offsets within acceptable.recovery.lag the
// group rebalances and they move.
func TestStreamsGroupWarmups(t *testing.T) {
	topics := fakeTopics{"words": 4, "app-changelog": 4, "app-repartition": 4}
	h := newStreamsHarness(t, topics)
	a := h.sgHeartbeat(shb{member: "a", process: "pa", topology: wordCountTopology(1)})
	a = h.sgHeartbeat(shb{member: "a", epoch: a.resp.MemberEpoch, owned: &streamsTasks{}})
	all := streamsTasks{active: taskSetFromWire(a.resp.ActiveTasks)}
	if all.active.size() != 8 {
		t.Fatalf("a: %+v", a.resp)
	}
	stateful := map[string]int64{"1_0": 50000, "1_1": 50000, "1_2": 50000, "1_3": 50000}
	a = h.sgHeartbeat(shb{member: "a", epoch: a.resp.MemberEpoch, owned: &all, offsets: stateful, endOffsets: stateful})

	b := h.sgHeartbeat(shb{member: "b", process: "pb", topology: wordCountTopology(1)})
	target := h.streamsGroup("app").target["b"]
	if names(target.active) != nil && !slices.Equal(names(target.active), []string{"0_2", "0_3"}) || !slices.Equal(names(target.warmup), []string{"1_2", "1_3"}) {
		t.Fatalf("b's target: active %v warmup %v, want the stateless half and warm-ups of 1_2, 1_3", names(target.active), names(target.warmup))
	}
	// a gives up the stateless tasks, b takes them and its warm-ups.
	a = h.sgHeartbeat(shb{member: "a", epoch: a.resp.MemberEpoch, owned: &all})
	kept := streamsTasks{active: taskSetFromWire(a.resp.ActiveTasks)}
	a = h.sgHeartbeat(shb{member: "a", epoch: a.resp.MemberEpoch, owned: &kept})
	b = h.sgHeartbeat(shb{member: "b", epoch: b.resp.MemberEpoch, owned: &streamsTasks{}})
	if !slices.Equal(names(taskSetFromWire(b.resp.WarmupTasks)), []string{"1_2", "1_3"}) {
		t.Fatalf("b's warm-ups: %+v", b.resp.WarmupTasks)
	}
	ownedB := streamsTasks{active: taskSetFromWire(b.resp.ActiveTasks), warmup: taskSetFromWire(b.resp.WarmupTasks)}
	epoch := h.streamsGroup("app").groupEpoch
	// Far behind: nothing moves.
	b = h.sgHeartbeat(shb{member: "b", epoch: b.resp.MemberEpoch, owned: &ownedB, offsets: map[string]int64{"1_2": 0, "1_3": 0}})
	if h.streamsGroup("app").groupEpoch != epoch {
		t.Fatal("a lagging warm-up rebalanced the group")
	}
	// Caught up on 1_2: the group rebalances, 1_2 moves to b.
	b = h.sgHeartbeat(shb{member: "b", epoch: b.resp.MemberEpoch, owned: &ownedB, offsets: map[string]int64{"1_2": 45000, "1_3": 0}})
	if h.streamsGroup("app").groupEpoch != epoch+1 {
		t.Fatal("a caught-up warm-up did not rebalance the group")
	}
	if target := h.streamsGroup("app").target["b"]; !target.active.contains(taskID{"1", 2}) || !slices.Equal(names(target.warmup), []string{"1_3"}) {
		t.Fatalf("after catching up: active %v warmup %v", names(target.active), names(target.warmup))
	}
}

// TestStreamsGroupStaticMembersAndTimeouts: a static member leaving with
// epoch -2 keeps its tasks for a replacement with its instance id; a
// member that does not revoke tasks within its rebalance timeout is
// removed, so that the others get them.
func TestStreamsGroupStaticMembersAndTimeouts(t *testing.T) {
	topics := fakeTopics{"words": 4, "app-changelog": 4, "app-repartition": 4}
	h := newStreamsHarness(t, topics)
	a := h.sgHeartbeat(shb{member: "a", process: "pa", instance: "i-a", topology: wordCountTopology(1)})
	a = h.sgHeartbeat(shb{member: "a", instance: "i-a", epoch: a.resp.MemberEpoch, owned: &streamsTasks{}})
	tasksA := taskSetFromWire(a.resp.ActiveTasks)
	if tasksA.size() != 8 {
		t.Fatalf("a: %+v", a.resp)
	}
	epoch := h.streamsGroup("app").groupEpoch
	if r := h.sgHeartbeat(shb{member: "a", instance: "i-a", epoch: -2}); r.resp.ErrorCode != 0 || r.resp.MemberEpoch != -2 {
		t.Fatalf("static leave: %+v", r.resp)
	}
	// A new member with the instance id takes its place and its tasks,
	// without a rebalance; then the instance id is held again.
	h2 := h.sgHeartbeat(shb{member: "a2", process: "pa", instance: "i-a", topology: wordCountTopology(1)})
	if h2.resp.ErrorCode != 0 || !taskSetFromWire(h2.resp.ActiveTasks).equal(tasksA) || h.streamsGroup("app").groupEpoch != epoch {
		t.Fatalf("replacement: %+v (group epoch %d, was %d)", h2.resp, h.streamsGroup("app").groupEpoch, epoch)
	}
	if h.streamsGroup("app").members["a"] != nil {
		t.Fatal("the replaced member is still there")
	}
	if r := h.sgHeartbeat(shb{member: "a3", process: "pa", instance: "i-a", topology: wordCountTopology(1)}); r.resp.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("a third member with the instance id: %+v", r.resp)
	}
	if r := h.sgHeartbeat(shb{member: "a", instance: "i-a", epoch: h2.resp.MemberEpoch, owned: &streamsTasks{}}); r.resp.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("the old member: %+v", r.resp)
	}

	// b joins; a2 must revoke half, never does, and is removed after its
	// rebalance timeout (30s): b then gets everything.
	owned := streamsTasks{active: tasksA}
	h.sgHeartbeat(shb{member: "a2", instance: "i-a", epoch: h2.resp.MemberEpoch, owned: &owned})
	b := h.sgHeartbeat(shb{member: "b", process: "pb", topology: wordCountTopology(1)})
	r := h.sgHeartbeat(shb{member: "a2", instance: "i-a", epoch: h2.resp.MemberEpoch, owned: &owned})
	if m := h.streamsGroup("app").members["a2"]; m.state != memberUnrevokedPartitions {
		t.Fatalf("a2 is %d, want unrevoked (%+v)", m.state, r.resp)
	}
	h.advance(31 * 1e9)
	if h.streamsGroup("app").members["a2"] != nil {
		t.Fatal("a2 kept its tasks past its rebalance timeout")
	}
	b = h.sgHeartbeat(shb{member: "b", epoch: b.resp.MemberEpoch, owned: &streamsTasks{}})
	if n := taskSetFromWire(b.resp.ActiveTasks).size(); n != 8 {
		t.Fatalf("b after a2 was removed: %d tasks (%+v)", n, b.resp)
	}
}

// TestStreamsGroupEndpoints: members with an endpoint for interactive
// queries learn which input partitions every endpoint serves, when their
// endpoint epoch is behind.
func TestStreamsGroupEndpoints(t *testing.T) {
	topics := fakeTopics{"words": 4, "app-changelog": 4, "app-repartition": 4}
	h := newStreamsHarness(t, topics)
	endpoint := &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "a.example", Port: 7070}
	a := h.sgHeartbeat(shb{member: "a", process: "pa", topology: wordCountTopology(1), endpoint: endpoint})
	if len(a.resp.PartitionsByUserEndpoint) != 1 {
		t.Fatalf("endpoints after the assignment: %+v", a.resp.PartitionsByUserEndpoint)
	}
	e := a.resp.PartitionsByUserEndpoint[0]
	if e.UserEndpoint.Host != "a.example" || e.UserEndpoint.Port != 7070 || len(e.ActivePartitions) != 2 ||
		e.ActivePartitions[0].Topic != "app-repartition" || len(e.ActivePartitions[0].Partitions) != 4 ||
		e.ActivePartitions[1].Topic != "words" || len(e.ActivePartitions[1].Partitions) != 4 {
		t.Fatalf("endpoint partitions: %+v", e)
	}
	owned := streamsTasks{active: taskSetFromWire(a.resp.ActiveTasks)}
	again := h.sgHeartbeat(shb{member: "a", epoch: a.resp.MemberEpoch, owned: &owned, endpointEpoch: a.resp.EndpointInformationEpoch})
	if again.resp.PartitionsByUserEndpoint != nil {
		t.Fatalf("endpoints sent again at the same epoch: %+v", again.resp.PartitionsByUserEndpoint)
	}
}

// TestStreamsGroupReplacesSimpleGroup: a streams application whose id
// holds only committed offsets (an empty classic group) takes the id over
// with the offsets, also after a reload.
func TestStreamsGroupReplacesSimpleGroup(t *testing.T) {
	topics := fakeTopics{"words": 4, "app-changelog": 4, "app-repartition": 4}
	h := newStreamsHarness(t, topics)
	if r := h.commit("app", "", -1, 9, map[string]map[int32]int64{"words": {1: 42}}); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("admin commit: %+v", r)
	}
	if r := h.sgHeartbeat(shb{member: "a", process: "pa", topology: wordCountTopology(1)}); r.resp.ErrorCode != 0 {
		t.Fatalf("join: %+v", r.resp)
	}
	for _, reload := range []bool{false, true} {
		if reload {
			h.reload()
		}
		if _, ok := h.s.groups["app"].(*streamsGroup); !ok || h.cgFetch("app", "words", 1) != 42 {
			t.Fatalf("reload %v: group %T, offset %d", reload, h.s.groups["app"], h.cgFetch("app", "words", 1))
		}
	}
}

// TestStreamsGroupInitialRebalanceDelay: a new group's first assignment
// waits group.streams.initial.rebalance.delay.ms for more members
// (ASSIGNMENT_DELAYED, nothing assigned, a member epoch all the same);
// then the tasks are spread over every member that joined meanwhile.
func TestStreamsGroupInitialRebalanceDelay(t *testing.T) {
	topics := fakeTopics{"words": 4, "app-changelog": 4, "app-repartition": 4}
	h := newConsumerHarness(t, topics)
	a := h.sgHeartbeat(shb{member: "a", process: "pa", topology: wordCountTopology(1)})
	if a.resp.MemberEpoch < 1 || !slices.Equal(statusCodes(a.resp), []int8{streamsStatusAssignmentDelayed}) || len(a.resp.ActiveTasks) != 0 {
		t.Fatalf("first member: %+v", a.resp)
	}
	h.advance(1e9)
	b := h.sgHeartbeat(shb{member: "b", process: "pb", topology: wordCountTopology(1)})
	if !slices.Equal(statusCodes(b.resp), []int8{streamsStatusAssignmentDelayed}) || len(b.resp.ActiveTasks) != 0 {
		t.Fatalf("second member within the delay: %+v", b.resp)
	}
	h.advance(2 * 1e9) // the delay (3s) is over
	a = h.sgHeartbeat(shb{member: "a", epoch: a.resp.MemberEpoch, owned: &streamsTasks{}})
	b = h.sgHeartbeat(shb{member: "b", epoch: b.resp.MemberEpoch, owned: &streamsTasks{}})
	na, nb := taskSetFromWire(a.resp.ActiveTasks).size(), taskSetFromWire(b.resp.ActiveTasks).size()
	if na != 4 || nb != 4 || len(a.resp.Status) != 0 || len(b.resp.Status) != 0 {
		t.Fatalf("after the delay: a %d tasks %+v, b %d tasks %+v", na, a.resp.Status, nb, b.resp.Status)
	}
}
