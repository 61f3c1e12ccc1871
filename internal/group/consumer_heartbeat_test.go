package group

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestConsumerFirstMemberGetsEveryPartition(t *testing.T) {
	topics := fakeTopics{"t": 4}
	h := newConsumerHarness(t, topics)
	r := h.cgJoin("a", "t")
	if r.ErrorCode != 0 || *r.MemberID != "a" || r.MemberEpoch != 1 || r.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("%+v", r)
	}
	if got := assigned(t, topics, r); !slices.Equal(got["t"], []int32{0, 1, 2, 3}) {
		t.Fatalf("assignment %v", got)
	}
	// Kafka's record order: member, subscription metadata, group epoch,
	// target member, target epoch, current assignment.
	var types []int16
	for _, kv := range h.log {
		types = append(types, consumerRecordKind(kv.Key))
	}
	want := []int16{5, 4, 3, 7, 6, 8}
	if !slices.Equal(types, want) {
		t.Fatalf("record types %v, want %v", types, want)
	}
	g := h.consumerGroup("g")
	if g.state() != consumerGroupStable || g.groupEpoch != 1 || g.targetAssignmentEpoch != 1 {
		t.Fatalf("group %s epoch %d target %d", g.state(), g.groupEpoch, g.targetAssignmentEpoch)
	}
	// A keepalive changes nothing and carries no assignment.
	n := len(h.log)
	r = h.cgHeartbeat(hb{member: "a", epoch: 1})
	if r.ErrorCode != 0 || r.MemberEpoch != 1 || r.Assignment != nil || len(h.log) != n {
		t.Fatalf("keepalive %+v, %d new records", r, len(h.log)-n)
	}
}

// The heart of KIP-848: a partition moves to a new member only after its
// previous owner acknowledged revoking it.
func TestConsumerRevocationBeforeReassignment(t *testing.T) {
	topics := fakeTopics{"t": 4}
	h := newConsumerHarness(t, topics)
	h.cgJoin("a", "t")

	rb := h.cgJoin("b", "t")
	if rb.ErrorCode != 0 || rb.MemberEpoch != 2 || len(assigned(t, topics, rb)["t"]) != 0 {
		t.Fatalf("b joined with %+v, assignment %v", rb, assigned(t, topics, rb))
	}
	if st := h.member("g", "b").state; st != memberUnreleasedPartitions {
		t.Fatalf("b is %d, want unreleased partitions", st)
	}
	// a still owns everything: it keeps epoch 1 and is told to revoke.
	ra := h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": {0, 1, 2, 3}}})
	aKeeps := assigned(t, topics, ra)["t"]
	if ra.ErrorCode != 0 || ra.MemberEpoch != 1 || len(aKeeps) != 2 {
		t.Fatalf("a: %+v %v", ra, aKeeps)
	}
	if h.member("g", "a").state != memberUnrevokedPartitions || h.consumerGroup("g").state() != consumerGroupReconciling {
		t.Fatal("a should be revoking")
	}
	// b gets nothing while a still owns the partitions.
	rb = h.cgHeartbeat(hb{member: "b", epoch: 2, ownedEmpty: true})
	if rb.ErrorCode != 0 || len(assigned(t, topics, rb)["t"]) != 0 {
		t.Fatalf("b got partitions before they were revoked: %v", assigned(t, topics, rb))
	}
	// a acknowledges the revocation by owning only what it keeps.
	ra = h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": aKeeps}})
	if ra.ErrorCode != 0 || ra.MemberEpoch != 2 {
		t.Fatalf("a after revoking: %+v", ra)
	}
	rb = h.cgHeartbeat(hb{member: "b", epoch: 2, ownedEmpty: true})
	bGets := assigned(t, topics, rb)["t"]
	if rb.ErrorCode != 0 || rb.MemberEpoch != 2 || len(bGets) != 2 {
		t.Fatalf("b: %+v %v", rb, bGets)
	}
	all := append(slices.Clone(aKeeps), bGets...)
	slices.Sort(all)
	if !slices.Equal(all, []int32{0, 1, 2, 3}) {
		t.Fatalf("a %v and b %v do not split the topic", aKeeps, bGets)
	}
	if h.consumerGroup("g").state() != consumerGroupStable {
		t.Fatalf("group %s", h.consumerGroup("g").state())
	}
}

