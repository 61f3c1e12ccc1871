package clustertest

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestShareCoordinatorKilled kills -9 the share coordinator of a share
// group's partition (the leader of its __share_group_state partition, three
// replicas) right after a consumer's acknowledgements were answered: no
// accepted record is delivered again, and every record not accepted is
// delivered to the next consumer (counted).
func TestShareCoordinatorKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200",
		"offsets.topic.num.partitions=3", "offsets.topic.replication.factor=3",
		"share.coordinator.state.topic.num.partitions=3", "share.coordinator.state.topic.replication.factor=3",
		"share.coordinator.state.topic.min.isr=2",
		"group.share.heartbeat.interval.ms=1000", "group.share.min.heartbeat.interval.ms=1000", "group.share.min.record.lock.duration.ms=1000",
		"group.share.record.lock.duration.ms=3000")
	t.Cleanup(func() {
		if t.Failed() {
			logNodeWarnings(t, c)
		}
	})
	const topic, group, total, accepted = "share-failover", "share-failover-workers", 200, 120
	createReplicatedTopic(t, c, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	topics, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	topicID := topics[topic].ID

	first := newClient(t, c.Addrs(), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(500*time.Millisecond))
	go func() {
		// Polls until the share-partition starts (at the log end, 0).
		for ctx.Err() == nil {
			pollCtx, pollCancel := context.WithTimeout(ctx, 200*time.Millisecond)
			n := first.PollRecords(pollCtx, 1).NumRecords()
			pollCancel()
			if n > 0 {
				t.Error("records before any was produced")
			}
			if started(ctx, adm, group, topic) {
				return
			}
		}
	}()
	WaitFor(t, 60*time.Second, func() error {
		if !started(ctx, adm, group, topic) {
			return fmt.Errorf("share-partition of %s not started", group)
		}
		return nil
	})
	producer := acksAllProducer(t, c)
	for i := range total {
		if err := produceSync(ctx, producer, topic, 0, strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Accept the first records delivered, one explicit acknowledgement at a
	// time, until enough are accepted; release the rest polled.
	acceptedKeys := map[string]bool{}
	for len(acceptedKeys) < accepted && ctx.Err() == nil {
		first.PollRecords(ctx, 10).EachRecord(func(r *kgo.Record) {
			if len(acceptedKeys) < accepted {
				r.Ack(kgo.AckAccept)
				acceptedKeys[string(r.Value)] = true
			} else {
				r.Ack(kgo.AckRelease)
			}
		})
		if err := first.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	key := fmt.Sprintf("%s:%s:0", group, base64.RawURLEncoding.EncodeToString(topicID[:]))
	coordinator := findCoordinator(t, c, 2, key)
	victim := c.Nodes[coordinator-1]
	victim.Kill()
	killed := time.Now()
	first.Close()
	rest := c.without(victim)

	second := newClient(t, rest.Addrs(), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(500*time.Millisecond))
	delivered := map[string]int{}
	for len(delivered) < total-accepted && ctx.Err() == nil {
		pollCtx, pollCancel := context.WithTimeout(ctx, time.Second)
		second.PollRecords(pollCtx, 100).EachRecord(func(r *kgo.Record) {
			if acceptedKeys[string(r.Value)] {
				t.Errorf("record %s, accepted before the kill, delivered again", r.Value)
			}
			delivered[string(r.Value)]++
		})
		pollCancel()
	}
	if len(delivered) != total-accepted {
		t.Fatalf("after killing node %d: %d of %d records not accepted were delivered", coordinator, len(delivered), total-accepted)
	}
	t.Logf("killed node %d, share coordinator of %s; the %d records not accepted were delivered again %v later, none of the %d accepted",
		coordinator, key, total-accepted, time.Since(killed).Round(time.Millisecond), accepted)
}

// started reports whether group's share-partition of topic has durable
// state (a start offset).
func started(ctx context.Context, adm *kadm.Client, group, topic string) bool {
	described, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return false
	}
	o, ok := described[group].Offsets.Lookup(topic, 0)
	return ok && o.Err == nil && o.StartOffset >= 0
}
