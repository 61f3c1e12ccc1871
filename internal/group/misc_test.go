package group

import (
	"errors"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type staticTopics map[string][16]byte

func (s staticTopics) TopicName(id [16]byte) (string, bool) {
	for name, tid := range s {
		if tid == id {
			return name, true
		}
	}
	return "", false
}

func (s staticTopics) TopicID(name string) ([16]byte, bool) {
	id, ok := s[name]
	return id, ok
}

// OffsetCommit and OffsetFetch v10 name topics by ID.
func TestTopicIDs(t *testing.T) {
	known, unknown := [16]byte{1}, [16]byte{9}
	h := newHarness(t, func(c *Config) { c.Topics = staticTopics{"t": known} })
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group = 10, "g"
	req.Topics = []kmsg.OffsetCommitRequestTopic{
		{TopicID: known, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5, LeaderEpoch: -1}}},
		{TopicID: unknown, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5, LeaderEpoch: -1}}},
	}
	c := new(call[kmsg.OffsetCommitResponse])
	h.s.commitOffsets(h.now, req, c.respond)
	h.drain()
	if codes := partitionCodes(c.resp); codes[0] != 0 || codes[1] != kerr.UnknownTopicID.Code || c.resp.Topics[0].TopicID != known {
		t.Fatalf("%+v", c.resp)
	}
	if h.fetch("g", "t", 0) != 5 {
		t.Fatal("not stored under the topic's name")
	}
	all := h.s.fetchOffsets(10, &kmsg.OffsetFetchRequestGroup{Group: "g"})
	if len(all.Topics) != 1 || all.Topics[0].TopicID != known {
		t.Fatalf("%+v", all)
	}
	byID := h.s.fetchOffsets(10, &kmsg.OffsetFetchRequestGroup{Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{{TopicID: known, Partitions: []int32{0}}, {TopicID: unknown, Partitions: []int32{0}}}})
	if byID.Topics[0].Partitions[0].Offset != 5 || byID.Topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("%+v", byID)
	}
}

func TestClientHost(t *testing.T) {
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 5555}: "/10.1.2.3",
		&net.TCPAddr{IP: net.IPv6loopback, Port: 1}:         "/::1",
		&net.UDPAddr{IP: net.IPv4(1, 2, 3, 4), Port: 1}:     "/1.2.3.4",
	} {
		if got := ClientHost(addr); got != want {
			t.Errorf("%v: %q, want %q", addr, got, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Config){
		"partitions":  func(c *Config) { c.OffsetsTopicNumPartitions = 0 },
		"session":     func(c *Config) { c.GroupMaxSessionTimeoutMs = c.GroupMinSessionTimeoutMs - 1 },
		"delay":       func(c *Config) { c.GroupInitialRebalanceDelayMs = -1 },
		"max size":    func(c *Config) { c.GroupMaxSize = 0 },
		"retention":   func(c *Config) { c.OffsetsRetentionMinutes = 0 },
		"check":       func(c *Config) { c.OffsetsRetentionCheckIntervalMs = 0 },
		"metadata":    func(c *Config) { c.OffsetMetadataMaxBytes = -1 },
		"new members": func(c *Config) { c.NewMemberJoinTimeoutMs = 0 },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := NewCoordinator(cfg, newMemStorage()); err == nil {
			t.Errorf("%s: coordinator built", name)
		}
	}
}

func TestCoordinatorOffsetDelete(t *testing.T) {
	c := newTestCoordinator(t, newMemStorage(), 0, 1, 2, 3)
	await(t, func(r func(*kmsg.OffsetCommitResponse)) { c.OffsetCommit(commitRequest("g", "", -1, "t", 1), r) })
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "g"
	req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	if resp := await(t, func(r func(*kmsg.OffsetDeleteResponse)) { c.OffsetDelete(req, r) }); resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("%+v", resp)
	}
	req.Group = ""
	if resp := await(t, func(r func(*kmsg.OffsetDeleteResponse)) { c.OffsetDelete(req, r) }); resp.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("%+v", resp)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version, fetch.Group = 7, "g"
	if resp := await(t, func(r func(*kmsg.OffsetFetchResponse)) { c.OffsetFetch(fetch, r) }); resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Fatalf("offset still there: %+v", resp)
	}
	c.OnResigned(c.Partition("g"))
	fetch.Version = 1
	fetch.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	resp := await(t, func(r func(*kmsg.OffsetFetchResponse)) { c.OffsetFetch(fetch, r) })
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.NotCoordinator.Code || p.Offset != -1 {
		t.Fatalf("v1 group error not on the partition: %+v", resp)
	}
	fetch.Version = 3
	if resp := await(t, func(r func(*kmsg.OffsetFetchResponse)) { c.OffsetFetch(fetch, r) }); resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("v3: %+v", resp)
	}
}
