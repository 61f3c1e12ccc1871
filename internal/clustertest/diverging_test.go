package clustertest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReplicationDivergingEpoch gives a replica a divergent tail for real:
// with both followers down, the leader takes acks=1 writes no one else has
// and is killed; the followers come back, one leads a new epoch and takes
// acks=all writes at the same offsets. When the old leader restarts, its
// first fetch names its last epoch (KIP-320): the new leader answers with a
// diverging epoch, and the old leader cuts its tail and catches up without
// an OffsetForLeaderEpoch round trip.
func TestReplicationDivergingEpoch(t *testing.T) {
	c := replicationCluster(t)
	const topic = "replicated-diverging"
	createReplicatedTopic(t, c, topic, 1)
	producer := acksAllProducer(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const before, after, lost = 10, 20, 5
	for i := range before {
		if err := produceSync(ctx, producer, topic, 0, strconv.Itoa(i)); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	old := c.Nodes[st[0].leader-1]
	var followers []*Node
	for _, n := range c.Nodes {
		if n != old {
			followers = append(followers, n)
		}
	}

	// The followers go down; the leader alone takes acks=1 writes.
	for _, n := range followers {
		n.Kill()
	}
	alone := newClient(t, []string{old.Addr()},
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(3))
	for i := range lost {
		r := &kgo.Record{Topic: topic, Partition: 0, Value: []byte("lost-" + strconv.Itoa(i))}
		if err := alone.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("acks=1 produce to the lone leader: %v", err)
		}
		if r.Offset != int64(before+i) {
			t.Fatalf("acks=1 record at offset %d, want %d", r.Offset, before+i)
		}
	}
	old.Kill()

	// The followers come back and one of them leads a new epoch.
	var wg sync.WaitGroup
	for _, n := range followers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.Start()
		}()
	}
	wg.Wait()
	var newLeader int32
	WaitFor(t, 60*time.Second, func() error {
		st, err := topicState(ctx, followers[0].Addr(), topic)
		if err != nil {
			return err
		}
		if l := st[0].leader; l < 0 || c.Nodes[l-1] == old {
			return fmt.Errorf("leader %d epoch %d isr %v", l, st[0].epoch, st[0].isr)
		}
		newLeader = st[0].leader
		return nil
	})
	survivors := acksAllProducer(t, &Cluster{Nodes: followers})
	for i := range after {
		if err := produceSync(ctx, survivors, topic, 0, strconv.Itoa(before+i)); err != nil {
			t.Fatalf("produce %d to the new leader %d: %v", before+i, newLeader, err)
		}
	}

	// The old leader restarts as a follower with offsets 10-14 from the
	// old epoch, where the new leader has other records.
	restarted := time.Now()
	old.Start()
	waitFullISR(t, c, topic, 60*time.Second)
	t.Logf("old leader rejoined the ISR %v after restart", time.Since(restarted).Round(time.Millisecond))
	var diverging, viaOffsetForLeaderEpoch []string
	old.LogLines(func(line string) {
		switch {
		case strings.Contains(line, `msg="truncating follower log on a diverging epoch"`):
			diverging = append(diverging, line)
		case strings.Contains(line, `msg="truncating follower log"`):
			viaOffsetForLeaderEpoch = append(viaOffsetForLeaderEpoch, line)
		}
	})
	if len(diverging) == 0 || !strings.Contains(diverging[0], "from=15") || !strings.Contains(diverging[0], "to=10") {
		t.Fatalf("no truncation from 15 to 10 on a diverging epoch in the old leader's log: %q", diverging)
	}
	if len(viaOffsetForLeaderEpoch) > 0 {
		t.Fatalf("the old leader truncated through OffsetForLeaderEpoch: %q", viaOffsetForLeaderEpoch)
	}
	t.Logf("truncation: %s", diverging[0])

	values, _ := readPartition(t, c, topic, 0)
	checkSequence(t, values, before+after)
	compareReplicas(t, c, topic, 1)
}
