package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsJoin is a joining StreamsGroupHeartbeat of the word count's
// topology over "lines": a repartition topic and a store's changelog.
func streamsJoin(member string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "wc", member, 0
	req.RebalanceTimeoutMillis = 30000
	req.ProcessID = strp("process-" + member)
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	topology := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topology.Epoch = 1
	topology.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{
		{SubtopologyID: "0", SourceTopics: []string{"lines"}, RepartitionSinkTopics: []string{"wc-repartition"}},
		{SubtopologyID: "1", RepartitionSourceTopics: []kmsg.TopicInfo{{Topic: "wc-repartition"}},
			StateChangelogTopics: []kmsg.TopicInfo{{Topic: "wc-changelog"}}},
	}
	req.Topology = &topology
	return req
}

// TestStreamsGroupHeartbeatOverTheWire drives StreamsGroupHeartbeat and
// StreamsGroupDescribe against a real node: the first heartbeat reports
// the missing internal topics, which the node creates; the member then
// gets all six tasks; bad requests get Kafka's codes and the node keeps
// serving; ListGroups reports the group's type.
func TestStreamsGroupHeartbeatOverTheWire(t *testing.T) {
	tn := startTestNode(t)
	ctx := testContext(t)
	adm := tn.admin()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "lines"); err != nil {
		t.Fatal(err)
	}
	conn := dialRaw(t, tn)
	send := func(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
		t.Helper()
		conn.request(req, 1)
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		conn.response(resp, 1)
		return resp
	}
	// FindCoordinator creates __consumer_offsets; the join retries while
	// the group's partition loads, as clients do.
	adm.FindGroupCoordinators(ctx, "wc")
	var resp *kmsg.StreamsGroupHeartbeatResponse
	for start := time.Now(); ; {
		resp = send(streamsJoin("m1"))
		retriable := resp.ErrorCode == kerr.NotCoordinator.Code || resp.ErrorCode == kerr.CoordinatorLoadInProgress.Code || resp.ErrorCode == kerr.CoordinatorNotAvailable.Code
		if !retriable || time.Since(start) > 20*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Statuses: internal topics missing, and the new group's first
	// assignment delayed (group.streams.initial.rebalance.delay.ms).
	codes := map[int8]bool{}
	for _, st := range resp.Status {
		codes[st.StatusCode] = true
		t.Logf("status %d: %s", st.StatusCode, st.StatusDetail)
	}
	if resp.ErrorCode != 0 || len(resp.Status) != 2 || !codes[3] || !codes[5] {
		t.Fatalf("join: %+v", resp)
	}

	var epoch int32
	deadline := time.Now().Add(20 * time.Second)
	for {
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = "wc", "m1", resp.MemberEpoch
		hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		resp = send(hb)
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %+v", resp)
		}
		n := 0
		for _, ts := range resp.ActiveTasks {
			n += len(ts.Partitions)
		}
		if n == 6 && len(resp.Status) == 0 {
			epoch = resp.MemberEpoch
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tasks within 20s: %+v", resp)
		}
		time.Sleep(100 * time.Millisecond) // the next heartbeat, as a client's interval
	}
	topics, err := adm.ListTopics(ctx, "wc-repartition", "wc-changelog")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wc-repartition", "wc-changelog"} {
		if d := topics[name]; d.Err != nil || len(d.Partitions) != 3 {
			t.Fatalf("%s: %+v", name, d)
		}
	}

	// Bad input: Kafka's codes, and the node keeps serving.
	stale := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	stale.Group, stale.MemberID, stale.MemberEpoch = "wc", "m1", epoch+5
	if r := send(stale); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("epoch ahead: %+v", r)
	}
	unknown := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	unknown.Group, unknown.MemberID, unknown.MemberEpoch = "nope", "m1", 3
	if r := send(unknown); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("unknown group: %+v", r)
	}
	bad := streamsJoin("m2")
	bad.Topology.Subtopologies[1].StateChangelogTopics[0].NumPartitions = 7
	if r := send(bad); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("changelog with a partition count: %+v", r)
	}

	describe := kmsg.NewPtrStreamsGroupDescribeRequest()
	describe.Groups = []string{"wc", "nope"}
	conn.request(describe, 1)
	described := kmsg.NewPtrStreamsGroupDescribeResponse()
	conn.response(described, 1)
	g := described.Groups[0]
	if g.ErrorCode != 0 || g.State != "Stable" || len(g.Members) != 1 || g.Topology == nil || len(g.Topology.Subtopologies) != 2 ||
		g.AssignorName == nil || *g.AssignorName != "sticky" || described.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe: %+v", described)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lg := listed["wc"]; lg.GroupType != "streams" || lg.State != "Stable" {
		t.Fatalf("ListGroups: %+v", lg)
	}
	// Leaving empties the group, which can then be deleted.
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Group, leave.MemberID, leave.MemberEpoch = "wc", "m1", -1
	if r := send(leave); r.ErrorCode != 0 {
		t.Fatalf("leave: %+v", r)
	}
	deleted, err := adm.DeleteGroups(ctx, "wc")
	if err != nil || deleted["wc"].Err != nil {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
}
