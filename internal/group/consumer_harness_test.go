package group

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeTopics is the broker's topic metadata for consumer group tests; a
// topic's ID is its name's first byte and length, stable across runs.
type fakeTopics map[string]int32

func topicIDOf(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	id[15] = byte(len(name))
	return id
}

func (f fakeTopics) TopicName(id [16]byte) (string, bool) {
	for name := range f {
		if topicIDOf(name) == id {
			return name, true
		}
	}
	return "", false
}

func (f fakeTopics) TopicID(name string) ([16]byte, bool) {
	_, ok := f[name]
	return topicIDOf(name), ok
}

func (f fakeTopics) TopicInfo(name string) ([16]byte, int32, bool) {
	n, ok := f[name]
	return topicIDOf(name), n, ok
}

func (f fakeTopics) TopicNames() []string {
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// newConsumerHarness is a harness whose broker has the given topics.
func newConsumerHarness(t *testing.T, topics fakeTopics, configure ...func(*Config)) *harness {
	return newHarness(t, append([]func(*Config){func(c *Config) { c.Topics = topics }}, configure...)...)
}

// hb is one ConsumerGroupHeartbeat; the zero value is a keepalive of
// nothing (every optional field null).
type hb struct {
	group, member string
	epoch         int32
	instance      string
	topics        []string
	regex         *string
	assignor      string
	rebalanceMs   int32
	// owned is what the member reports owning; nil leaves the field null.
	owned map[string][]int32
	// ownedEmpty sends an empty owned list.
	ownedEmpty bool
	// v0 sends version 0 rather than 1.
	v0 bool
}

func (h *harness) cgHeartbeat(r hb) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	if r.v0 {
		req.Version = 0
	}
	req.Group, req.MemberID, req.MemberEpoch = r.group, r.member, r.epoch
	if r.group == "" {
		req.Group = "g"
	}
	if r.instance != "" {
		req.InstanceID = stringPtr(r.instance)
	}
	req.SubscribedTopicNames = r.topics
	req.SubscribedTopicRegex = r.regex
	if r.assignor != "" {
		req.ServerAssignor = stringPtr(r.assignor)
	}
	if r.rebalanceMs != 0 {
		req.RebalanceTimeoutMillis = r.rebalanceMs
	}
	if r.ownedEmpty || r.owned != nil {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	for _, name := range sortedKeys(r.owned) {
		req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: topicIDOf(name), Partitions: r.owned[name]})
	}
	c := new(call[kmsg.ConsumerGroupHeartbeatResponse])
	h.s.consumerGroupHeartbeat(h.now, Client{ID: "client", Host: "/127.0.0.1"}, req, c.respond)
	h.drain()
	if !c.done() {
		h.t.Fatal("heartbeat not answered")
	}
	return c.resp
}

// join has a new member join group "g" subscribed to topics.
func (h *harness) cgJoin(member string, topics ...string) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	return h.cgHeartbeat(hb{member: member, topics: topics, rebalanceMs: 30000, ownedEmpty: true})
}

// assigned converts a response's assignment to names and partitions.
func assigned(t *testing.T, topics fakeTopics, resp *kmsg.ConsumerGroupHeartbeatResponse) map[string][]int32 {
	t.Helper()
	if resp.Assignment == nil {
		return nil
	}
	out := make(map[string][]int32)
	for _, tp := range resp.Assignment.Topics {
		name, ok := topics.TopicName(tp.TopicID)
		if !ok {
			t.Fatalf("assignment names unknown topic %x", tp.TopicID)
		}
		out[name] = tp.Partitions
	}
	return out
}

// member returns a consumer group member, failing if it does not exist.
func (h *harness) member(group, id string) *consumerMember {
	h.t.Helper()
	g, ok := h.s.groups[group].(*consumerGroup)
	if !ok || g.members[id] == nil {
		h.t.Fatalf("no member %q in consumer group %q", id, group)
	}
	return g.members[id]
}

func (h *harness) consumerGroup(id string) *consumerGroup {
	h.t.Helper()
	g, ok := h.s.groups[id].(*consumerGroup)
	if !ok {
		h.t.Fatalf("no consumer group %q", id)
	}
	return g
}

// reload replays everything written into a fresh shard, as a new leader of
// the partition would, and makes it the harness's shard.
func (h *harness) reload() {
	h.t.Helper()
	s := newShard(0, h.s.config)
	for _, kv := range h.log {
		if err := s.replay(kv.Key, kv.Value); err != nil {
			h.t.Fatalf("replay: %v", err)
		}
	}
	s.onLoaded(h.now)
	s.checkInvariants()
	h.s = s
}

// stableConsumerGroup has members join and heartbeat until every member
// owns exactly its target, returning the final assignments.
func (h *harness) stableConsumerGroup(topics fakeTopics, members []string, subscribe ...string) map[string]map[string][]int32 {
	h.t.Helper()
	owned := make(map[string]map[string][]int32)
	epochs := make(map[string]int32)
	for _, m := range members {
		r := h.cgJoin(m, subscribe...)
		if r.ErrorCode != 0 {
			h.t.Fatalf("join %s: %+v", m, r)
		}
		epochs[m], owned[m] = r.MemberEpoch, assigned(h.t, topics, r)
	}
	for range 10 {
		for _, m := range members {
			r := h.cgHeartbeat(hb{member: m, epoch: epochs[m], owned: nonNilOwned(owned[m])})
			if r.ErrorCode != 0 {
				h.t.Fatalf("heartbeat %s: %+v", m, r)
			}
			epochs[m] = r.MemberEpoch
			if a := assigned(h.t, topics, r); a != nil {
				owned[m] = a
			}
		}
		if h.consumerGroup("g").state() == consumerGroupStable {
			return owned
		}
	}
	h.t.Fatalf("group did not stabilize: %s", h.consumerGroup("g").state())
	return nil
}

func nonNilOwned(m map[string][]int32) map[string][]int32 {
	if m == nil {
		return map[string][]int32{}
	}
	return m
}

// cgFetch returns the committed offset of one partition (-1 if none) as an
// admin client asks: no member id, epoch -1.
func (h *harness) cgFetch(groupID, topic string, partition int32) int64 {
	h.t.Helper()
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = groupID
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{partition}}}
	g := h.s.fetchOffsets(9, &rg)
	if g.ErrorCode != 0 || g.Topics[0].Partitions[0].ErrorCode != 0 {
		h.t.Fatalf("fetch error: %+v", g)
	}
	return g.Topics[0].Partitions[0].Offset
}
