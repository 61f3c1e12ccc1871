package group

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memStorage is an in-memory __consumer_offsets for driver tests.
type memStorage struct {
	mu        sync.Mutex
	logs      map[int32][]KV
	appendErr error
	// loadGate, when set, holds every Load until it is closed.
	loadGate chan struct{}
}

func newMemStorage() *memStorage { return &memStorage{logs: make(map[int32][]KV)} }

func (m *memStorage) Append(p int32, records []KV) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.appendErr != nil {
		return 0, m.appendErr
	}
	m.logs[p] = append(m.logs[p], records...)
	return int64(len(m.logs[p]) - 1), nil
}

func (m *memStorage) Load(p int32, fn func(offset int64, key, value []byte) error) error {
	if m.loadGate != nil {
		<-m.loadGate
	}
	m.mu.Lock()
	records := append([]KV(nil), m.logs[p]...)
	m.mu.Unlock()
	for i, kv := range records {
		if err := fn(int64(i), kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.OffsetsTopicNumPartitions = 4
	cfg.GroupInitialRebalanceDelayMs = 0
	cfg.Logger = slog.New(slog.DiscardHandler)
	return cfg
}

func newTestCoordinator(t *testing.T, storage Storage, partitions ...int32) *Coordinator {
	t.Helper()
	c, err := NewCoordinator(testConfig(), storage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for _, p := range partitions {
		c.OnElected(p)
	}
	waitLoaded(t, c)
	return c
}

// waitFor polls cond until it holds or five seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitLoaded(t *testing.T, c *Coordinator) {
	t.Helper()
	waitFor(t, "partitions to load", func() bool {
		return await(t, func(r func(*kmsg.ListGroupsResponse)) { c.ListGroups(kmsg.NewPtrListGroupsRequest(), r) }).ErrorCode == 0
	})
}

// async starts a request and returns a channel for its response.
func async[R any](f func(respond func(*R))) <-chan *R {
	ch := make(chan *R, 2)
	f(func(r *R) { ch <- r })
	return ch
}

func receive[R any](t *testing.T, ch <-chan *R) *R {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no response")
		return nil
	}
}

func await[R any](t *testing.T, f func(respond func(*R))) *R {
	t.Helper()
	return receive(t, async(f))
}

func newJoinRequest(version int16, groupID, memberID string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID = version, groupID, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 60000
	req.ProtocolType, req.Protocols = "consumer", rangeProtocol("t1")
	return req
}

// joinStable forms a one-member stable group through the coordinator and
// returns the member id.
func joinStable(t *testing.T, c *Coordinator, groupID string) string {
	t.Helper()
	client := Client{ID: "cli", Host: "/10.0.0.1"}
	first := await(t, func(r func(*kmsg.JoinGroupResponse)) { c.JoinGroup(client, newJoinRequest(9, groupID, ""), r) })
	if first.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("first join %+v", first)
	}
	joined := await(t, func(r func(*kmsg.JoinGroupResponse)) {
		c.JoinGroup(client, newJoinRequest(9, groupID, first.MemberID), r)
	})
	if joined.ErrorCode != 0 || joined.Generation != 1 {
		t.Fatalf("join %+v", joined)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.MemberID, sync.Generation = 5, groupID, joined.MemberID, 1
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: joined.MemberID, MemberAssignment: []byte("A")}}
	synced := await(t, func(r func(*kmsg.SyncGroupResponse)) { c.SyncGroup(sync, r) })
	if synced.ErrorCode != 0 || string(synced.MemberAssignment) != "A" {
		t.Fatalf("sync %+v", synced)
	}
	return joined.MemberID
}

func commitRequest(groupID, memberID string, generation int32, topic string, offsets ...int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 9, groupID, memberID, generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = int32(p), o, 3, stringPtr("md")
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	return req
}

func TestCoordinatorRoutesByPartition(t *testing.T) {
	storage := newMemStorage()
	storage.loadGate = make(chan struct{})
	c, err := NewCoordinator(testConfig(), storage)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	group := "my-group" // partition 2 of 4
	if p := c.Partition(group); p != 2 {
		t.Fatalf("partition %d", p)
	}
	join := func() int16 {
		return await(t, func(r func(*kmsg.JoinGroupResponse)) { c.JoinGroup(Client{}, newJoinRequest(9, group, ""), r) }).ErrorCode
	}
	if code := join(); code != kerr.NotCoordinator.Code {
		t.Fatalf("not led: %d", code)
	}
	c.OnElected(2)
	if code := join(); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %d", code)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group = group
	if code := await(t, func(r func(*kmsg.HeartbeatResponse)) { c.Heartbeat(hb, r) }).ErrorCode; code != 0 {
		t.Fatalf("heartbeat while loading: %d, want NONE as Kafka", code)
	}
	if code := await(t, func(r func(*kmsg.ListGroupsResponse)) { c.ListGroups(kmsg.NewPtrListGroupsRequest(), r) }).ErrorCode; code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("list while loading: %d", code)
	}
	close(storage.loadGate)
	waitLoaded(t, c)
	if code := join(); code != kerr.MemberIDRequired.Code {
		t.Fatalf("loaded: %d", code)
	}
	empty := newJoinRequest(9, "", "")
	if code := await(t, func(r func(*kmsg.JoinGroupResponse)) { c.JoinGroup(Client{}, empty, r) }).ErrorCode; code != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %d", code)
	}
}

