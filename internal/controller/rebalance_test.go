package controller

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// changePartition commits a leader and ISR change, as an election or an
// AlterPartition would.
func changePartition(t *testing.T, c *Controller, topic string, partition, leader int32, isr []int32) {
	t.Helper()
	tp := c.Image().Topic(topic)
	c.mu.Lock()
	err := c.commitLocked(context.Background(), []metadata.Record{&metadata.PartitionChangeRecord{TopicID: tp.ID, Partition: partition, Leader: &leader, ISR: isr}})
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
}

// preferredBy returns the partitions of topic whose first replica is broker.
func preferredBy(c *Controller, topic string, broker int32) []*metadata.Partition {
	var out []*metadata.Partition
	for _, p := range c.Image().Topic(topic).Partitions {
		if p.Replicas[0] == broker {
			out = append(out, p)
		}
	}
	return out
}

func TestLeaderImbalanceExceeds(t *testing.T) {
	cases := []struct {
		l          LeaderImbalance
		percentage int32
		want       bool
	}{
		{LeaderImbalance{Preferred: 10, NotLeading: 1}, 10, false}, // exactly 10%: not above
		{LeaderImbalance{Preferred: 10, NotLeading: 2}, 10, true},
		{LeaderImbalance{Preferred: 3, NotLeading: 1}, 33, true}, // 33.3% > 33%
		{LeaderImbalance{Preferred: 3, NotLeading: 1}, 34, false},
		{LeaderImbalance{Preferred: 4, NotLeading: 0}, 0, false},
		{LeaderImbalance{Preferred: 4, NotLeading: 1}, 0, true},
		{LeaderImbalance{Preferred: 4, NotLeading: 4}, 100, false},
		{LeaderImbalance{Preferred: 0, NotLeading: 0}, 0, false},
	}
	for _, tc := range cases {
		if got := tc.l.Exceeds(tc.percentage); got != tc.want {
			t.Errorf("%d of %d above %d%%: got %v, want %v", tc.l.NotLeading, tc.l.Preferred, tc.percentage, got, tc.want)
		}
	}
}

