package group

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSyncParksFollowersUntilLeaderAssigns(t *testing.T) {
	h := newHarness(t)
	ids := []string{}
	var joins []*call[kmsg.JoinGroupResponse]
	for range 2 {
		id, c := h.joinNew("g", joinOpts{})
		ids, joins = append(ids, id), append(joins, c)
	}
	h.advance(3 * time.Second)
	h.advance(3 * time.Second)
	if !joins[1].done() {
		t.Fatal("join not complete")
	}
	follower := h.sync("g", ids[1], 1, nil)
	if follower.done() {
		t.Fatal("follower answered before the leader's assignment")
	}
	before := len(h.log)
	leader := h.sync("g", ids[0], 1, map[string][]byte{ids[0]: []byte("A"), ids[1]: []byte("B")})
	if !leader.done() || !follower.done() || string(leader.resp.MemberAssignment) != "A" || string(follower.resp.MemberAssignment) != "B" {
		t.Fatalf("leader=%+v follower=%+v", leader.resp, follower.resp)
	}
	if *follower.resp.Protocol != "range" || *follower.resp.ProtocolType != "consumer" {
		t.Fatalf("protocol not returned: %+v", follower.resp)
	}
	if h.group("g").state != stateStable {
		t.Fatal("not stable")
	}
	// The assignment was persisted before it was handed out.
	if len(h.log) != before+1 {
		t.Fatalf("%d new records", len(h.log)-before)
	}
	r, err := DecodeRecord(h.log[before].Key, h.log[before].Value)
	if err != nil {
		t.Fatal(err)
	}
	v := r.GroupMetadataValue
	if v.Generation != 1 || *v.Leader != ids[0] || *v.Protocol != "range" || len(v.Members) != 2 || string(v.Members[1].Assignment) != "B" || v.Members[0].ClientHost != "/127.0.0.1" {
		t.Fatalf("record %+v", v)
	}
	// A late SyncGroup in Stable gets the current assignment.
	if again := h.sync("g", ids[1], 1, nil); string(again.resp.MemberAssignment) != "B" {
		t.Fatalf("%+v", again.resp)
	}
}

func TestSyncFailedWriteRebalances(t *testing.T) {
	h := newHarness(t)
	id, c := h.joinNew("g", joinOpts{})
	h.advance(3 * time.Second)
	if !c.done() {
		t.Fatal("join")
	}
	h.failWrites = errors.New("disk on fire")
	s := h.sync("g", id, 1, map[string][]byte{id: []byte("A")})
	if !s.done() || s.resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || len(s.resp.MemberAssignment) != 0 {
		t.Fatalf("%+v", s.resp)
	}
	h.failWrites = nil
	if g := h.group("g"); g.state != statePreparingRebalance {
		t.Fatalf("state %s", g.state)
	}
}

func TestSyncErrors(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	other := "roundrobin"
	for _, tc := range []struct {
		name string
		req  func(r *kmsg.SyncGroupRequest)
		want int16
	}{
		{"empty group", func(r *kmsg.SyncGroupRequest) { r.Group = "" }, kerr.InvalidGroupID.Code},
		{"unknown group", func(r *kmsg.SyncGroupRequest) { r.Group = "nope" }, kerr.UnknownMemberID.Code},
		{"unknown member", func(r *kmsg.SyncGroupRequest) { r.MemberID = "nope" }, kerr.UnknownMemberID.Code},
		{"old generation", func(r *kmsg.SyncGroupRequest) { r.Generation = 0 }, kerr.IllegalGeneration.Code},
		{"other protocol", func(r *kmsg.SyncGroupRequest) { r.Protocol = &other }, kerr.InconsistentGroupProtocol.Code},
		{"unknown instance", func(r *kmsg.SyncGroupRequest) { r.InstanceID = stringPtr("i") }, kerr.UnknownMemberID.Code},
		{"ok", func(*kmsg.SyncGroupRequest) {}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrSyncGroupRequest()
			req.Version, req.Group, req.MemberID, req.Generation = 5, "g", ids[1], 1
			tc.req(req)
			c := new(call[kmsg.SyncGroupResponse])
			h.s.syncGroup(h.now, req, c.respond)
			h.drain()
			if !c.done() || c.resp.ErrorCode != tc.want {
				t.Fatalf("got %+v, want %d", c.resp, tc.want)
			}
		})
	}
}

func TestMissingSyncRemovesMember(t *testing.T) {
	h := newHarness(t)
	var ids []string
	var joins []*call[kmsg.JoinGroupResponse]
	for range 2 {
		id, c := h.joinNew("g", joinOpts{rebalance: 20000})
		ids, joins = append(ids, id), append(joins, c)
	}
	h.advance(3 * time.Second)
	h.advance(3 * time.Second)
	leader := h.sync("g", ids[0], 1, map[string][]byte{ids[0]: []byte("A"), ids[1]: []byte("B")})
	if !leader.done() {
		t.Fatal("leader sync")
	}
	// The follower never syncs; its session is kept alive by heartbeats,
	// but the sync phase ends after the rebalance timeout.
	for range 4 {
		h.advance(5 * time.Second)
		h.heartbeat("g", ids[0], 1)
		h.heartbeat("g", ids[1], 1)
	}
	g := h.group("g")
	if g.members[ids[1]] != nil || g.state != statePreparingRebalance {
		t.Fatalf("follower still a member, state %s", g.state)
	}
}

