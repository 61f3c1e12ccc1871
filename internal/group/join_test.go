package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestJoinNewMemberGetsMemberIDRequired(t *testing.T) {
	h := newHarness(t)
	first := h.join("g", "", joinOpts{clientID: "my-client"})
	if !first.done() || first.resp.ErrorCode != kerr.MemberIDRequired.Code || first.resp.MemberID != "my-client-uuid1" {
		t.Fatalf("first join: %+v", first.resp)
	}
	// The group was created and persisted empty, as Kafka does.
	if len(h.log) != 1 {
		t.Fatalf("%d records, want the new group's", len(h.log))
	}
	r, err := DecodeRecord(h.log[0].Key, h.log[0].Value)
	if err != nil || r.GroupMetadataKey.Group != "g" || len(r.GroupMetadataValue.Members) != 0 {
		t.Fatalf("record %+v, %v", r, err)
	}

	second := h.join("g", "my-client-uuid1", joinOpts{})
	if second.done() {
		t.Fatalf("second join answered before the initial rebalance delay: %+v", second.resp)
	}
	if g := h.group("g"); g.state != statePreparingRebalance {
		t.Fatalf("state %s", g.state)
	}
	h.advance(2999 * time.Millisecond)
	if second.done() {
		t.Fatal("answered before group.initial.rebalance.delay.ms")
	}
	h.advance(time.Millisecond)
	r2 := second.resp
	if r2 == nil || r2.ErrorCode != 0 || r2.Generation != 1 || r2.LeaderID != "my-client-uuid1" || *r2.Protocol != "range" || *r2.ProtocolType != "consumer" || len(r2.Members) != 1 {
		t.Fatalf("join response %+v", r2)
	}
	if g := h.group("g"); g.state != stateCompletingRebalance {
		t.Fatalf("state %s", g.state)
	}
}

func TestJoinV3AddsMemberAtOnce(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	c := h.join("g", "", joinOpts{version: 3})
	h.advance(0)
	if !c.done() || c.resp.ErrorCode != 0 || c.resp.MemberID != "client-uuid1" || c.resp.Generation != 1 {
		t.Fatalf("%+v", c.resp)
	}
}

func TestInitialRebalanceDelayIsExtendedByNewMembers(t *testing.T) {
	h := newHarness(t) // delay 3000, rebalance timeout 30000
	_, a := h.joinNew("g", joinOpts{})
	h.advance(2 * time.Second)
	_, b := h.joinNew("g", joinOpts{})
	h.advance(1 * time.Second) // t=3s: b joined meanwhile, so wait another delay
	if a.done() || b.done() {
		t.Fatal("completed without extending the delay")
	}
	h.advance(3 * time.Second) // t=6s
	if !a.done() || !b.done() || a.resp.Generation != 1 || len(a.resp.Members) != 2 || len(b.resp.Members) != 0 {
		t.Fatalf("a=%+v b=%+v", a.resp, b.resp)
	}
}

func TestInitialRebalanceDelayIsBoundedByRebalanceTimeout(t *testing.T) {
	h := newHarness(t)
	_, first := h.joinNew("g", joinOpts{rebalance: 7000})
	// A member joins every two seconds forever; the delay stops growing
	// once the rebalance timeout is used up.
	for i := 0; i < 10 && !first.done(); i++ {
		h.joinNew("g", joinOpts{rebalance: 7000})
		h.advance(2 * time.Second)
	}
	if !first.done() {
		t.Fatal("initial rebalance never completed")
	}
	if elapsed := h.group("g").stateTimestampMs - time.UnixMilli(1_700_000_000_000).UnixMilli(); elapsed > 10000 {
		t.Errorf("completed after %dms", elapsed)
	}
}

func TestJoinErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(h *harness)
		group   string
		member  string
		opts    joinOpts
		want    int16
		wantMID string
	}{
		{name: "empty group id", group: "", want: kerr.InvalidGroupID.Code},
		{name: "session below min", group: "g", opts: joinOpts{sessionMs: 5999}, want: kerr.InvalidSessionTimeout.Code},
		{name: "session above max", group: "g", opts: joinOpts{sessionMs: 1800001}, want: kerr.InvalidSessionTimeout.Code},
		{name: "known member, no group", group: "g", member: "m", want: kerr.UnknownMemberID.Code, wantMID: "m"},
		{name: "empty protocol type", group: "g", opts: joinOpts{protoType: " "}, want: 0},
		{name: "no protocols", group: "g", opts: joinOpts{protocols: []kmsg.JoinGroupRequestProtocol{}}, want: kerr.InconsistentGroupProtocol.Code},
		{
			name:  "other protocol type",
			setup: func(h *harness) { h.stableGroup("g", 1) },
			group: "g", opts: joinOpts{protoType: "connect"}, want: kerr.InconsistentGroupProtocol.Code,
		},
		{
			name:  "no common protocol",
			setup: func(h *harness) { h.stableGroup("g", 1) },
			group: "g", opts: joinOpts{protocols: []kmsg.JoinGroupRequestProtocol{{Name: "roundrobin"}}}, want: kerr.InconsistentGroupProtocol.Code,
		},
		{
			name:  "unknown member of existing group",
			setup: func(h *harness) { h.stableGroup("g", 1) },
			group: "g", member: "nobody", want: kerr.UnknownMemberID.Code, wantMID: "nobody",
		},
		{
			name:  "group full",
			setup: func(h *harness) { h.s.config.GroupMaxSize = 1; h.stableGroup("g", 1) },
			group: "g", opts: joinOpts{version: 3}, want: kerr.GroupMaxSizeReached.Code,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			if tc.opts.protoType == " " {
				// The empty protocol type cannot be a zero value in joinOpts.
				req := kmsg.NewPtrJoinGroupRequest()
				req.Version, req.Group, req.SessionTimeoutMillis, req.Protocols = 9, tc.group, 10000, rangeProtocol("t")
				c := new(call[kmsg.JoinGroupResponse])
				h.s.joinGroup(h.now, Client{}, req, c.respond)
				h.drain()
				if c.resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
					t.Fatalf("error %d", c.resp.ErrorCode)
				}
				return
			}
			c := h.join(tc.group, tc.member, tc.opts)
			if !c.done() || c.resp.ErrorCode != tc.want || c.resp.MemberID != tc.wantMID {
				t.Fatalf("got %+v, want error %d member %q", c.resp, tc.want, tc.wantMID)
			}
			if c.calls != 1 {
				t.Fatalf("answered %d times", c.calls)
			}
		})
	}
}

func TestPendingMemberExpires(t *testing.T) {
	h := newHarness(t)
	first := h.join("g", "", joinOpts{sessionMs: 6000})
	id := first.resp.MemberID
	if !h.group("g").isPendingMember(id) {
		t.Fatal("not pending")
	}
	h.advance(6 * time.Second)
	if h.group("g").isPendingMember(id) {
		t.Fatal("pending member outlived its session")
	}
	// Rejoining with the forgotten id is refused.
	if c := h.join("g", id, joinOpts{}); c.resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("%+v", c.resp)
	}
}

func TestFollowerRejoinInStableGroupGetsCurrentGeneration(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	c := h.join("g", ids[1], joinOpts{})
	if !c.done() || c.resp.ErrorCode != 0 || c.resp.Generation != 1 || c.resp.LeaderID != ids[0] || len(c.resp.Members) != 0 {
		t.Fatalf("%+v", c.resp)
	}
	if h.group("g").state != stateStable {
		t.Fatal("a follower rejoining with the same metadata must not rebalance")
	}
}

func TestLeaderRejoinRebalances(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	leader := h.join("g", ids[0], joinOpts{})
	if leader.done() {
		t.Fatal("leader join answered before the follower rejoined")
	}
	if h.heartbeat("g", ids[1], 1) != kerr.RebalanceInProgress.Code {
		t.Fatal("follower not told to rejoin")
	}
	follower := h.join("g", ids[1], joinOpts{})
	if !leader.done() || !follower.done() || leader.resp.Generation != 2 || len(leader.resp.Members) != 2 {
		t.Fatalf("leader=%+v follower=%+v", leader.resp, follower.resp)
	}
}

