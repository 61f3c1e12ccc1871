package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// findGroupCoordinator asks the node at addr for a group's coordinator and
// returns the answer's error code and node.
func findGroupCoordinator(ctx context.Context, addr, group string) (int16, int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = group
	req.CoordinatorKeys = []string{group}
	resp, err := tryRequestOn[*kmsg.FindCoordinatorResponse](ctx, addr, req)
	if err != nil {
		return 0, -1, err
	}
	if len(resp.Coordinators) == 1 {
		return resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID, nil
	}
	return resp.ErrorCode, resp.NodeID, nil
}

// TestOffsetsTopicWaitsForItsReplicationFactor: as in Kafka, the first
// FindCoordinator of a cluster with fewer live brokers than
// offsets.topic.replication.factor answers COORDINATOR_NOT_AVAILABLE and
// creates nothing, rather than leaving __consumer_offsets with fewer
// replicas for good; once the brokers are back it is created with every
// replica.
func TestOffsetsTopicWaitsForItsReplicationFactor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "offsets.topic.num.partitions=3")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	down := c.Nodes[2]
	down.Kill()
	addr := c.Nodes[0].Addr()
	WaitFor(t, 30*time.Second, func() error {
		brokers, err := brokerCount(addr)
		if err != nil {
			return err
		}
		if brokers != 2 {
			return fmt.Errorf("%d live brokers, waiting for 2", brokers)
		}
		return nil
	})

	code, _, err := findGroupCoordinator(ctx, addr, "early")
	if err != nil {
		t.Fatal(err)
	}
	if code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("FindCoordinator with 2 of 3 brokers alive: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(code))
	}
	md, err := metadataOf(ctx, t, addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range md.Topics {
		if topic.Topic != nil && *topic.Topic == "__consumer_offsets" {
			t.Fatalf("__consumer_offsets was created with 2 of 3 brokers alive: %d partitions, replicas %v", len(topic.Partitions), topic.Partitions[0].Replicas)
		}
	}

	down.Start()
	WaitFor(t, 60*time.Second, func() error {
		code, node, err := findGroupCoordinator(ctx, addr, "early")
		if err != nil {
			return err
		}
		if code != 0 || node < 1 {
			return fmt.Errorf("FindCoordinator: %v, node %d", kerr.ErrorForCode(code), node)
		}
		return nil
	})
	md, err = metadataOf(ctx, t, addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range md.Topics {
		if topic.Topic != nil && *topic.Topic == "__consumer_offsets" {
			for _, p := range topic.Partitions {
				if len(p.Replicas) != 3 {
					t.Fatalf("__consumer_offsets partition %d has replicas %v, want 3", p.Partition, p.Replicas)
				}
			}
			return
		}
	}
	t.Fatal("__consumer_offsets is not in the metadata after FindCoordinator succeeded")
}
