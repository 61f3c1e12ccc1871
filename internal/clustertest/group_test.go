package clustertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Group coordinator durability: offset commits are written to
// __consumer_offsets with acks=-1, so what the coordinator acknowledged
// survives it, and min.insync.replicas refuses a commit it cannot
// replicate enough.

const groupTopicPartitions = 3

// TestGroupCoordinatorKilledAfterCommit kills -9 a consumer group's
// coordinator right after it acknowledged an offset commit; the next leader
// of the group's __consumer_offsets partition serves exactly the offsets
// acknowledged. Then, with one replica of three left out of the ISR and
// min.insync.replicas=3 on __consumer_offsets, a commit is refused with
// COORDINATOR_NOT_AVAILABLE and is not stored, until min.insync.replicas
// is met again.
func TestGroupCoordinatorKilledAfterCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200",
		"offsets.topic.num.partitions=3", "offsets.topic.replication.factor=3",
		// One request handler per node: a coordinator that kept it while its
		// records replicate would leave none for the follower fetches that
		// replication waits for.
		"num.io.threads=1")
	t.Cleanup(func() {
		if t.Failed() {
			logNodeWarnings(t, c)
		}
	})
	const topic, groupID = "group-failover", "group-failover-consumers"
	createReplicatedTopic(t, c, topic, groupTopicPartitions)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	producer := acksAllProducer(t, c)
	const perPartition = 10
	produceStart := time.Now()
	for p := range int32(groupTopicPartitions) {
		for i := range perPartition {
			if err := produceSync(ctx, producer, topic, p, fmt.Sprintf("p%d-%d", p, i)); err != nil {
				t.Fatal(err)
			}
		}
	}

	producePerRecord := time.Since(produceStart) / (groupTopicPartitions * perPartition)
	consumer := newClient(t, c.Addrs(), kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumed := 0
	for consumed < groupTopicPartitions*perPartition {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d records: %v", consumed, err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		consumed += fetches.NumRecords()
	}
	// Every replica of the group's partition is in sync before the
	// commit, so the kill cannot pick an out-of-sync successor.
	waitFullISR(t, c, "__consumer_offsets", 30*time.Second)

	// Commits answered once replicated, timed beside the acks=all
	// produces above (one record per request, one at a time, both).
	const timedCommits = 20
	offsets := consumer.UncommittedOffsets()
	commitStart := time.Now()
	for range timedCommits {
		commitSync(ctx, t, consumer, offsets)
	}
	t.Logf("offset commit %v a round (acks=all produce of one record: %v a round)",
		time.Since(commitStart)/timedCommits, producePerRecord)

	coordinator := findCoordinator(t, c, 0, groupID)
	victim := c.Nodes[coordinator-1]
	acked := commitSync(ctx, t, consumer, offsets)
	victim.Kill()
	killed := time.Now()
	rest := c.without(victim)
	if len(acked) != groupTopicPartitions {
		t.Fatalf("commit acknowledged for %d partitions, want %d: %v", len(acked), groupTopicPartitions, acked)
	}

	var fetched kadm.OffsetResponses
	WaitFor(t, 60*time.Second, func() error {
		// A fresh client each time: a client keeps the coordinator it
		// found, and right after the kill that may still be the dead node.
		var err error
		fetched, err = fetchOffsets(ctx, rest, groupID)
		return err
	})
	t.Logf("killed node %d, coordinator of %s, right after its commit answer; offsets fetched from node %d %v later",
		coordinator, groupID, findCoordinator(t, rest, 0, groupID), time.Since(killed))
	for p := range int32(groupTopicPartitions) {
		got, ok := fetched.Lookup(topic, p)
		want := acked[p]
		if !ok || got.At != want.Offset || got.LeaderEpoch != want.Epoch {
			t.Errorf("partition %d: fetched %+v (found %v), acknowledged %+v", p, got.Offset, ok, want)
		}
	}

	checkMinInsyncRefusesCommit(ctx, t, rest, topic)
}

// fetchOffsets fetches groupID's committed offsets with a new client.
func fetchOffsets(ctx context.Context, c *Cluster, groupID string) (kadm.OffsetResponses, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fetched, err := kadm.NewClient(cl).FetchOffsets(ctx, groupID)
	if err == nil {
		err = fetched.Error()
	}
	return fetched, err
}

