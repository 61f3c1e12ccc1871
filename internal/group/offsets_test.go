package group

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func partitionCodes(resp *kmsg.OffsetCommitResponse) []int16 {
	var codes []int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes = append(codes, p.ErrorCode)
		}
	}
	return codes
}

func TestSimpleCommitCreatesGroup(t *testing.T) {
	h := newHarness(t)
	if got := h.fetch("simple", "t", 0); got != -1 {
		t.Fatalf("unknown group offset %d, want -1", got)
	}
	resp := h.commit("simple", "", -1, 8, map[string]map[int32]int64{"t": {0: 42, 1: 43}})
	for _, code := range partitionCodes(resp) {
		if code != 0 {
			t.Fatalf("commit: %+v", resp)
		}
	}
	if h.fetch("simple", "t", 0) != 42 || h.fetch("simple", "t", 1) != 43 {
		t.Fatal("offsets not visible")
	}
	g := h.group("simple")
	if g.state != stateEmpty || g.hasProtocolType {
		t.Fatalf("simple group %+v", g)
	}
	if len(h.log) != 2 {
		t.Fatalf("%d records, want 2 offset commits", len(h.log))
	}
}

func TestCommitValidation(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	for _, tc := range []struct {
		name       string
		group, mid string
		generation int32
		version    int16
		want       int16
	}{
		{"empty group id", "", "", -1, 8, kerr.InvalidGroupID.Code},
		{"member of missing group v8", "nope", "m", 1, 8, kerr.IllegalGeneration.Code},
		{"member of missing group v9", "nope", "m", 1, 9, kerr.GroupIDNotFound.Code},
		{"simple commit to active group", "g", "", -1, 8, kerr.UnknownMemberID.Code},
		{"unknown member", "g", "x", 1, 8, kerr.UnknownMemberID.Code},
		{"old generation", "g", ids[1], 0, 8, kerr.IllegalGeneration.Code},
		{"member commit", "g", ids[1], 1, 8, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.commit(tc.group, tc.mid, tc.generation, tc.version, map[string]map[int32]int64{"t": {0: 1}})
			if got := partitionCodes(resp)[0]; got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
	// While the leader's assignment is awaited, commits are refused.
	h.join("g", ids[0], joinOpts{})
	h.join("g", ids[1], joinOpts{})
	if got := partitionCodes(h.commit("g", ids[1], 2, 8, map[string]map[int32]int64{"t": {0: 1}}))[0]; got != kerr.RebalanceInProgress.Code {
		t.Fatalf("commit in CompletingRebalance: %d", got)
	}
}

func TestCommitMetadataTooLarge(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.OffsetMetadataMaxBytes = 4 })
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group = 8, "g"
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	for i, md := range []string{"abcd", "abcde", "éééé"} {
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.Metadata = int32(i), 10, stringPtr(md)
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	c := new(call[kmsg.OffsetCommitResponse])
	h.s.commitOffsets(h.now, req, c.respond)
	h.drain()
	// Lengths count UTF-16 units, as Java's String.length does.
	want := []int16{0, kerr.OffsetMetadataTooLarge.Code, 0}
	for i, code := range partitionCodes(c.resp) {
		if code != want[i] {
			t.Errorf("partition %d: %d, want %d", i, code, want[i])
		}
	}
	if h.fetch("g", "t", 1) != -1 || h.fetch("g", "t", 0) != 10 {
		t.Error("the oversized commit was stored, or the others were not")
	}
}

func TestCommitFailedWrite(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{errors.New("EIO"), kerr.CoordinatorNotAvailable.Code},
		// The acks=-1 append: ISR below min.insync.replicas before or
		// after the write, or replicas too slow to confirm it.
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotEnoughReplicasAfterAppend, kerr.CoordinatorNotAvailable.Code},
		{kerr.RequestTimedOut, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator.Code},
		{kerr.MessageTooLarge, kerr.InvalidCommitOffsetSize.Code},
	} {
		h := newHarness(t)
		h.failWrites = tc.err
		resp := h.commit("g", "", -1, 8, map[string]map[int32]int64{"t": {0: 5}})
		if got := partitionCodes(resp)[0]; got != tc.want {
			t.Errorf("%v: got %d, want %d", tc.err, got, tc.want)
		}
		h.failWrites = nil
		if h.fetch("g", "t", 0) != -1 {
			t.Errorf("%v: failed commit visible", tc.err)
		}
		if h.s.groups["g"] != nil {
			t.Errorf("%v: simple group created by a failed commit", tc.err)
		}
	}
}

func TestFetchAllOffsets(t *testing.T) {
	h := newHarness(t)
	h.commit("g", "", -1, 8, map[string]map[int32]int64{"b": {1: 11, 0: 10}, "a": {0: 1}})
	g := h.s.fetchOffsets(8, &kmsg.OffsetFetchRequestGroup{Group: "g"})
	var got []string
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			got = append(got, t.Topic+string(rune('0'+p.Partition)))
		}
	}
	if strings.Join(got, ",") != "a0,b0,b1" {
		t.Fatalf("fetched %v", got)
	}
	if none := h.s.fetchOffsets(8, &kmsg.OffsetFetchRequestGroup{Group: "none"}); none.ErrorCode != 0 || len(none.Topics) != 0 {
		t.Fatalf("unknown group: %+v", none)
	}
}