// Cooperative rebalancing (cooperative-sticky) is client-side: members
// rejoin with changed subscription user data (their owned partitions), and
// revoking members rejoin at once for a second rebalance. Each round must
// complete with every member and a consistent generation.
func TestCooperativeTwoRoundRebalance(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)

	// A third member joins: the group rebalances; both old members rejoin.
	newID, third := h.joinNew("g", joinOpts{})
	if h.group("g").state != statePreparingRebalance {
		t.Fatal("no rebalance")
	}
	a := h.join("g", ids[0], joinOpts{protocols: rangeProtocol("t1", "owned-a")})
	b := h.join("g", ids[1], joinOpts{protocols: rangeProtocol("t1", "owned-b")})
	for _, c := range []*call[kmsg.JoinGroupResponse]{a, b, third} {
		if !c.done() || c.resp.ErrorCode != 0 || c.resp.Generation != 2 {
			t.Fatalf("round 1 join: %+v", c.resp)
		}
	}
	// The leader assigns without the partitions still owned by others;
	// a member that must revoke rejoins right after its SyncGroup.
	sa := h.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("a1"), ids[1]: []byte("b1"), newID: {}})
	sb := h.sync("g", ids[1], 2, nil)
	sc := h.sync("g", newID, 2, nil)
	for _, c := range []*call[kmsg.SyncGroupResponse]{sa, sb, sc} {
		if !c.done() || c.resp.ErrorCode != 0 {
			t.Fatalf("round 1 sync: %+v", c.resp)
		}
	}
	b2 := h.join("g", ids[1], joinOpts{protocols: rangeProtocol("t1", "revoked")})
	if b2.done() {
		t.Fatal("rejoin with new metadata must rebalance")
	}
	// The others learn of it on their heartbeat (or commit) and rejoin.
	if h.heartbeat("g", ids[0], 2) != kerr.RebalanceInProgress.Code {
		t.Fatal("no REBALANCE_IN_PROGRESS")
	}
	a2 := h.join("g", ids[0], joinOpts{protocols: rangeProtocol("t1", "owned-a")})
	// Until the third member rejoins, the join phase waits.
	if a2.done() {
		t.Fatal("completed without the third member")
	}
	c2 := h.join("g", newID, joinOpts{})
	for _, c := range []*call[kmsg.JoinGroupResponse]{a2, b2, c2} {
		if !c.done() || c.resp.ErrorCode != 0 || c.resp.Generation != 3 {
			t.Fatalf("round 2 join: %+v", c.resp)
		}
	}
	if a2.resp.LeaderID != ids[0] || len(a2.resp.Members) != 3 {
		t.Fatalf("leader response %+v", a2.resp)
	}
	// Sync from an old generation is refused.
	if c := h.sync("g", ids[1], 2, nil); c.resp.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("%+v", c.resp)
	}
}

func TestRejoinDuringCompletingRebalanceWithSameMetadata(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	id, c := h.joinNew("g", joinOpts{})
	h.advance(0)
	if !c.done() {
		t.Fatal("join not answered")
	}
	// The member lost its response and joins again: same generation back,
	// with the member list since it leads.
	again := h.join("g", id, joinOpts{})
	if !again.done() || again.resp.Generation != 1 || len(again.resp.Members) != 1 || h.group("g").state != stateCompletingRebalance {
		t.Fatalf("%+v", again.resp)
	}
	// With changed metadata, the member forces a new rebalance instead;
	// it is the only member so the join phase completes at once.
	changed := h.join("g", id, joinOpts{protocols: rangeProtocol("t1", "t2")})
	if !changed.done() || changed.resp.Generation != 2 {
		t.Fatalf("%+v", changed.resp)
	}
}

func TestDuplicateJoinIsAnswered(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	first := h.join("g", ids[0], joinOpts{})
	second := h.join("g", ids[0], joinOpts{})
	if !first.done() || first.resp.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("superseded join: %+v", first.resp)
	}
	if second.done() {
		t.Fatal("second join answered early")
	}
	h.join("g", ids[1], joinOpts{})
	if !second.done() || second.resp.Generation != 2 {
		t.Fatalf("%+v", second.resp)
	}
}