func TestHeartbeatErrors(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 1)
	for _, tc := range []struct {
		name       string
		group, mid string
		generation int32
		want       int16
	}{
		{"empty group", "", ids[0], 1, kerr.InvalidGroupID.Code},
		{"unknown group", "x", ids[0], 1, kerr.UnknownMemberID.Code},
		{"unknown member", "g", "x", 1, kerr.UnknownMemberID.Code},
		{"wrong generation", "g", ids[0], 2, kerr.IllegalGeneration.Code},
		{"ok", "g", ids[0], 1, 0},
	} {
		if got := h.heartbeat(tc.group, tc.mid, tc.generation); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestSessionTimeoutRebalances(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	// Only the leader heartbeats.
	for range 3 {
		h.advance(4 * time.Second)
		if code := h.heartbeat("g", ids[0], 1); code != 0 && code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat %d", code)
		}
	}
	g := h.group("g")
	if g.members[ids[1]] != nil {
		t.Fatal("silent member not removed")
	}
	if g.state != statePreparingRebalance {
		t.Fatalf("state %s", g.state)
	}
	if h.heartbeat("g", ids[0], 1) != kerr.RebalanceInProgress.Code {
		t.Fatal("no REBALANCE_IN_PROGRESS")
	}
	c := h.join("g", ids[0], joinOpts{})
	if !c.done() || c.resp.Generation != 2 || len(c.resp.Members) != 1 {
		t.Fatalf("%+v", c.resp)
	}
}

func TestLeaveGroup(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 3)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 5, "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[1]}, {MemberID: "nobody"}, {MemberID: ids[2], InstanceID: stringPtr("i")}}
	c := new(call[kmsg.LeaveGroupResponse])
	h.s.leaveGroup(h.now, req, c.respond)
	h.drain()
	want := []int16{0, kerr.UnknownMemberID.Code, kerr.UnknownMemberID.Code}
	if c.resp.ErrorCode != 0 || len(c.resp.Members) != 3 {
		t.Fatalf("%+v", c.resp)
	}
	for i, m := range c.resp.Members {
		if m.ErrorCode != want[i] || m.MemberID != req.Members[i].MemberID {
			t.Errorf("member %d: %+v", i, m)
		}
	}
	if g := h.group("g"); g.members[ids[1]] != nil || g.state != statePreparingRebalance {
		t.Fatal("member not removed or no rebalance")
	}

	// v0: one member, one error code.
	old := kmsg.NewPtrLeaveGroupRequest()
	old.Version, old.Group, old.MemberID = 0, "g", "nobody"
	c0 := new(call[kmsg.LeaveGroupResponse])
	h.s.leaveGroup(h.now, old, c0.respond)
	h.drain()
	if c0.resp.ErrorCode != kerr.UnknownMemberID.Code || c0.resp.Members != nil {
		t.Fatalf("%+v", c0.resp)
	}
	unknown := kmsg.NewPtrLeaveGroupRequest()
	unknown.Version, unknown.Group, unknown.MemberID = 2, "nope", "m"
	c2 := new(call[kmsg.LeaveGroupResponse])
	h.s.leaveGroup(h.now, unknown, c2.respond)
	h.drain()
	if c2.resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("%+v", c2.resp)
	}
}

func TestLastMemberLeavingEmptiesGroup(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 1)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 3, "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}}
	before := len(h.log)
	h.s.leaveGroup(h.now, req, func(*kmsg.LeaveGroupResponse) {})
	h.drain()
	g := h.group("g")
	if g.state != stateEmpty || g.generation != 2 || len(g.members) != 0 {
		t.Fatalf("state %s generation %d", g.state, g.generation)
	}
	r, err := DecodeRecord(h.log[before].Key, h.log[before].Value)
	if err != nil || r.GroupMetadataValue.Generation != 2 || len(r.GroupMetadataValue.Members) != 0 || r.GroupMetadataValue.Protocol != nil {
		t.Fatalf("empty group record %+v %v", r, err)
	}
}

func TestStaticMemberRemovedByInstanceID(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	h.join("g", "", joinOpts{instanceID: "inst"})
	h.advance(0)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 4, "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: stringPtr("inst")}, {InstanceID: stringPtr("other")}}
	c := new(call[kmsg.LeaveGroupResponse])
	h.s.leaveGroup(h.now, req, c.respond)
	h.drain()
	if c.resp.Members[0].ErrorCode != 0 || c.resp.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("%+v", c.resp)
	}
	if len(h.group("g").members) != 0 {
		t.Fatal("not removed")
	}
}

func TestLeaveWhileJoinParkedAnswersJoin(t *testing.T) {
	h := newHarness(t)
	id, c := h.joinNew("g", joinOpts{})
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 3, "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}}
	h.s.leaveGroup(h.now, req, func(*kmsg.LeaveGroupResponse) {})
	h.drain()
	if !c.done() || c.resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("parked join: %+v", c.resp)
	}
	// The initial rebalance still ends, with no member: the group is empty.
	h.advance(3 * time.Second)
	if g := h.group("g"); g.state != stateEmpty {
		t.Fatalf("state %s", g.state)
	}
}

func TestUnloadAnswersParkedRequests(t *testing.T) {
	h := newHarness(t)
	_, c := h.joinNew("g", joinOpts{})
	h.s.unload(h.now)
	deliver(h.s.takeReplies())
	if !c.done() || c.resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("%+v", c.resp)
	}
	if _, ok := h.s.nextDeadline(); ok {
		t.Fatal("timers left after unload")
	}
}