func TestCommitWithRetentionExpiresAtItsOwnTime(t *testing.T) {
	h := newHarness(t)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.RetentionTimeMillis = 2, "g", 60000
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: -1}}}}
	h.s.commitOffsets(h.now, req, func(*kmsg.OffsetCommitResponse) {})
	h.drain()
	if h.log[0].Value[1] != 1 {
		t.Fatal("not written as OffsetCommitValue v1")
	}
	h.advance(10 * time.Minute) // the first retention check
	if h.fetch("g", "t", 0) != -1 {
		t.Fatal("offset outlived its own retention")
	}
}

func TestOffsetsOfEmptyGroupExpire(t *testing.T) {
	h := newHarness(t)
	h.memberOpts = joinOpts{sessionMs: 30 * 60 * 1000}
	ids := h.stableGroup("g", 1)
	h.commit("g", ids[0], 1, 8, map[string]map[int32]int64{"t1": {0: 7}})
	// While the group is stable and consumes t1, its offsets stay.
	for range 7 * 24 * 6 {
		if code := h.heartbeat("g", ids[0], 1); code != 0 {
			t.Fatalf("heartbeat %d", code)
		}
		h.advance(10 * time.Minute)
	}
	if h.fetch("g", "t1", 0) != 7 {
		t.Fatal("offset of an active group expired")
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.Members = 3, "g", []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}}
	h.s.leaveGroup(h.now, leave, func(*kmsg.LeaveGroupResponse) {})
	h.drain()
	h.advance(7*24*time.Hour - time.Hour)
	if h.fetch("g", "t1", 0) != 7 {
		t.Fatal("expired before offsets.retention.minutes")
	}
	before := len(h.log)
	h.advance(time.Hour)
	if h.fetch("g", "t1", 0) != -1 {
		t.Fatal("not expired")
	}
	if h.s.groups["g"] != nil {
		t.Fatal("empty group without offsets not deleted")
	}
	// An offset tombstone, then the group's.
	if len(h.log) != before+2 || h.log[before].Value != nil || h.log[before+1].Value != nil {
		t.Fatalf("records %+v", h.log[before:])
	}
}

func TestOffsetDelete(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 1) // subscribed to t1
	h.commit("g", ids[0], 1, 8, map[string]map[int32]int64{"t1": {0: 1}, "old": {0: 2}})
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "g"
	req.Topics = []kmsg.OffsetDeleteRequestTopic{
		{Topic: "t1", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
		{Topic: "old", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
	}
	c := new(call[kmsg.OffsetDeleteResponse])
	h.s.deleteOffsets(h.now, req, c.respond)
	h.drain()
	if c.resp.ErrorCode != 0 || c.resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || c.resp.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("%+v", c.resp)
	}
	if h.fetch("g", "old", 0) != -1 || h.fetch("g", "t1", 0) != 1 {
		t.Fatal("wrong offsets deleted")
	}
	for _, tc := range []struct {
		group string
		setup func()
		want  int16
	}{
		{"", nil, kerr.InvalidGroupID.Code},
		{"none", nil, kerr.GroupIDNotFound.Code},
		{"connect", func() { h.stableGroupOfType("connect") }, kerr.NonEmptyGroup.Code},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Group = tc.group
		c := new(call[kmsg.OffsetDeleteResponse])
		h.s.deleteOffsets(h.now, r, c.respond)
		h.drain()
		if c.resp.ErrorCode != tc.want {
			t.Errorf("group %q: %d, want %d", tc.group, c.resp.ErrorCode, tc.want)
		}
	}
}

// stableGroupOfType forms group "connect" of one member of a non-consumer
// protocol type.
func (h *harness) stableGroupOfType(protocolType string) {
	h.t.Helper()
	first := h.join(protocolType, "", joinOpts{protoType: protocolType})
	c := h.join(protocolType, first.resp.MemberID, joinOpts{protoType: protocolType})
	h.advance(3 * time.Second)
	if !c.done() {
		h.t.Fatal("join")
	}
}

func TestTopicsDeleted(t *testing.T) {
	h := newHarness(t)
	h.commit("g1", "", -1, 8, map[string]map[int32]int64{"gone": {0: 1, 1: 1}, "kept": {0: 1}})
	h.commit("g2", "", -1, 8, map[string]map[int32]int64{"gone": {3: 1}})
	h.s.deleteTopics([]string{"gone"})
	h.drain()
	if h.fetch("g1", "gone", 0) != -1 || h.fetch("g2", "gone", 3) != -1 || h.fetch("g1", "kept", 0) != 1 {
		t.Fatal("wrong offsets deleted")
	}
}
