package clustertest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicPartitions reads topic's partitions from one node's Metadata.
func topicPartitions(ctx context.Context, t *testing.T, addr, topic string) ([]kmsg.MetadataResponseTopicPartition, error) {
	md, err := metadataOf(ctx, t, addr)
	if err != nil {
		return nil, err
	}
	for _, mt := range md.Topics {
		if mt.Topic != nil && *mt.Topic == topic {
			return mt.Partitions, nil
		}
	}
	return nil, errors.New("topic not visible")
}

// TestAutoLeaderRebalance restarts a broker: its leaderships move to other
// replicas while it is down, and once it is back in the ISRs the active
// controller's periodic rebalance makes it leader of its preferred
// partitions again, without any ElectLeaders request.
func TestAutoLeaderRebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "leader.imbalance.check.interval.seconds=1", "replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200")
	const topic = "rebalanced"
	createReplicatedTopic(t, c, topic, replicatedPartitions)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	producer := acksAllProducer(t, c)
	for p := range int32(replicatedPartitions) {
		if err := produceSync(ctx, producer, topic, p, "before"); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := topicPartitions(ctx, t, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	const restarted = int32(2)
	preferred := 0
	for _, p := range parts {
		if p.Replicas[0] == restarted {
			preferred++
		}
	}
	if preferred == 0 {
		t.Fatalf("broker %d is the preferred replica of no partition: %+v", restarted, parts)
	}

	node := c.Nodes[restarted-1]
	node.Kill()
	killed := time.Now()
	others := []string{c.Nodes[0].Addr(), c.Nodes[2].Addr()}
	WaitFor(t, 60*time.Second, func() error {
		parts, err := topicPartitions(ctx, t, others[0], topic)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if p.Leader == restarted || p.Leader < 0 {
				return fmt.Errorf("partition %d leader %d", p.Partition, p.Leader)
			}
		}
		return nil
	})
	t.Logf("leadership left broker %d %v after SIGKILL", restarted, time.Since(killed).Round(time.Millisecond))
	// Writes while it is down, so it has to catch up before rejoining.
	for p := range int32(replicatedPartitions) {
		for i := range 20 {
			if err := produceSync(ctx, producer, topic, p, "during-"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
	}

	node.Start()
	started := time.Now()
	WaitFor(t, 90*time.Second, func() error {
		for _, addr := range c.Addrs() {
			parts, err := topicPartitions(ctx, t, addr, topic)
			if err != nil {
				return err
			}
			for _, p := range parts {
				if p.Leader != p.Replicas[0] {
					return fmt.Errorf("node %s: partition %d led by %d, preferred %d, isr %v", addr, p.Partition, p.Leader, p.Replicas[0], p.ISR)
				}
			}
		}
		return nil
	})
	t.Logf("broker %d leads its %d preferred partitions again %v after restart", restarted, preferred, time.Since(started).Round(time.Millisecond))

	// The partitions it leads again take writes and hold every record.
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(replicatedPartitions) {
		if err := produceSync(ctx, producer, topic, p, "after"); err != nil {
			t.Fatalf("produce to partition %d after the rebalance: %v", p, err)
		}
		end, _ := ends.Lookup(topic, p)
		if end.Offset != 21 {
			t.Fatalf("partition %d end offset %d, want 21", p, end.Offset)
		}
	}
}
