package group

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeGroup(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	d := h.s.describeGroup(5, "g")
	if d.ErrorCode != 0 || d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != "range" || len(d.Members) != 2 {
		t.Fatalf("%+v", d)
	}
	m := d.Members[1]
	if m.MemberID != ids[1] || m.ClientID != "client" || m.ClientHost != "/127.0.0.1" ||
		!bytes.Equal(m.ProtocolMetadata, subscription("t1")) || string(m.MemberAssignment) != "assignment-"+ids[1] {
		t.Fatalf("member %+v", m)
	}
	// During a rebalance, no metadata and no protocol.
	h.join("g", ids[0], joinOpts{})
	d = h.s.describeGroup(5, "g")
	if d.State != "PreparingRebalance" || d.Protocol != "" || len(d.Members[0].ProtocolMetadata) != 0 {
		t.Fatalf("%+v", d)
	}
	// A missing group: Dead, and GROUP_ID_NOT_FOUND from v6 on.
	if d := h.s.describeGroup(5, "none"); d.ErrorCode != 0 || d.State != "Dead" {
		t.Fatalf("v5 %+v", d)
	}
	if d := h.s.describeGroup(6, "none"); d.ErrorCode != kerr.GroupIDNotFound.Code || d.State != "Dead" || d.ErrorMessage == nil {
		t.Fatalf("v6 %+v", d)
	}
}

func TestListGroupsFilters(t *testing.T) {
	h := newHarness(t)
	h.stableGroup("stable", 1)
	h.commit("simple", "", -1, 8, map[string]map[int32]int64{"t": {0: 1}})
	names := func(states, types []string) []string {
		var out []string
		for _, g := range h.s.listGroups(states, types, nil) {
			out = append(out, g.Group+"/"+g.GroupState+"/"+g.GroupType+"/"+g.ProtocolType)
		}
		return out
	}
	if got, want := names(nil, nil), []string{"simple/Empty/classic/", "stable/Stable/classic/consumer"}; !reflect.DeepEqual(got, want) {
		t.Errorf("all: %v", got)
	}
	if got := names([]string{"stable"}, nil); len(got) != 1 || got[0] != "stable/Stable/classic/consumer" {
		t.Errorf("state filter is case-insensitive: %v", got)
	}
	if got := names(nil, []string{"consumer"}); len(got) != 0 {
		t.Errorf("type filter: %v", got)
	}
}

func TestDeleteGroups(t *testing.T) {
	h := newHarness(t)
	h.stableGroup("busy", 1)
	h.commit("idle", "", -1, 8, map[string]map[int32]int64{"t": {0: 1, 1: 2}})
	before := len(h.log)
	var results []kmsg.DeleteGroupsResponseGroup
	h.s.deleteGroups(h.now, []string{"busy", "idle", "none"}, func(r []kmsg.DeleteGroupsResponseGroup) { results = r })
	h.drain()
	want := []int16{kerr.NonEmptyGroup.Code, 0, kerr.GroupIDNotFound.Code}
	for i, r := range results {
		if r.ErrorCode != want[i] {
			t.Errorf("%s: %d, want %d", r.Group, r.ErrorCode, want[i])
		}
	}
	if h.s.groups["idle"] != nil || h.fetch("idle", "t", 0) != -1 {
		t.Fatal("idle group not deleted")
	}
	// Two offset tombstones, then the group's.
	if n := len(h.log) - before; n != 3 {
		t.Fatalf("%d records", n)
	}
	r, _ := DecodeRecord(h.log[before+2].Key, h.log[before+2].Value)
	if r.GroupMetadataKey == nil || r.GroupMetadataValue != nil {
		t.Fatal("last record is not the group tombstone")
	}
}

// Everything a shard wrote, replayed into a new shard, gives back the same
// groups and offsets: the persistence is complete.
func TestReplayRebuildsState(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	h.commit("g", ids[0], 1, 8, map[string]map[int32]int64{"t1": {0: 100, 1: 200}})
	h.commit("simple", "", -1, 8, map[string]map[int32]int64{"t2": {0: 5}})
	h.commit("gone", "", -1, 8, map[string]map[int32]int64{"t2": {0: 5}})
	h.s.deleteGroups(h.now, []string{"gone"}, func([]kmsg.DeleteGroupsResponseGroup) {})
	h.drain()
	h.join("static", "", joinOpts{instanceID: "inst"})
	h.advance(3 * time.Second)
	h.sync("static", "inst-uuid3", 1, map[string][]byte{"inst-uuid3": []byte("s")})

	loaded := newShard(0, h.s.config)
	for _, kv := range h.log {
		if err := loaded.replay(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	loaded.onLoaded(h.now)
	loaded.checkInvariants()
	if !reflect.DeepEqual(loaded.offsets, h.s.offsets) {
		t.Fatalf("offsets\n got %+v\nwant %+v", loaded.offsets, h.s.offsets)
	}
	if len(loaded.groups) != 3 || loaded.groups["gone"] != nil {
		t.Fatalf("groups %v", loaded.sortedGroupIDs())
	}
	for _, id := range []string{"g", "static"} {
		want, got := h.s.describeGroup(5, id), loaded.describeGroup(5, id)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n got %+v\nwant %+v", id, got, want)
		}
	}
	g := loaded.classic("g")
	if g.generation != 1 || g.leaderID != ids[0] {
		t.Fatalf("loaded group %+v", g)
	}
	// The loaded group is live: members heartbeat, and a silent one expires.
	h2 := &harness{t: t, s: loaded, now: h.now}
	if h2.heartbeat("g", ids[0], 1) != 0 {
		t.Fatal("heartbeat to loaded group")
	}
	h2.advance(10 * time.Second)
	if loaded.classic("g").members[ids[1]] != nil {
		t.Fatal("loaded member without heartbeats not expired")
	}
}