func TestConsumerLeaveHandsPartitionsToOthers(t *testing.T) {
	topics := fakeTopics{"t": 4}
	h := newConsumerHarness(t, topics)
	owned := h.stableConsumerGroup(topics, []string{"a", "b"}, "t")
	r := h.cgHeartbeat(hb{member: "a", epoch: leaveMemberEpoch})
	if r.ErrorCode != 0 || r.MemberEpoch != -1 || *r.MemberID != "a" {
		t.Fatalf("leave %+v", r)
	}
	g := h.consumerGroup("g")
	if g.members["a"] != nil || g.groupEpoch != 3 || len(g.partitionEpochs) != 2 {
		t.Fatalf("after leave: members %v epoch %d", slices.Collect(maps.Keys(g.members)), g.groupEpoch)
	}
	r = h.cgHeartbeat(hb{member: "b", epoch: 2, owned: owned["b"]})
	if r.MemberEpoch != 3 || !slices.Equal(assigned(t, topics, r)["t"], []int32{0, 1, 2, 3}) {
		t.Fatalf("b after a left: %+v %v", r, assigned(t, topics, r))
	}
	// Heartbeats of the departed member fail.
	if r := h.cgHeartbeat(hb{member: "a", epoch: 2}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("%+v", r)
	}
}

func TestConsumerSessionTimeoutRemovesMember(t *testing.T) {
	topics := fakeTopics{"t": 2}
	h := newConsumerHarness(t, topics)
	owned := h.stableConsumerGroup(topics, []string{"a", "b"}, "t")
	for range 8 {
		h.advance(5 * time.Second)
		h.cgHeartbeat(hb{member: "a", epoch: 2, owned: owned["a"]})
	}
	// 40s: b has not heartbeat since t=0; its session is 45s.
	if h.consumerGroup("g").members["b"] == nil {
		t.Fatal("b removed before its session timeout")
	}
	h.advance(5 * time.Second)
	g := h.consumerGroup("g")
	if g.members["b"] != nil || g.groupEpoch != 3 {
		t.Fatalf("b not removed: epoch %d", g.groupEpoch)
	}
	r := h.cgHeartbeat(hb{member: "a", epoch: 2, owned: owned["a"]})
	if r.MemberEpoch != 3 || len(assigned(t, topics, r)["t"]) != 2 {
		t.Fatalf("%+v", r)
	}
}

func TestConsumerRebalanceTimeoutFencesMemberThatDoesNotRevoke(t *testing.T) {
	topics := fakeTopics{"t": 4}
	h := newConsumerHarness(t, topics)
	h.cgHeartbeat(hb{member: "a", topics: []string{"t"}, rebalanceMs: 10000, ownedEmpty: true})
	h.cgJoin("b", "t")
	h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": {0, 1, 2, 3}}})
	if h.member("g", "a").state != memberUnrevokedPartitions {
		t.Fatal("a should be revoking")
	}
	h.advance(9 * time.Second)
	h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": {0, 1, 2, 3}}})
	h.cgHeartbeat(hb{member: "b", epoch: 2})
	h.advance(time.Second)
	if h.consumerGroup("g").members["a"] != nil {
		t.Fatal("a kept its partitions past its rebalance timeout")
	}
	r := h.cgHeartbeat(hb{member: "b", epoch: 2, ownedEmpty: true})
	if r.MemberEpoch != 3 || len(assigned(t, topics, r)["t"]) != 4 {
		t.Fatalf("%+v", r)
	}
}