func TestBalanceLeaders(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 3)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "bal", NumPartitions: 9, ReplicationFactor: 3}}, false)
	moved, err := c.BalanceLeaders(10)
	if err != nil || len(moved) != 0 {
		t.Fatalf("balanced cluster: moved %v, err %v", moved, err)
	}
	for _, l := range LeaderImbalances(c.Image()) {
		if l.Preferred != 3 || l.NotLeading != 0 {
			t.Fatalf("placement: %+v", l)
		}
	}

	// Broker 2 loses one of its three preferred leaderships: 33%.
	mine := preferredBy(c, "bal", 2)
	first := mine[0]
	changePartition(t, c, "bal", first.Partition, first.Replicas[1], first.Replicas)
	if moved, _ := c.BalanceLeaders(34); len(moved) != 0 {
		t.Fatalf("33%% imbalance under a 34%% threshold moved %v", moved)
	}
	if got := c.Image().Topic("bal").Partitions[first.Partition].Leader; got != first.Replicas[1] {
		t.Fatalf("leader %d after a rebalance that should not run", got)
	}

	// A second partition moves off broker 2, and broker 2 falls out of its
	// ISR: 67%, but only the partition with broker 2 in sync moves back.
	second := mine[1]
	changePartition(t, c, "bal", second.Partition, second.Replicas[1], second.Replicas[1:])
	moved, err = c.BalanceLeaders(34)
	if err != nil {
		t.Fatal(err)
	}
	if want := []PartitionRef{{"bal", first.Partition}}; !slices.Equal(moved, want) {
		t.Fatalf("moved %v, want %v", moved, want)
	}
	img := c.Image()
	if p := img.Topic("bal").Partitions[first.Partition]; p.Leader != 2 || p.LeaderEpoch <= first.LeaderEpoch {
		t.Fatalf("partition %d: leader %d epoch %d (was %d)", p.Partition, p.Leader, p.LeaderEpoch, first.LeaderEpoch)
	}
	if p := img.Topic("bal").Partitions[second.Partition]; p.Leader == 2 {
		t.Fatalf("partition %d moved to a replica outside its ISR %v", p.Partition, p.ISR)
	}
	for _, l := range LeaderImbalances(img) {
		if l.Broker == 2 && l.NotLeading != 1 {
			t.Fatalf("broker 2 after the rebalance: %+v", l)
		}
	}

	// Broker 2 back in the ISR but fenced: nothing moves; unfenced, it leads
	// again, and another rebalance has nothing to do.
	changePartition(t, c, "bal", second.Partition, second.Replicas[1], second.Replicas)
	c.mu.Lock()
	b := c.Image().Broker(2)
	err = c.commitLocked(context.Background(), []metadata.Record{&metadata.RegisterBrokerRecord{BrokerID: 2, Endpoints: b.Endpoints, Fenced: true}})
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if moved, _ := c.BalanceLeaders(0); len(moved) != 0 {
		t.Fatalf("moved %v to a fenced broker", moved)
	}
	c.mu.Lock()
	err = c.commitLocked(context.Background(), []metadata.Record{&metadata.RegisterBrokerRecord{BrokerID: 2, Endpoints: b.Endpoints, Fenced: false}})
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	moved, _ = c.BalanceLeaders(0)
	if want := []PartitionRef{{"bal", second.Partition}}; !slices.Equal(moved, want) {
		t.Fatalf("moved %v, want %v", moved, want)
	}
	for _, l := range LeaderImbalances(c.Image()) {
		if l.NotLeading != 0 {
			t.Fatalf("after the last rebalance: %+v", l)
		}
	}
	if moved, _ := c.BalanceLeaders(0); len(moved) != 0 {
		t.Fatalf("balanced cluster: moved %v", moved)
	}

	// A controller that is not active refuses.
	j.fail = ErrNotActive
	if _, err := c.BalanceLeaders(10); !errors.Is(err, ErrNotActive) {
		t.Fatalf("inactive controller: %v", err)
	}
}

// TestBalanceLeadersOfflinePartition: a partition with no leader counts
// against its preferred replica and gets it back once it is in the ISR.
func TestBalanceLeadersOfflinePartition(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 2)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "off", NumPartitions: 2, ReplicationFactor: 2}}, false)
	p := c.Image().Topic("off").Partitions[0]
	changePartition(t, c, "off", 0, -1, p.Replicas[:1])
	moved, err := c.BalanceLeaders(10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []PartitionRef{{"off", 0}}; !slices.Equal(moved, want) || c.Image().Topic("off").Partitions[0].Leader != p.Replicas[0] {
		t.Fatalf("moved %v, leader %d", moved, c.Image().Topic("off").Partitions[0].Leader)
	}
}

// TestBalanceLeadersIsBounded: one rebalance moves at most 1000
// leaderships; the next run moves the rest.
func TestBalanceLeadersIsBounded(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 2)
	c.CreateTopics(context.Background(), []CreateTopic{{Name: "many", NumPartitions: 2400, ReplicationFactor: 2}}, false)
	tp := c.Image().Topic("many")
	var recs []metadata.Record
	for _, p := range tp.Partitions {
		if p.Replicas[0] == 2 {
			leader := p.Replicas[1]
			recs = append(recs, &metadata.PartitionChangeRecord{TopicID: tp.ID, Partition: p.Partition, Leader: &leader})
		}
	}
	c.mu.Lock()
	err := c.commitLocked(context.Background(), recs)
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.BalanceLeaders(10)
	if err != nil || len(first) != maxElectionsPerRebalance {
		t.Fatalf("first run moved %d (err %v), want %d", len(first), err, maxElectionsPerRebalance)
	}
	second, _ := c.BalanceLeaders(10)
	if len(first)+len(second) != len(recs) {
		t.Fatalf("moved %d then %d of %d", len(first), len(second), len(recs))
	}
}
