package group

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives a shard step by step on a fake clock, playing the driver:
// it appends writes to an in-memory log (failing them on request) and
// delivers responses.
type harness struct {
	t   *testing.T
	s   *shard
	now time.Time
	// log is every record appended, in order.
	log []KV
	// failWrites, when set, fails every append with it.
	failWrites error
	uuids      int
	// memberOpts are the join options stableGroup uses.
	memberOpts joinOpts
}

func newHarness(t *testing.T, configure ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, now: time.UnixMilli(1_700_000_000_000)}
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.NewUUID = func() string {
		h.uuids++
		return fmt.Sprintf("uuid%d", h.uuids)
	}
	for _, f := range configure {
		f(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h.s = newShard(0, cfg)
	h.s.scheduleCleanup(h.now)
	return h
}

// drain plays the driver after a step: writes, then replies.
func (h *harness) drain() {
	h.t.Helper()
	for records := h.s.nextWrite(); records != nil; records = h.s.nextWrite() {
		if h.failWrites == nil {
			h.log = append(h.log, records...)
		}
		h.s.writeDone(h.now, h.failWrites)
	}
	deliver(h.s.takeReplies())
	h.s.checkInvariants()
}

// advance moves the clock and fires due timers.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.now = h.now.Add(d)
	h.s.tick(h.now)
	h.drain()
}

// call captures the response to one request; resp stays nil while parked.
type call[R any] struct {
	resp  *R
	calls int
}

func (c *call[R]) respond(r *R) {
	c.calls++
	c.resp = r
}

func (c *call[R]) done() bool { return c.resp != nil }

type joinOpts struct {
	version    int16
	instanceID string
	protocols  []kmsg.JoinGroupRequestProtocol
	protoType  string
	sessionMs  int32
	rebalance  int32
	clientID   string
}

func subscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

func rangeProtocol(topics ...string) []kmsg.JoinGroupRequestProtocol {
	return []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: subscription(topics...)}}
}

func (h *harness) join(groupID, memberID string, o joinOpts) *call[kmsg.JoinGroupResponse] {
	h.t.Helper()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	if o.version != 0 {
		req.Version = o.version
	}
	req.Group, req.MemberID = groupID, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 30000
	if o.sessionMs != 0 {
		req.SessionTimeoutMillis = o.sessionMs
	}
	if o.rebalance != 0 {
		req.RebalanceTimeoutMillis = o.rebalance
	}
	req.ProtocolType = "consumer"
	if o.protoType != "" {
		req.ProtocolType = o.protoType
	}
	req.Protocols = o.protocols
	if req.Protocols == nil {
		req.Protocols = rangeProtocol("t1")
	}
	if o.instanceID != "" {
		req.InstanceID = stringPtr(o.instanceID)
	}
	clientID := "client"
	if o.clientID != "" {
		clientID = o.clientID
	}
	c := new(call[kmsg.JoinGroupResponse])
	h.s.joinGroup(h.now, Client{ID: clientID, Host: "/127.0.0.1"}, req, c.respond)
	h.drain()
	return c
}

// joinNew joins a new dynamic member the v4+ way (MEMBER_ID_REQUIRED, then
// again with the id) and returns the parked second join.
func (h *harness) joinNew(groupID string, o joinOpts) (string, *call[kmsg.JoinGroupResponse]) {
	h.t.Helper()
	first := h.join(groupID, "", o)
	if !first.done() || first.resp.ErrorCode != 79 {
		h.t.Fatalf("first join: %+v", first.resp)
	}
	return first.resp.MemberID, h.join(groupID, first.resp.MemberID, o)
}

func (h *harness) sync(groupID, memberID string, generation int32, assignments map[string][]byte) *call[kmsg.SyncGroupResponse] {
	h.t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = groupID, memberID, generation
	for id, a := range assignments {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	c := new(call[kmsg.SyncGroupResponse])
	h.s.syncGroup(h.now, req, c.respond)
	h.drain()
	return c
}

func (h *harness) heartbeat(groupID, memberID string, generation int32) int16 {
	h.t.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation = groupID, memberID, generation
	c := new(call[kmsg.HeartbeatResponse])
	h.s.heartbeat(h.now, req, c.respond)
	h.drain()
	return c.resp.ErrorCode
}

func (h *harness) commit(groupID, memberID string, generation int32, version int16, offsets map[string]map[int32]int64) *kmsg.OffsetCommitResponse {
	h.t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = version
	req.Group, req.MemberID, req.Generation = groupID, memberID, generation
	for topic, partitions := range offsets {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for p, o := range partitions {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = p, o
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	c := new(call[kmsg.OffsetCommitResponse])
	h.s.commitOffsets(h.now, req, c.respond)
	h.drain()
	if !c.done() {
		h.t.Fatal("commit not answered")
	}
	return c.resp
}

// fetch returns the committed offset of one partition (-1 if none).
func (h *harness) fetch(groupID, topic string, partition int32) int64 {
	h.t.Helper()
	g := h.s.fetchOffsets(9, &kmsg.OffsetFetchRequestGroup{Group: groupID, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{partition}}}})
	if g.ErrorCode != 0 || g.Topics[0].Partitions[0].ErrorCode != 0 {
		h.t.Fatalf("fetch error: %+v", g)
	}
	return g.Topics[0].Partitions[0].Offset
}

func (h *harness) group(id string) *classicGroup {
	h.t.Helper()
	g := h.s.classic(id)
	if g == nil {
		h.t.Fatalf("no group %q", id)
	}
	return g
}

// stableGroup forms a stable group of n dynamic members and returns their
// ids, the leader first.
func (h *harness) stableGroup(groupID string, n int) []string {
	h.t.Helper()
	var ids []string
	var calls []*call[kmsg.JoinGroupResponse]
	for range n {
		id, c := h.joinNew(groupID, h.memberOpts)
		ids = append(ids, id)
		calls = append(calls, c)
	}
	for range 20 {
		if calls[len(calls)-1].done() {
			break
		}
		h.advance(time.Duration(h.s.config.GroupInitialRebalanceDelayMs) * time.Millisecond)
	}
	for i, c := range calls {
		if !c.done() || c.resp.ErrorCode != 0 {
			h.t.Fatalf("join %d: %+v", i, c.resp)
		}
	}
	gen := calls[0].resp.Generation
	assignments := make(map[string][]byte)
	for _, id := range ids {
		assignments[id] = []byte("assignment-" + id)
	}
	var syncs []*call[kmsg.SyncGroupResponse]
	for _, id := range ids[1:] {
		syncs = append(syncs, h.sync(groupID, id, gen, nil))
	}
	syncs = append(syncs, h.sync(groupID, ids[0], gen, assignments))
	for _, c := range syncs {
		if !c.done() || c.resp.ErrorCode != 0 {
			h.t.Fatalf("sync: %+v", c.resp)
		}
	}
	if g := h.group(groupID); g.state != stateStable {
		h.t.Fatalf("group %s, want Stable", g.state)
	}
	return ids
}