func TestConsumerMemberEpochValidation(t *testing.T) {
	topics := fakeTopics{"t": 4}
	h := newConsumerHarness(t, topics)
	h.cgJoin("a", "t")
	h.cgJoin("b", "t") // bumps the group to epoch 2; a stays at 1 until it revokes
	ra := h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": {0, 1, 2, 3}}})
	keep := assigned(t, topics, ra)["t"]
	h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": keep}}) // a at epoch 2, previous 1

	cases := []struct {
		name  string
		epoch int32
		owned map[string][]int32
		want  int16
	}{
		{"ahead", 3, nil, kerr.FencedMemberEpoch.Code},
		{"rejoin with epoch 0", 0, nil, 0}, // a fenced member rejoining (KAFKA-19233)
		{"previous epoch owning a subset", 1, map[string][]int32{"t": keep[:1]}, 0},
		{"previous epoch owning more", 1, map[string][]int32{"t": {0, 1, 2, 3}}, kerr.FencedMemberEpoch.Code},
		{"previous epoch without owned", 1, nil, kerr.FencedMemberEpoch.Code},
	}
	for _, c := range cases {
		r := h.cgHeartbeat(hb{member: "a", epoch: c.epoch, owned: c.owned, ownedEmpty: c.epoch == 0, topics: topicsIf(c.epoch == 0, "t"), rebalanceMs: rebalanceIf(c.epoch == 0)})
		if r.ErrorCode != c.want {
			t.Errorf("%s: error %d, want %d (%v)", c.name, r.ErrorCode, c.want, r.ErrorMessage)
		}
	}
	if r := h.cgHeartbeat(hb{member: "nobody", epoch: 2}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member: %+v", r)
	}
	if r := h.cgHeartbeat(hb{group: "other", member: "a", epoch: 2}); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("unknown group: %+v", r)
	}
}

func topicsIf(ok bool, topics ...string) []string {
	if ok {
		return topics
	}
	return nil
}

func rebalanceIf(ok bool) int32 {
	if ok {
		return 30000
	}
	return 0
}

func TestConsumerHeartbeatValidation(t *testing.T) {
	h := newConsumerHarness(t, fakeTopics{"t": 1})
	empty := ""
	cases := []struct {
		name string
		hb   hb
		want int16
	}{
		{"v1 without member id", hb{topics: []string{"t"}, rebalanceMs: 1, ownedEmpty: true}, kerr.InvalidRequest.Code},
		{"join without rebalance timeout", hb{member: "m", topics: []string{"t"}, ownedEmpty: true}, kerr.InvalidRequest.Code},
		{"join owning partitions", hb{member: "m", topics: []string{"t"}, rebalanceMs: 1, owned: map[string][]int32{"t": {0}}}, kerr.InvalidRequest.Code},
		{"join with owned null", hb{member: "m", topics: []string{"t"}, rebalanceMs: 1}, kerr.InvalidRequest.Code},
		{"join without subscription", hb{member: "m", rebalanceMs: 1, ownedEmpty: true}, kerr.InvalidRequest.Code},
		{"static leave without instance", hb{member: "m", epoch: -2}, kerr.InvalidRequest.Code},
		{"epoch below -2", hb{member: "m", epoch: -3}, kerr.InvalidRequest.Code},
		{"unknown assignor", hb{member: "m", topics: []string{"t"}, rebalanceMs: 1, ownedEmpty: true, assignor: "sticky"}, kerr.UnsupportedAssignor.Code},
		{"invalid regex", hb{member: "m", regex: stringPtr("t("), rebalanceMs: 1, ownedEmpty: true}, kerr.InvalidRegularExpression.Code},
		{"regex v1 empty means none", hb{member: "m", regex: &empty, rebalanceMs: 1, ownedEmpty: true}, 0},
	}
	for _, c := range cases {
		if r := h.cgHeartbeat(c.hb); r.ErrorCode != c.want {
			t.Errorf("%s: error %d, want %d (%v)", c.name, r.ErrorCode, c.want, r.ErrorMessage)
		}
	}
	// v0 lets the coordinator choose the member id.
	r := h.cgHeartbeat(hb{v0: true, topics: []string{"t"}, rebalanceMs: 1, ownedEmpty: true})
	if r.ErrorCode != 0 || r.MemberID == nil || *r.MemberID == "" {
		t.Fatalf("v0 join: %+v", r)
	}
}

func TestConsumerGroupMaxSize(t *testing.T) {
	h := newConsumerHarness(t, fakeTopics{"t": 1}, func(c *Config) { c.ConsumerGroup.MaxSize = 1 })
	h.cgJoin("a", "t")
	if r := h.cgJoin("b", "t"); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("%+v", r)
	}
	if r := h.cgHeartbeat(hb{member: "a", epoch: 1}); r.ErrorCode != 0 {
		t.Fatalf("existing member refused: %+v", r)
	}
}

