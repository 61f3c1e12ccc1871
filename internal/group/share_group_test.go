package group

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *harness) shareHeartbeat(member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch = "sg", member, epoch
	if topics != nil {
		req.SubscribedTopicNames = topics
	}
	c := new(call[kmsg.ShareGroupHeartbeatResponse])
	h.s.shareGroupHeartbeat(h.now, Client{ID: "client", Host: "/127.0.0.1"}, req, c.respond)
	h.drain()
	if !c.done() {
		h.t.Fatal("share heartbeat not answered")
	}
	return c.resp
}

func shareAssigned(t *testing.T, topics fakeTopics, resp *kmsg.ShareGroupHeartbeatResponse) map[string][]int32 {
	t.Helper()
	if resp.Assignment == nil {
		return nil
	}
	out := map[string][]int32{}
	for _, tp := range resp.Assignment.TopicPartitions {
		name, ok := topics.TopicName(tp.TopicID)
		if !ok {
			t.Fatalf("unknown topic id %x", tp.TopicID)
		}
		out[name] = tp.Partitions
	}
	return out
}

// TestShareGroupHeartbeat: members join with epoch 0, the simple assignor
// spreads six partitions two by two over three members, stale epochs are
// fenced, unknown members refused, and a member that leaves or stops
// heartbeating has its partitions handed to the rest.
func TestShareGroupHeartbeat(t *testing.T) {
	topics := fakeTopics{"t": 6}
	var left []string
	h := newConsumerHarness(t, topics, func(c *Config) {
		c.ShareGroup.OnMemberLeft = func(group, member string) { left = append(left, group+"/"+member) }
	})
	r := h.shareHeartbeat("a", 0, "t")
	if r.ErrorCode != 0 || r.MemberEpoch != 1 || len(shareAssigned(t, topics, r)["t"]) != 6 {
		t.Fatalf("first join: %+v", r)
	}
	rb := h.shareHeartbeat("b", 0, "t")
	rc := h.shareHeartbeat("c", 0, "t")
	if rc.MemberEpoch != 3 {
		t.Fatalf("third join epoch %d, want 3", rc.MemberEpoch)
	}
	// a and b learn their new assignments on their next heartbeats, sent
	// with the epochs they have.
	ra := h.shareHeartbeat("a", 1)
	rb = h.shareHeartbeat("b", rb.MemberEpoch)
	if ra.ErrorCode != 0 || rb.ErrorCode != 0 || ra.MemberEpoch != 3 || rb.MemberEpoch != 3 {
		t.Fatalf("catching up: %+v %+v", ra, rb)
	}
	if len(shareAssigned(t, topics, ra)["t"]) != 2 {
		t.Fatalf("a at epoch 3: %+v", ra)
	}
	g := h.s.groups["sg"].(*shareGroup)
	seen := map[int32]int{}
	for _, id := range []string{"a", "b", "c"} {
		m := g.members[id]
		ps := m.assigned[topicIDOf("t")]
		if len(ps) != 2 {
			t.Fatalf("member %s has %v, want 2 partitions", id, ps)
		}
		for _, p := range ps {
			seen[p]++
		}
		if m.memberEpoch != 3 {
			t.Fatalf("member %s epoch %d", id, m.memberEpoch)
		}
	}
	if len(seen) != 6 {
		t.Fatalf("partitions covered: %v", seen)
	}
	// a is at 3 having been at 1: 1 is still accepted (a lost response),
	// 2 is not.
	if r := h.shareHeartbeat("a", 2); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("stale epoch: %+v", r)
	}
	if again := h.shareHeartbeat("a", 3); again.Assignment != nil || again.MemberEpoch != 3 {
		t.Fatalf("keepalive resends the assignment: %+v", again)
	}
	if r := h.shareHeartbeat("zz", 5); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %+v", r)
	}
	if r := h.shareHeartbeat("d", 0); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("join without topics: %+v", r)
	}
	if r := h.shareHeartbeat("c", -1); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", r)
	}
	if !slices.Equal(left, []string{"sg/c"}) {
		t.Fatalf("left: %v", left)
	}
	// b stops heartbeating: after the session timeout a owns all six.
	for range 10 {
		h.advance(5 * time.Second)
		ra = h.shareHeartbeat("a", g.members["a"].memberEpoch)
	}
	if g.members["b"] != nil || len(g.members["a"].assigned[topicIDOf("t")]) != 6 {
		t.Fatalf("after b's session: %+v", g.members)
	}
	// The group survives a reload with its epoch; members rejoin.
	epoch := g.groupEpoch
	h.reload()
	g2, ok := h.s.groups["sg"].(*shareGroup)
	if !ok || g2.groupEpoch != epoch || len(g2.members) != 0 {
		t.Fatalf("reloaded: %+v", h.s.groups["sg"])
	}
	if r := h.shareHeartbeat("a", epoch); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("after reload: %+v", r)
	}
	if r := h.shareHeartbeat("a", 0, "t"); r.ErrorCode != 0 || r.MemberEpoch != epoch+1 {
		t.Fatalf("rejoin after reload: %+v", r)
	}
	d := h.s.describeShareGroup("sg")
	if d.ErrorCode != 0 || d.GroupState != "Stable" || len(d.Members) != 1 || d.Members[0].Assignment.TopicPartitions[0].Topic != "t" {
		t.Fatalf("describe: %+v", d)
	}
	// A consumer group id is not a share group.
	h.cgJoin("m", "t")
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = "g", "x", []string{"t"}
	c := new(call[kmsg.ShareGroupHeartbeatResponse])
	h.s.shareGroupHeartbeat(h.now, Client{}, req, c.respond)
	h.drain()
	if c.resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("share heartbeat to a consumer group: %+v", c.resp)
	}
}

// TestSimpleAssignor checks balance and sharing for more members than
// partitions and stickiness when a member joins.
func TestSimpleAssignor(t *testing.T) {
	info := func(n int32) func(string) (topicInfo, bool) {
		return func(string) (topicInfo, bool) { return topicInfo{id: topicIDOf("t"), partitions: n}, true }
	}
	subs := map[string][]string{"a": {"t"}, "b": {"t"}, "c": {"t"}, "d": {"t"}, "e": {"t"}}
	out := simpleAssign([]string{"a", "b", "c", "d", "e"}, subs, nil, info(2))
	holders := map[int32]int{}
	for _, a := range out {
		if n := a.numPartitions(); n < 1 || n > 2 {
			t.Fatalf("5 members over 2 partitions: %v", out)
		}
		for _, p := range a[topicIDOf("t")] {
			holders[p]++
		}
	}
	if holders[0] != 3 || holders[1] != 3 {
		t.Fatalf("sharing: %v", holders)
	}
	before := simpleAssign([]string{"a", "b"}, subs, nil, info(4))
	after := simpleAssign([]string{"a", "b", "c"}, subs, before, info(4))
	kept := 0
	for _, m := range []string{"a", "b"} {
		for _, p := range after[m][topicIDOf("t")] {
			if before[m].contains(topicIDOf("t"), p) {
				kept++
			}
		}
	}
	if kept < 3 {
		t.Fatalf("stickiness: before %v after %v", before, after)
	}
}