// commitSync commits offsets for the consumer's group and returns those the
// coordinator acknowledged, by partition.
func commitSync(ctx context.Context, t *testing.T, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) map[int32]kgo.EpochOffset {
	t.Helper()
	acked := map[int32]kgo.EpochOffset{}
	var commitErr error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for i, rt := range resp.Topics {
			for j, rp := range rt.Partitions {
				if rp.ErrorCode != 0 {
					commitErr = errors.Join(commitErr, fmt.Errorf("%s-%d: %w", rt.Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode)))
					continue
				}
				sent := req.Topics[i].Partitions[j]
				acked[rp.Partition] = kgo.EpochOffset{Epoch: sent.LeaderEpoch, Offset: sent.Offset}
			}
		}
	})
	if commitErr != nil {
		t.Fatalf("commit: %v", commitErr)
	}
	return acked
}

// checkMinInsyncRefusesCommit raises min.insync.replicas of
// __consumer_offsets above its ISR (two of its three replicas are alive):
// a commit is refused with COORDINATOR_NOT_AVAILABLE, as Kafka maps the
// NOT_ENOUGH_REPLICAS of its acks=-1 append, and nothing is stored; once
// the setting is lowered again the same commit is acknowledged.
func checkMinInsyncRefusesCommit(ctx context.Context, t *testing.T, c *Cluster, topic string) {
	t.Helper()
	WaitFor(t, 30*time.Second, func() error {
		st, err := topicState(ctx, c.Nodes[0].Addr(), "__consumer_offsets")
		if err != nil {
			return err
		}
		for p, s := range st {
			if len(s.isr) != len(c.Nodes) || s.leader < 0 {
				return fmt.Errorf("__consumer_offsets-%d: leader %d isr %v", p, s.leader, s.isr)
			}
		}
		return nil
	})
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	setMinISR := func(v string) {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "min.insync.replicas", Value: &v}}, "__consumer_offsets")
		if err == nil {
			_, err = resp.On("__consumer_offsets", nil)
		}
		if err != nil {
			t.Fatalf("setting min.insync.replicas=%s on __consumer_offsets: %v", v, err)
		}
	}
	setMinISR("3")

	// The setting reaches the coordinators through the metadata log:
	// commit under fresh group ids until one is refused, and check that
	// the refused commit left nothing behind.
	raw := newClient(t, c.Addrs(), kgo.MaxVersions(kversion.V3_9_0()))
	var refused string
	for attempt := 0; refused == ""; attempt++ {
		if ctx.Err() != nil {
			t.Fatal("no commit was refused with min.insync.replicas=3 and two replicas in sync")
		}
		groupID := fmt.Sprintf("under-min-isr-%d", attempt)
		switch code := simpleCommit(ctx, t, c, raw, groupID, topic, 7); code {
		case 0:
			continue
		case kerr.CoordinatorNotAvailable.Code:
			refused = groupID
		default:
			t.Fatalf("commit under min.insync.replicas=3: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(code))
		}
	}
	fetched, err := fetchOffsets(ctx, c, refused)
	if err != nil {
		t.Fatalf("fetching the refused group's offsets: %v", err)
	}
	if o, ok := fetched.Lookup(topic, 0); ok && o.At >= 0 {
		t.Errorf("the refused commit of %s was stored: %+v", refused, o.Offset)
	}

	setMinISR("2")
	WaitFor(t, 30*time.Second, func() error {
		if code := simpleCommit(ctx, t, c, raw, refused, topic, 7); code != 0 {
			return kerr.ErrorForCode(code)
		}
		return nil
	})
	fetched, err = fetchOffsets(ctx, c, refused)
	if err != nil {
		t.Fatalf("fetching %s's offsets: %v", refused, err)
	}
	if o, ok := fetched.Lookup(topic, 0); !ok || o.At != 7 {
		t.Errorf("%s: fetched %+v (found %v) after the acknowledged commit of offset 7", refused, o.Offset, ok)
	}
	t.Logf("min.insync.replicas=3 with two replicas in sync: %s's commit refused with COORDINATOR_NOT_AVAILABLE, stored nothing; acknowledged at min.insync.replicas=2", refused)
}

// simpleCommit commits offset for partition 0 of topic under groupID
// without group membership (generation -1), sent once to the group's
// coordinator without retries, and returns the partition's error code.
func simpleCommit(ctx context.Context, t *testing.T, c *Cluster, cl *kgo.Client, groupID, topic string, offset int64) int16 {
	t.Helper()
	node := findCoordinator(t, c, 0, groupID)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = groupID
	req.Generation = -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition = 0
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, cl.Broker(int(node)))
	if err != nil {
		t.Fatalf("OffsetCommit to node %d: %v", node, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("OffsetCommit answer: %+v", resp)
	}
	code := resp.Topics[0].Partitions[0].ErrorCode
	if code == kerr.NotCoordinator.Code || code == kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("OffsetCommit to node %d: %v", node, kerr.ErrorForCode(code))
	}
	return code
}