func TestConsumerStaticMemberLeavesAndReturns(t *testing.T) {
	topics := fakeTopics{"t": 4}
	h := newConsumerHarness(t, topics)
	join := func(member, instance string) *hbResult {
		r := h.cgHeartbeat(hb{member: member, instance: instance, topics: []string{"t"}, rebalanceMs: 30000, ownedEmpty: true})
		return &hbResult{r.ErrorCode, r.MemberEpoch, assigned(t, topics, r)}
	}
	a := join("a1", "inst-a")
	join("b", "")
	owned := map[string][]int32{"t": {0, 1, 2, 3}}
	ra := h.cgHeartbeat(hb{member: "a1", instance: "inst-a", epoch: a.epoch, owned: owned})
	keep := assigned(t, topics, ra)["t"]
	ra = h.cgHeartbeat(hb{member: "a1", instance: "inst-a", epoch: a.epoch, owned: map[string][]int32{"t": keep}})
	epoch := h.consumerGroup("g").groupEpoch

	// Another process with the same instance id cannot join while a1 holds it.
	if r := join("a2", "inst-a"); r.code != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("%+v", r)
	}
	r := h.cgHeartbeat(hb{member: "a1", instance: "inst-a", epoch: leaveStaticMemberEpoch})
	if r.ErrorCode != 0 || r.MemberEpoch != -2 {
		t.Fatalf("static leave %+v", r)
	}
	if h.consumerGroup("g").groupEpoch != epoch {
		t.Fatal("a temporary leave of a static member must not rebalance")
	}
	// The instance comes back under a new member id and gets its
	// partitions back without a rebalance.
	back := join("a2", "inst-a")
	if back.code != 0 || !slices.Equal(back.assignment["t"], keep) || h.consumerGroup("g").groupEpoch != epoch {
		t.Fatalf("rejoin %+v, kept %v, epoch %d -> %d", back, keep, epoch, h.consumerGroup("g").groupEpoch)
	}
	if g := h.consumerGroup("g"); g.members["a1"] != nil || g.staticMembers["inst-a"] != "a2" {
		t.Fatal("a1 not replaced by a2")
	}
	// The replaced member is fenced.
	if r := h.cgHeartbeat(hb{member: "a1", instance: "inst-a", epoch: ra.MemberEpoch}); r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("%+v", r)
	}
}

type hbResult struct {
	code       int16
	epoch      int32
	assignment map[string][]int32
}

func TestConsumerStaticMemberSessionExpiresAfterLeaving(t *testing.T) {
	topics := fakeTopics{"t": 2}
	h := newConsumerHarness(t, topics)
	h.cgHeartbeat(hb{member: "a", instance: "i", topics: []string{"t"}, rebalanceMs: 30000, ownedEmpty: true})
	h.cgHeartbeat(hb{member: "a", instance: "i", epoch: leaveStaticMemberEpoch})
	h.advance(45 * time.Second)
	if g := h.consumerGroup("g"); len(g.members) != 0 || len(g.staticMembers) != 0 || g.state() != consumerGroupEmpty {
		t.Fatalf("static member kept after its session: %d members", len(g.members))
	}
}

func TestConsumerRangeAssignorChosenByMembers(t *testing.T) {
	topics := fakeTopics{"t1": 3, "t2": 3}
	h := newConsumerHarness(t, topics)
	for _, m := range []string{"a", "b"} {
		h.cgHeartbeat(hb{member: m, topics: []string{"t1", "t2"}, assignor: "range", rebalanceMs: 30000, ownedEmpty: true})
	}
	g := h.consumerGroup("g")
	ta, tb := g.target["a"], g.target["b"]
	// Range gives each member the same partition numbers of co-partitioned
	// topics.
	if !slices.Equal(ta[topicIDOf("t1")], ta[topicIDOf("t2")]) || !slices.Equal(tb[topicIDOf("t1")], tb[topicIDOf("t2")]) {
		t.Fatalf("not co-partitioned: a %v b %v", ta, tb)
	}
	if ta.numPartitions()+tb.numPartitions() != 6 || ta.numPartitions() != 4 {
		t.Fatalf("a %v b %v", ta, tb)
	}
	d := h.s.describeConsumerGroup(1, "g")
	if d.AssignorName != "range" {
		t.Fatalf("assignor %q", d.AssignorName)
	}
}

