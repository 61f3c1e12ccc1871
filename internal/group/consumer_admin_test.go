package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestConsumerOffsetCommitValidatesMemberEpoch(t *testing.T) {
	topics := fakeTopics{"t": 2}
	h := newConsumerHarness(t, topics)
	h.stableConsumerGroup(topics, []string{"a", "b"}, "t")
	commit := func(member string, epoch int32, version int16) int16 {
		return h.commit("g", member, epoch, version, map[string]map[int32]int64{"t": {0: 10}}).Topics[0].Partitions[0].ErrorCode
	}
	cases := []struct {
		name    string
		member  string
		epoch   int32
		version int16
		want    int16
	}{
		{"current epoch", "a", 2, 9, 0},
		{"stale epoch", "a", 1, 9, kerr.StaleMemberEpoch.Code},
		{"unknown member", "z", 2, 9, kerr.UnknownMemberID.Code},
		{"old version", "a", 2, 8, kerr.UnsupportedVersion.Code},
		{"admin commit to a group with members", "", -1, 9, kerr.UnknownMemberID.Code},
	}
	for _, c := range cases {
		if got := commit(c.member, c.epoch, c.version); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if h.cgFetch("g", "t", 0) != 10 {
		t.Fatal("commit not stored")
	}

	fetch := func(member *string, epoch int32) int16 {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = "g", member, epoch
		return h.s.fetchOffsets(9, &rg).ErrorCode
	}
	if fetch(stringPtr("a"), 2) != 0 || fetch(stringPtr("a"), 1) != kerr.StaleMemberEpoch.Code ||
		fetch(stringPtr("z"), 2) != kerr.UnknownMemberID.Code || fetch(nil, -1) != 0 {
		t.Fatal("OffsetFetch member validation")
	}

	// Once every member left, an admin may commit again.
	h.cgHeartbeat(hb{member: "a", epoch: leaveMemberEpoch})
	h.cgHeartbeat(hb{member: "b", epoch: leaveMemberEpoch})
	if got := commit("", -1, 9); got != 0 {
		t.Fatalf("admin commit to empty group: %d", got)
	}
}

func TestConsumerGroupAdminAPIs(t *testing.T) {
	topics := fakeTopics{"t": 2, "other": 1}
	h := newConsumerHarness(t, topics, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	h.stableConsumerGroup(topics, []string{"a"}, "t")
	h.stableGroup("classic", 1)

	all := h.s.listGroups(nil, nil, nil)
	if len(all) != 2 || all[1].Group != "g" || all[1].GroupType != "consumer" || all[1].ProtocolType != "consumer" || all[1].GroupState != "Stable" {
		t.Fatalf("%+v", all)
	}
	if got := h.s.listGroups(nil, []string{"CONSUMER"}, nil); len(got) != 1 || got[0].Group != "g" {
		t.Fatalf("type filter: %+v", got)
	}
	if got := h.s.listGroups([]string{"stable"}, []string{"classic"}, nil); len(got) != 1 || got[0].Group != "classic" {
		t.Fatalf("filters: %+v", got)
	}

	// DescribeGroups is the classic protocol's: a consumer group is not found.
	if d := h.s.describeGroup(6, "g"); d.ErrorCode != kerr.GroupIDNotFound.Code || d.State != "Dead" {
		t.Fatalf("%+v", d)
	}
	d := h.s.describeConsumerGroup(1, "g")
	if d.ErrorCode != 0 || d.State != "Stable" || d.Epoch != 1 || d.AssignmentEpoch != 1 || d.AssignorName != "uniform" || len(d.Members) != 1 {
		t.Fatalf("%+v", d)
	}
	m := d.Members[0]
	if m.MemberID != "a" || m.MemberType != 1 || m.ClientHost != "/127.0.0.1" || len(m.Assignment.TopicPartitions) != 1 ||
		m.Assignment.TopicPartitions[0].Topic != "t" || len(m.TargetAssignment.TopicPartitions[0].Partitions) != 2 || m.SubscribedTopics[0] != "t" {
		t.Fatalf("%+v", m)
	}
	if d := h.s.describeConsumerGroup(1, "classic"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("%+v", d)
	}

	// OffsetDelete refuses the topics the group consumes.
	h.commit("g", "a", 1, 9, map[string]map[int32]int64{"t": {0: 1}, "other": {0: 1}})
	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "g"
	del.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}, {Topic: "other", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	c := new(call[kmsg.OffsetDeleteResponse])
	h.s.deleteOffsets(h.now, del, c.respond)
	h.drain()
	if c.resp.ErrorCode != 0 || c.resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || c.resp.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("%+v", c.resp)
	}

	// DeleteGroups refuses a group with members, then deletes it empty.
	deleteGroup := func() int16 {
		var code int16 = -1
		h.s.deleteGroups(h.now, []string{"g"}, func(r []kmsg.DeleteGroupsResponseGroup) { code = r[0].ErrorCode })
		h.drain()
		return code
	}
	if code := deleteGroup(); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("%d", code)
	}
	h.cgHeartbeat(hb{member: "a", epoch: leaveMemberEpoch})
	if code := deleteGroup(); code != 0 {
		t.Fatalf("%d", code)
	}
	if h.s.groups["g"] != nil || h.s.offsets["g"] != nil {
		t.Fatal("group or offsets left")
	}
	h.reload()
	if h.s.groups["g"] != nil || h.s.offsets["g"] != nil {
		t.Fatal("deleted group back after reload")
	}
}

func TestConsumerGroupExpiresWhenEmptyWithoutOffsets(t *testing.T) {
	topics := fakeTopics{"t": 1}
	h := newConsumerHarness(t, topics, func(c *Config) { c.OffsetsRetentionMinutes = 1 })
	h.cgJoin("a", "t")
	h.commit("g", "a", 1, 9, map[string]map[int32]int64{"t": {0: 1}})
	h.cgHeartbeat(hb{member: "a", epoch: leaveMemberEpoch})
	for range 3 {
		h.advance(10 * time.Minute) // offsets.retention.check.interval.ms
	}
	if h.s.groups["g"] != nil {
		t.Fatal("empty consumer group without offsets not cleaned up")
	}
	h.reload()
	if h.s.groups["g"] != nil {
		t.Fatal("cleaned up group back after reload")
	}
}

func TestConsumerProtocolDisabled(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ConsumerGroup.Enabled = false
	c, err := NewCoordinator(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	var resp *kmsg.ConsumerGroupHeartbeatResponse
	c.ConsumerGroupHeartbeat(Client{}, req, func(r *kmsg.ConsumerGroupHeartbeatResponse) { resp = r })
	if resp == nil || resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("%+v", resp)
	}
}