func TestStaticMemberRejoinWithoutRebalance(t *testing.T) {
	for _, version := range []int16{5, 8, 9} {
		h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
		first := h.join("g", "", joinOpts{version: version, instanceID: "inst"})
		h.advance(0)
		if !first.done() || first.resp.MemberID != "inst-uuid1" {
			t.Fatalf("v%d: %+v", version, first.resp)
		}
		oldID := first.resp.MemberID
		if c := h.sync("g", oldID, 1, map[string][]byte{oldID: []byte("a")}); c.resp.ErrorCode != 0 {
			t.Fatalf("v%d sync: %+v", version, c.resp)
		}
		records := len(h.log)

		// The instance restarts and joins with no member id.
		again := h.join("g", "", joinOpts{version: version, instanceID: "inst"})
		if !again.done() || again.resp.ErrorCode != 0 || again.resp.MemberID != "inst-uuid2" || again.resp.Generation != 1 {
			t.Fatalf("v%d rejoin: %+v", version, again.resp)
		}
		if h.group("g").state != stateStable {
			t.Fatalf("v%d: rebalanced", version)
		}
		if version >= 9 {
			if again.resp.LeaderID != "inst-uuid2" || !again.resp.SkipAssignment || len(again.resp.Members) != 1 {
				t.Fatalf("v9 leader response %+v", again.resp)
			}
		} else if again.resp.LeaderID != oldID {
			t.Fatalf("v%d: leader %q, want the old id so the client does not reassign", version, again.resp.LeaderID)
		}
		if len(h.log) != records+1 {
			t.Fatalf("v%d: the new member id was not persisted", version)
		}
		// The old incarnation is fenced.
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 4, "g", oldID, 1, stringPtr("inst")
		c := new(call[kmsg.HeartbeatResponse])
		h.s.heartbeat(h.now, req, c.respond)
		h.drain()
		if c.resp.ErrorCode != kerr.FencedInstanceID.Code {
			t.Fatalf("v%d: old member heartbeat %d", version, c.resp.ErrorCode)
		}
		// The new id syncs and gets the assignment kept from before.
		if s := h.sync("g", "inst-uuid2", 1, nil); s.resp.ErrorCode != 0 || string(s.resp.MemberAssignment) != "a" {
			t.Fatalf("v%d: %+v", version, s.resp)
		}
	}
}

func TestStaticMemberReplacementFailedWriteReverts(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	h.join("g", "", joinOpts{instanceID: "inst"})
	h.advance(0)
	h.sync("g", "inst-uuid1", 1, map[string][]byte{"inst-uuid1": []byte("a")})
	h.failWrites = kerr.NotEnoughReplicas
	again := h.join("g", "", joinOpts{instanceID: "inst"})
	if !again.done() || again.resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || again.resp.MemberID != "" {
		t.Fatalf("%+v", again.resp)
	}
	h.failWrites = nil
	if h.group("g").staticMembers["inst"] != "inst-uuid1" || h.heartbeat("g", "inst-uuid1", 1) != 0 {
		t.Fatal("old member not restored")
	}
}

func TestStaticMemberSurvivesRebalanceWithoutRejoining(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	o := joinOpts{rebalance: 5000}
	h.join("g", "", joinOpts{instanceID: "a", rebalance: 5000})
	dynID, dyn := h.joinNew("g", o)
	h.advance(0)
	if !dyn.done() {
		t.Fatal("not joined")
	}
	h.sync("g", "a-uuid1", 1, map[string][]byte{"a-uuid1": []byte("x"), dynID: []byte("y")})
	h.sync("g", dynID, 1, nil)
	// The dynamic member rejoins; the static one (bouncing) does not, and
	// stays a member when the rebalance times out, within its session.
	c := h.join("g", dynID, joinOpts{rebalance: 5000, protocols: rangeProtocol("t2")})
	h.advance(5 * time.Second)
	if !c.done() || c.resp.ErrorCode != 0 || c.resp.Generation != 2 || len(c.resp.Members) != 2 {
		t.Fatalf("%+v", c.resp)
	}
	if g := h.group("g"); len(g.members) != 2 || g.members["a-uuid1"] == nil {
		t.Fatal("static member dropped")
	}
	// Past its session timeout without a heartbeat, it is removed.
	h.advance(10 * time.Second)
	if g := h.group("g"); g.members["a-uuid1"] != nil {
		t.Fatal("static member outlived its session")
	}
}