func TestConsumerRegexSubscription(t *testing.T) {
	topics := fakeTopics{"orders-eu": 2, "orders-us": 2, "payments": 2}
	h := newConsumerHarness(t, topics)
	r := h.cgHeartbeat(hb{member: "a", regex: stringPtr("orders-.*"), rebalanceMs: 30000, ownedEmpty: true})
	got := assigned(t, topics, r)
	if r.ErrorCode != 0 || len(got) != 2 || len(got["orders-eu"]) != 2 || len(got["orders-us"]) != 2 {
		t.Fatalf("%+v %v", r, got)
	}
	// The regex must match the whole name.
	r = h.cgHeartbeat(hb{member: "b", regex: stringPtr("pay"), rebalanceMs: 30000, ownedEmpty: true})
	if len(assigned(t, topics, r)) != 0 {
		t.Fatalf("partial match assigned %v", assigned(t, topics, r))
	}
	// A topic created later is picked up at the next refresh.
	topics["orders-jp"] = 1
	h.advance(10 * time.Second)
	r = h.cgHeartbeat(hb{member: "a", epoch: h.member("g", "a").memberEpoch, owned: got})
	if _, ok := assigned(t, topics, r)["orders-jp"]; !ok {
		t.Fatalf("new topic not assigned: %v", assigned(t, topics, r))
	}
	if !h.consumerGroup("g").isSubscribedToTopic("orders-jp") || h.consumerGroup("g").isSubscribedToTopic("payments") {
		t.Fatal("subscribed topics wrong")
	}
}

func TestConsumerPartitionsAddedRebalance(t *testing.T) {
	topics := fakeTopics{"t": 2}
	h := newConsumerHarness(t, topics)
	r := h.cgJoin("a", "t")
	topics["t"] = 3
	r = h.cgHeartbeat(hb{member: "a", epoch: r.MemberEpoch, owned: assigned(t, topics, r)})
	if r.MemberEpoch != 2 || len(assigned(t, topics, r)["t"]) != 3 {
		t.Fatalf("%+v %v", r, assigned(t, topics, r))
	}
}

func TestConsumerGroupReload(t *testing.T) {
	topics := fakeTopics{"t": 4, "u": 1}
	h := newConsumerHarness(t, topics)
	owned := h.stableConsumerGroup(topics, []string{"a", "b"}, "t")
	h.cgHeartbeat(hb{member: "s", instance: "inst", regex: stringPtr("u"), rebalanceMs: 1000, ownedEmpty: true})
	before := h.consumerGroup("g")
	h.reload()
	after := h.consumerGroup("g")
	if after.groupEpoch != before.groupEpoch || after.targetAssignmentEpoch != before.targetAssignmentEpoch ||
		len(after.members) != 3 || after.staticMembers["inst"] != "s" || !maps.Equal(after.partitionEpochs, before.partitionEpochs) ||
		!equalTopicInfos(after.subscriptionMetadata, before.subscriptionMetadata) || len(after.resolvedRegexes) != 1 {
		t.Fatalf("reloaded group differs")
	}
	for id, m := range before.members {
		if !after.members[id].sameMetadata(m) || !after.members[id].sameAssignment(m) || !after.target[id].equal(before.target[id]) {
			t.Fatalf("member %s differs after reload", id)
		}
	}
	// Members carry on after the reload, and their sessions restarted.
	r := h.cgHeartbeat(hb{member: "a", epoch: h.member("g", "a").memberEpoch, owned: owned["a"]})
	if r.ErrorCode != 0 {
		t.Fatalf("%+v", r)
	}
	h.advance(45 * time.Second)
	// Members expiring at once are removed one write after the other.
	h.advance(time.Millisecond)
	h.advance(time.Millisecond)
	if len(h.consumerGroup("g").members) != 0 {
		t.Fatal("sessions not restarted on load")
	}
}

