package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// memJournal is an in-memory journal for testing the controller's decisions:
// entry i holds entries[i].
type memJournal struct {
	entries [][][]byte
	fail    error
}

func (j *memJournal) Append(_ context.Context, values [][]byte) (int64, error) {
	if j.fail != nil {
		return 0, j.fail
	}
	j.entries = append(j.entries, values)
	return int64(len(j.entries) - 1), nil
}

func (j *memJournal) CatchUp(context.Context) error { return j.fail }

// replay applies every entry to c, as a replicated journal does at start.
func (j *memJournal) replay(t *testing.T, c *Controller) {
	t.Helper()
	for i, values := range j.entries {
		if err := c.ApplyCommitted(int64(i), values); err != nil {
			t.Fatal(err)
		}
	}
}

func newTestController(t *testing.T, j *memJournal, brokers int) *Controller {
	t.Helper()
	c := New(Config{NodeID: 1, DefaultNumPartitions: 3, DefaultReplicationFactor: 1, DeleteTopicEnable: true}, j)
	for id := 1; id <= brokers; id++ {
		if err := c.Bootstrap("cluster", metadata.RegisterBrokerRecord{BrokerID: int32(id), Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "h", Port: int32(9000 + id)}}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestCreateTopicsDecisions(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 2)
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "a", NumPartitions: -1, ReplicationFactor: -1}}, false)
	if res[0].ErrorCode != 0 || res[0].NumPartitions != 3 || res[0].ReplicationFactor != 1 {
		t.Fatalf("defaults: %+v", res[0])
	}
	cases := []struct {
		topic CreateTopic
		want  *kerr.Error
	}{
		{CreateTopic{Name: "a", NumPartitions: 1, ReplicationFactor: 1}, kerr.TopicAlreadyExists},
		{CreateTopic{Name: "", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{CreateTopic{Name: "..", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{CreateTopic{Name: "sp ace", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{CreateTopic{Name: "p0", NumPartitions: 0, ReplicationFactor: 1}, kerr.InvalidPartitions},
		{CreateTopic{Name: "r0", NumPartitions: 1, ReplicationFactor: 0}, kerr.InvalidReplicationFactor},
		{CreateTopic{Name: "r3", NumPartitions: 1, ReplicationFactor: 3}, kerr.InvalidReplicationFactor},
		{CreateTopic{Name: "both", NumPartitions: 1, ReplicationFactor: -1, Assignments: [][]int32{{1}}}, kerr.InvalidRequest},
		{CreateTopic{Name: "ghost", NumPartitions: -1, ReplicationFactor: -1, Assignments: [][]int32{{7}}}, kerr.InvalidReplicaAssignment},
		{CreateTopic{Name: "dup", NumPartitions: -1, ReplicationFactor: -1, Assignments: [][]int32{{1, 1}}}, kerr.InvalidReplicaAssignment},
	}
	for _, tc := range cases {
		res := c.CreateTopics(context.Background(), []CreateTopic{tc.topic}, false)
		if res[0].ErrorCode != tc.want.Code {
			t.Errorf("%q: got %v, want %v", tc.topic.Name, kerr.ErrorForCode(res[0].ErrorCode), tc.want)
		}
	}
	// Placement spreads leaders over both brokers.
	res = c.CreateTopics(context.Background(), []CreateTopic{{Name: "spread", NumPartitions: 4, ReplicationFactor: 2}}, false)
	leaders := map[int32]int{}
	for _, p := range c.Image().Topic("spread").Partitions {
		leaders[p.Leader]++
		if len(p.Replicas) != 2 || p.Replicas[0] == p.Replicas[1] {
			t.Fatalf("bad replicas %v", p.Replicas)
		}
	}
	if leaders[1] != 2 || leaders[2] != 2 {
		t.Fatalf("leaders %v", leaders)
	}
	// validate_only creates nothing.
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "dry", NumPartitions: 1, ReplicationFactor: 1}}, true)
	if c.Image().Topic("dry") != nil {
		t.Fatal("validate_only created a topic")
	}
}

func TestReplayRestoresImage(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 1)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "x", NumPartitions: 2, ReplicationFactor: 1}}, false)
	if err := c.SetConfigs(metadata.ResourceTopic, "x", map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	first, _, err := c.AllocateProducerIDs(1)
	if err != nil {
		t.Fatal(err)
	}
	again := New(Config{NodeID: 1}, j)
	j.replay(t, again)
	img := again.Image()
	// A snapshot restores the same image.
	snap, offset, err := again.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored := New(Config{NodeID: 1}, j)
	if err := restored.Restore(snap, offset); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(restored.Image().Records(), img.Records()) {
		t.Fatal("snapshot restore differs from replay")
	}
	if img.Topic("x") == nil || len(img.Topic("x").Partitions) != 2 {
		t.Fatal("topic lost on replay")
	}
	if img.Configs(metadata.ResourceTopic, "x")["retention.ms"] != "1000" {
		t.Fatal("config lost on replay")
	}
	next, _, _ := again.AllocateProducerIDs(1)
	if next <= first {
		t.Fatalf("producer ids reused after replay: %d then %d", first, next)
	}
}