func TestCoordinatorGroupLifecycle(t *testing.T) {
	storage := newMemStorage()
	c := newTestCoordinator(t, storage, 0, 1, 2, 3)
	memberID := joinStable(t, c, "my-group")

	commit := await(t, func(r func(*kmsg.OffsetCommitResponse)) {
		c.OffsetCommit(commitRequest("my-group", memberID, 1, "t1", 10, 20), r)
	})
	if partitionCodes(commit)[0] != 0 || partitionCodes(commit)[1] != 0 {
		t.Fatalf("commit %+v", commit)
	}

	// OffsetFetch in its three shapes.
	for _, version := range []int16{1, 5, 8} {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = version
		topics := []kmsg.OffsetFetchRequestTopic{{Topic: "t1", Partitions: []int32{0, 1, 2}}}
		if version >= 8 {
			req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "my-group", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t1", Partitions: []int32{0, 1, 2}}}}, {Group: "unknown"}}
		} else {
			req.Group, req.Topics = "my-group", topics
		}
		resp := await(t, func(r func(*kmsg.OffsetFetchResponse)) { c.OffsetFetch(req, r) })
		var got []int64
		if version >= 8 {
			for _, p := range resp.Groups[0].Topics[0].Partitions {
				got = append(got, p.Offset)
			}
			if resp.Groups[1].ErrorCode != 0 || len(resp.Groups[1].Topics) != 0 {
				t.Errorf("v8 unknown group: %+v", resp.Groups[1])
			}
		} else {
			for _, p := range resp.Topics[0].Partitions {
				got = append(got, p.Offset)
			}
		}
		if fmt.Sprint(got) != "[10 20 -1]" {
			t.Errorf("v%d fetched %v", version, got)
		}
		if version == 5 && (resp.Topics[0].Partitions[0].LeaderEpoch != 3 || *resp.Topics[0].Partitions[0].Metadata != "md") {
			t.Errorf("v5 partition %+v", resp.Topics[0].Partitions[0])
		}
	}

	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Version, describe.Groups = 5, []string{"my-group", "other"}
	dresp := await(t, func(r func(*kmsg.DescribeGroupsResponse)) { c.DescribeGroups(describe, r) })
	if dresp.Groups[0].State != "Stable" || dresp.Groups[0].Members[0].ClientHost != "/10.0.0.1" || dresp.Groups[1].State != "Dead" {
		t.Fatalf("describe %+v", dresp)
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"my-group"}
	if code := await(t, func(r func(*kmsg.DeleteGroupsResponse)) { c.DeleteGroups(del, r) }).Groups[0].ErrorCode; code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete non-empty: %d", code)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.Members = 5, "my-group", []kmsg.LeaveGroupRequestMember{{MemberID: memberID}}
	if lr := await(t, func(r func(*kmsg.LeaveGroupResponse)) { c.LeaveGroup(leave, r) }); lr.ErrorCode != 0 || lr.Members[0].ErrorCode != 0 {
		t.Fatalf("leave %+v", lr)
	}
	list := kmsg.NewPtrListGroupsRequest()
	list.Version, list.StatesFilter = 4, []string{"Empty"}
	if lg := await(t, func(r func(*kmsg.ListGroupsResponse)) { c.ListGroups(list, r) }); len(lg.Groups) != 1 || lg.Groups[0].Group != "my-group" {
		t.Fatalf("list %+v", lg)
	}
	del.Groups = []string{"my-group", "never"}
	dr := await(t, func(r func(*kmsg.DeleteGroupsResponse)) { c.DeleteGroups(del, r) })
	if dr.Groups[0].ErrorCode != 0 || dr.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete %+v", dr)
	}
}

func TestCoordinatorReloadsFromStorage(t *testing.T) {
	storage := newMemStorage()
	c := newTestCoordinator(t, storage, 0, 1, 2, 3)
	memberID := joinStable(t, c, "my-group")
	await(t, func(r func(*kmsg.OffsetCommitResponse)) {
		c.OffsetCommit(commitRequest("my-group", memberID, 1, "t1", 10, 20), r)
	})
	simple := commitRequest("simple", "", -1, "t2", 7)
	await(t, func(r func(*kmsg.OffsetCommitResponse)) { c.OffsetCommit(simple, r) })
	c.Close()

	// A new coordinator over the same log: offsets and groups come back.
	c2 := newTestCoordinator(t, storage, 0, 1, 2, 3)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "my-group"}, {Group: "simple"}}
	resp := await(t, func(r func(*kmsg.OffsetFetchResponse)) { c2.OffsetFetch(req, r) })
	if got := resp.Groups[0].Topics[0].Partitions; len(got) != 2 || got[0].Offset != 10 || got[1].Offset != 20 || got[1].LeaderEpoch != 3 || *got[1].Metadata != "md" {
		t.Fatalf("my-group offsets %+v", resp.Groups[0])
	}
	if got := resp.Groups[1].Topics[0].Partitions[0].Offset; got != 7 {
		t.Fatalf("simple offset %d", got)
	}
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Version, describe.Groups = 5, []string{"my-group"}
	d := await(t, func(r func(*kmsg.DescribeGroupsResponse)) { c2.DescribeGroups(describe, r) }).Groups[0]
	if d.State != "Stable" || d.Protocol != "range" || len(d.Members) != 1 || d.Members[0].MemberID != memberID || string(d.Members[0].MemberAssignment) != "A" {
		t.Fatalf("reloaded group %+v", d)
	}
	// The reloaded member carries on.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "my-group", memberID, 1
	if code := await(t, func(r func(*kmsg.HeartbeatResponse)) { c2.Heartbeat(hb, r) }).ErrorCode; code != 0 {
		t.Fatalf("heartbeat after reload: %d", code)
	}
}