func TestConsumerGroupAndClassicGroupIDs(t *testing.T) {
	topics := fakeTopics{"t": 1}
	h := newConsumerHarness(t, topics, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	// A classic group with members cannot be joined with the consumer protocol.
	h.stableGroup("classic", 1)
	if r := h.cgHeartbeat(hb{group: "classic", member: "m", topics: []string{"t"}, rebalanceMs: 1, ownedEmpty: true}); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("%+v", r)
	}
	// A group holding only offsets becomes a consumer group, offsets kept.
	h.commit("simple", "", -1, 9, map[string]map[int32]int64{"t": {0: 7}})
	if r := h.cgHeartbeat(hb{group: "simple", member: "m", topics: []string{"t"}, rebalanceMs: 1, ownedEmpty: true}); r.ErrorCode != 0 {
		t.Fatalf("%+v", r)
	}
	if h.cgFetch("simple", "t", 0) != 7 {
		t.Fatal("offsets lost converting the group")
	}
	// A classic member cannot join a consumer group with members...
	if c := h.join("simple", "", joinOpts{version: 3}); c.resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("%+v", c.resp)
	}
	// ...but takes over an empty one.
	h.cgHeartbeat(hb{group: "simple", member: "m", epoch: leaveMemberEpoch})
	if c := h.join("simple", "", joinOpts{version: 3}); c.resp != nil && c.resp.ErrorCode != 0 {
		t.Fatalf("%+v", c.resp)
	}
	if h.s.classic("simple") == nil || h.cgFetch("simple", "t", 0) != 7 {
		t.Fatal("empty consumer group not replaced by a classic one with its offsets")
	}
	h.reload()
	if h.s.classic("simple") == nil || h.cgFetch("simple", "t", 0) != 7 {
		t.Fatal("replacement lost on reload")
	}
}

func TestConsumerHeartbeatWriteFailureChangesNothing(t *testing.T) {
	topics := fakeTopics{"t": 2}
	h := newConsumerHarness(t, topics)
	h.failWrites = kerr.NotLeaderForPartition
	if r := h.cgJoin("a", "t"); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("%+v", r)
	}
	if h.s.groups["g"] != nil {
		t.Fatal("group created although its records were not written")
	}
	h.failWrites = nil
	if r := h.cgJoin("a", "t"); r.ErrorCode != 0 || r.MemberEpoch != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestConsumerSubscriptionChangeRevokesDroppedTopic(t *testing.T) {
	topics := fakeTopics{"t": 1, "u": 1}
	h := newConsumerHarness(t, topics)
	r := h.cgJoin("a", "t", "u")
	if len(assigned(t, topics, r)) != 2 {
		t.Fatalf("%v", assigned(t, topics, r))
	}
	// Dropping u: it must be revoked before the member moves on.
	r = h.cgHeartbeat(hb{member: "a", epoch: 1, topics: []string{"t"}, owned: map[string][]int32{"t": {0}, "u": {0}}})
	if got := assigned(t, topics, r); r.MemberEpoch != 1 || len(got) != 1 || got["t"] == nil {
		t.Fatalf("%+v %v", r, got)
	}
	if h.member("g", "a").state != memberUnrevokedPartitions {
		t.Fatal("u not pending revocation")
	}
	r = h.cgHeartbeat(hb{member: "a", epoch: 1, owned: map[string][]int32{"t": {0}}})
	if r.MemberEpoch != 2 || h.consumerGroup("g").state() != consumerGroupStable || h.consumerGroup("g").isSubscribedToTopic("u") {
		t.Fatalf("%+v", r)
	}
}

// BenchmarkConsumerKeepalive is the steady state of a 500-member group:
// heartbeats that change nothing and write no record.
func BenchmarkConsumerKeepalive(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Topics = fakeTopics{"t": 1000}
	s := newShard(0, cfg)
	now := time.UnixMilli(1_700_000_000_000)
	heartbeat := func(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
		var resp *kmsg.ConsumerGroupHeartbeatResponse
		s.consumerGroupHeartbeat(now, Client{ID: "c", Host: "/127.0.0.1"}, req, func(r *kmsg.ConsumerGroupHeartbeatResponse) { resp = r })
		for records := s.nextWrite(); records != nil; records = s.nextWrite() {
			s.writeDone(now, nil)
		}
		deliver(s.takeReplies())
		return resp
	}
	var epoch int32
	for i := range 500 {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID = 1, "g", fmt.Sprintf("m%03d", i)
		req.SubscribedTopicNames, req.RebalanceTimeoutMillis = []string{"t"}, 30000
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		epoch = heartbeat(req).MemberEpoch
	}
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "g", "m499", epoch
	for b.Loop() {
		if r := heartbeat(req); r.ErrorCode != 0 {
			b.Fatalf("%+v", r)
		}
	}
}