func TestJournalFailureLeavesImageUnchanged(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 1)
	j.fail = errors.New("disk full")
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "y", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("got %v", kerr.ErrorForCode(res[0].ErrorCode))
	}
	j.fail = fmt.Errorf("follower: %w", ErrNotActive)
	res = c.CreateTopics(context.Background(), []CreateTopic{{Name: "y", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("not leader: got %v", kerr.ErrorForCode(res[0].ErrorCode))
	}
	if c.Image().Topic("y") != nil {
		t.Fatal("topic visible though the journal write failed")
	}
}

func TestDeleteAndCreatePartitions(t *testing.T) {
	c := newTestController(t, &memJournal{}, 1)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "z", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if r := c.CreatePartitions(context.Background(), "z", 1, nil, false); r.ErrorCode != kerr.InvalidPartitions.Code {
		t.Fatalf("same count: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := c.CreatePartitions(context.Background(), "z", 3, nil, false); r.ErrorCode != 0 {
		t.Fatalf("grow: %v", r.ErrorMessage)
	}
	if got := len(c.Image().Topic("z").Partitions); got != 3 {
		t.Fatalf("%d partitions", got)
	}
	if r := c.CreatePartitions(context.Background(), "nope", 3, nil, false); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatal("unknown topic accepted")
	}
	id := c.Image().Topic("z").ID
	res := c.DeleteTopics(context.Background(), []metadata.UUID{id, {9}})
	if res[0].ErrorCode != 0 || res[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("delete results %+v", res)
	}
	if c.Image().Topic("z") != nil {
		t.Fatal("topic not deleted")
	}
}

func TestTopicNameRules(t *testing.T) {
	long := fmt.Sprintf("%0249d", 0)
	for name, ok := range map[string]bool{"a": true, "A-b_c.9": true, long: true, long + "0": false, ".": false, "..": false, "a/b": false, "ü": false} {
		if got := ValidateTopicName(name) == nil; got != ok {
			t.Errorf("ValidateTopicName(%q) ok=%v, want %v", name, got, ok)
		}
	}
}

func TestApplyCommittedIsIdempotentByOffset(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 1)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "once", NumPartitions: 1, ReplicationFactor: 1}}, false)
	changes := 0
	c.OnChange(func(old, next *metadata.Image) { changes++ })
	before := c.Image()
	// A replicated journal delivering entries the controller already
	// applied changes nothing.
	j.replay(t, c)
	if c.Image() != before || changes != 0 {
		t.Fatal("re-applying committed entries changed the image")
	}
	// A new entry from another controller applies once, even if delivered twice.
	v := "1"
	value, _ := metadata.Encode(nil, &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "once", Name: "retention.ms", Value: &v})
	next := int64(len(j.entries))
	for range 2 {
		if err := c.ApplyCommitted(next, [][]byte{value}); err != nil {
			t.Fatal(err)
		}
	}
	if changes != 1 || c.Image().Offset != next {
		t.Fatalf("changes %d, offset %d", changes, c.Image().Offset)
	}
	if err := c.ApplyCommitted(next+1, [][]byte{{0xff}}); err == nil {
		t.Fatal("corrupt record applied")
	}
}