func TestCoordinatorResignAnswersParkedJoin(t *testing.T) {
	cfg := testConfig()
	cfg.GroupInitialRebalanceDelayMs = 60000
	c, err := NewCoordinator(cfg, newMemStorage())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.Partition("g")
	c.OnElected(p)
	waitLoaded(t, c)
	first := await(t, func(r func(*kmsg.JoinGroupResponse)) { c.JoinGroup(Client{}, newJoinRequest(9, "g", ""), r) })
	parked := async(func(r func(*kmsg.JoinGroupResponse)) {
		c.JoinGroup(Client{}, newJoinRequest(9, "g", first.MemberID), r)
	})
	select {
	case r := <-parked:
		t.Fatalf("answered early: %+v", r)
	default:
	}
	c.OnResigned(p)
	if r := receive(t, parked); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("%+v", r)
	}
	if code := await(t, func(r func(*kmsg.JoinGroupResponse)) { c.JoinGroup(Client{}, newJoinRequest(9, "g", ""), r) }).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("after resign: %d", code)
	}
	c.Close()
	if code := await(t, func(r func(*kmsg.JoinGroupResponse)) { c.JoinGroup(Client{}, newJoinRequest(9, "g", ""), r) }).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("after close: %d", code)
	}
}

func TestCoordinatorCorruptPartitionIsNotLed(t *testing.T) {
	storage := newMemStorage()
	storage.logs[0] = []KV{{Key: []byte{0, 1, 0}, Value: []byte{0}}}
	c, err := NewCoordinator(testConfig(), storage)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.OnElected(0)
	waitFor(t, "load to fail", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mu.partitions[0] == nil
	})
}

func TestCoordinatorAppendFailure(t *testing.T) {
	storage := newMemStorage()
	c := newTestCoordinator(t, storage, 0, 1, 2, 3)
	storage.mu.Lock()
	storage.appendErr = errors.New("no space left on device")
	storage.mu.Unlock()
	resp := await(t, func(r func(*kmsg.OffsetCommitResponse)) { c.OffsetCommit(commitRequest("g", "", -1, "t", 1), r) })
	if code := partitionCodes(resp)[0]; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("%d", code)
	}
}

func TestCoordinatorTopicsDeleted(t *testing.T) {
	c := newTestCoordinator(t, newMemStorage(), 0, 1, 2, 3)
	for _, g := range []string{"a", "b", "c"} {
		await(t, func(r func(*kmsg.OffsetCommitResponse)) { c.OffsetCommit(commitRequest(g, "", -1, "doomed", 1, 2), r) })
	}
	c.TopicsDeleted("doomed")
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "a"}, {Group: "b"}, {Group: "c"}}
	for _, g := range await(t, func(r func(*kmsg.OffsetFetchResponse)) { c.OffsetFetch(req, r) }).Groups {
		if len(g.Topics) != 0 {
			t.Errorf("%s kept %+v", g.Group, g.Topics)
		}
	}
}

// Many clients at once, across partitions, under -race.
func TestCoordinatorConcurrentClients(t *testing.T) {
	c := newTestCoordinator(t, newMemStorage(), 0, 1, 2, 3)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			group := fmt.Sprintf("group-%d", i)
			memberID := joinStable(t, c, group)
			for n := range 20 {
				await(t, func(r func(*kmsg.OffsetCommitResponse)) {
					c.OffsetCommit(commitRequest(group, memberID, 1, "t", int64(n)), r)
				})
				hb := kmsg.NewPtrHeartbeatRequest()
				hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, group, memberID, 1
				if code := await(t, func(r func(*kmsg.HeartbeatResponse)) { c.Heartbeat(hb, r) }).ErrorCode; code != 0 {
					t.Errorf("heartbeat %d", code)
				}
			}
		})
	}
	wg.Wait()
	list := await(t, func(r func(*kmsg.ListGroupsResponse)) { c.ListGroups(kmsg.NewPtrListGroupsRequest(), r) })
	if len(list.Groups) != 8 {
		t.Fatalf("%d groups", len(list.Groups))
	}
}