func TestFencingMovesAndRestoresLeadership(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 3)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "solo", NumPartitions: 3, ReplicationFactor: 1}, {Name: "trio", NumPartitions: 1, ReplicationFactor: 3}}, false)
	start := time.Unix(1000, 0)
	session := 9 * time.Second
	// The active controller checks every second. Broker 2 heartbeats
	// throughout; broker 3 stops after 5 s.
	for sec := 0; sec <= 16; sec++ {
		now := start.Add(time.Duration(sec) * time.Second)
		for _, id := range []int32{2, 3} {
			if id == 3 && sec > 5 {
				continue
			}
			if err := c.Heartbeat(id, now); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.FenceStale(now, session); err != nil {
			t.Fatal(err)
		}
		if sec == 14 && c.Image().Broker(3).Fenced {
			t.Fatal("fenced before broker.session.timeout.ms passed")
		}
	}
	img := c.Image()
	if !img.Broker(3).Fenced || img.Broker(2).Fenced || img.Broker(1).Fenced {
		t.Fatalf("fenced: 1=%v 2=%v 3=%v", img.Broker(1).Fenced, img.Broker(2).Fenced, img.Broker(3).Fenced)
	}
	for _, p := range img.Topic("solo").Partitions {
		if p.Replicas[0] == 3 && p.Leader != -1 {
			t.Fatalf("RF=1 partition of a fenced broker still led by %d", p.Leader)
		}
	}
	trio := img.Topic("trio").Partitions[0]
	if trio.Leader == 3 || trio.Leader < 0 || slices.Contains(trio.ISR, int32(3)) {
		t.Fatalf("RF=3 partition after fencing: leader %d isr %v", trio.Leader, trio.ISR)
	}
	// Its next heartbeat unfences broker 3 and gives back its offline partitions.
	if err := c.Heartbeat(3, start.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	img = c.Image()
	if img.Broker(3).Fenced {
		t.Fatal("still fenced after a heartbeat")
	}
	for _, p := range img.Topic("solo").Partitions {
		if p.Leader < 0 || p.LeaderEpoch == 0 && p.Replicas[0] == 3 {
			t.Fatalf("partition %d: leader %d epoch %d", p.Partition, p.Leader, p.LeaderEpoch)
		}
	}
	if err := c.Heartbeat(42, start); !errors.Is(err, ErrUnknownBroker) {
		t.Fatalf("heartbeat of an unknown broker: %v", err)
	}
}

func TestRackAwarePlacement(t *testing.T) {
	j := &memJournal{}
	c := New(Config{NodeID: 1, DefaultNumPartitions: 1, DefaultReplicationFactor: 1, DeleteTopicEnable: true}, j)
	racks := map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
	for id := int32(1); id <= 6; id++ {
		rack := racks[id]
		if err := c.Bootstrap("cluster", metadata.RegisterBrokerRecord{BrokerID: id, Rack: &rack, Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9000 + id}}}); err != nil {
			t.Fatal(err)
		}
	}
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "racked", NumPartitions: 12, ReplicationFactor: 3}}, false)
	if res[0].ErrorCode != 0 {
		t.Fatal(res[0].ErrorMessage)
	}
	leaders := map[int32]int{}
	for _, p := range c.Image().Topic("racked").Partitions {
		seen := map[string]bool{}
		for _, r := range p.Replicas {
			if seen[racks[r]] {
				t.Fatalf("partition %d has two replicas in rack %s: %v", p.Partition, racks[r], p.Replicas)
			}
			seen[racks[r]] = true
		}
		leaders[p.Leader]++
	}
	for id := int32(1); id <= 6; id++ {
		if leaders[id] != 2 {
			t.Fatalf("leaders not spread evenly: %v", leaders)
		}
	}
}

func TestElectLeaders(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 3)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "pref", NumPartitions: 3, ReplicationFactor: 3}}, false)
	start := time.Unix(1000, 0)
	// Fence broker 2: partitions it leads move away from their preferred leader.
	for sec := 0; sec <= 12; sec++ {
		now := start.Add(time.Duration(sec) * time.Second)
		c.Heartbeat(3, now)
		if err := c.FenceStale(now, 9*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	p1 := c.Image().Topic("pref").Partitions[1]
	if p1.Replicas[0] != 2 || p1.Leader == 2 {
		t.Fatalf("setup: partition 1 replicas %v leader %d", p1.Replicas, p1.Leader)
	}
	res, err := c.ElectLeaders(context.Background(), false, []PartitionRef{{"pref", 1}, {"nope", 0}})
	if err != nil {
		t.Fatal(err)
	}
	if res[PartitionRef{"pref", 1}] != kerr.PreferredLeaderNotAvailable.Code || res[PartitionRef{"nope", 0}] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("while fenced: %v", res)
	}
	// Broker 2 comes back but is out of the ISR: still not eligible.
	c.Heartbeat(2, start.Add(13*time.Second))
	res, _ = c.ElectLeaders(context.Background(), false, []PartitionRef{{"pref", 1}})
	if res[PartitionRef{"pref", 1}] != kerr.PreferredLeaderNotAvailable.Code {
		t.Fatalf("out of the ISR: %v", res)
	}
	// Back in the ISR (the leader would ask through AlterPartition), the
	// preferred election moves leadership back.
	img := c.Image()
	leader := img.Topic("pref").Partitions[1].Leader
	c.mu.Lock()
	err = c.commitLocked(context.Background(), []metadata.Record{&metadata.PartitionChangeRecord{TopicID: img.Topic("pref").ID, Partition: 1, ISR: []int32{leader, 2}}})
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	res, _ = c.ElectLeaders(context.Background(), false, []PartitionRef{{"pref", 1}})
	if res[PartitionRef{"pref", 1}] != 0 || c.Image().Topic("pref").Partitions[1].Leader != 2 {
		t.Fatalf("preferred election: %v, leader %d", res, c.Image().Topic("pref").Partitions[1].Leader)
	}
	// Partitions already led by their preferred replica need no election.
	for _, p := range c.Image().Topic("pref").Partitions {
		if p.Leader == p.Replicas[0] {
			res, _ = c.ElectLeaders(context.Background(), false, []PartitionRef{{"pref", p.Partition}})
			if res[PartitionRef{"pref", p.Partition}] != kerr.ElectionNotNeeded.Code {
				t.Fatalf("preferred already leads: %v", res)
			}
		}
	}
}
