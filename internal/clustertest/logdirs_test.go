package clustertest

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAlterReplicaLogDirsLeaderAndFollower moves both the leader's and a
// follower's replica of an RF=3 partition to the other log dir of their
// brokers (AlterReplicaLogDirs, through kadm) while an idempotent acks=all
// producer writes to it: both moves complete, the follower keeps
// replicating from its new dir (the ISR is whole again), and every
// acknowledged record is in the log exactly once, in order.
func TestAlterReplicaLogDirsLeaderAndFollower(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dirs := make([][]string, 3)
	for i := range dirs {
		base := t.TempDir()
		dirs[i] = []string{filepath.Join(base, "disk0"), filepath.Join(base, "disk1")}
	}
	c := StartClusterEach(t, 3, func(i int) []string { return []string{"log.dirs=" + strings.Join(dirs[i], ",")} },
		"replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200")
	const topic = "jbod"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admClient := newClient(t, c.Addrs())
	adm := kadm.NewClient(admClient)
	createAssignedTopic(t, ctx, admClient, topic, []int32{1, 2, 3}, "2")
	waitReplicas(t, c, topic, 0, []int32{1, 2, 3}, 30*time.Second)

	producer := acksAllProducer(t, c)
	var (
		mu       sync.Mutex
		acked    []int
		failures []error
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for seq := 0; ; seq++ {
			select {
			case <-stop:
				return
			default:
			}
			value := []byte(strconv.Itoa(seq) + " " + strings.Repeat("x", 500))
			err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: value}).FirstErr()
			mu.Lock()
			if err != nil {
				failures = append(failures, err)
			} else {
				acked = append(acked, seq)
			}
			mu.Unlock()
		}
	}()
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	WaitFor(t, 30*time.Second, func() error {
		if n := ackedCount(); n < 2000 {
			return fmt.Errorf("%d records acknowledged", n)
		}
		return nil
	})

	// Broker 1 leads, broker 2 follows: move both.
	dests := map[int32]string{}
	for _, broker := range []int32{1, 2} {
		current := replicaDirOn(t, ctx, adm, broker, topic)
		dest := dirs[broker-1][0]
		if current == dest {
			dest = dirs[broker-1][1]
		}
		dests[broker] = dest
		var req kadm.AlterReplicaLogDirsReq
		req.Add(dest, kadm.TopicsSet{topic: {0: {}}})
		resp, err := adm.AlterBrokerReplicaLogDirs(ctx, broker, req)
		if err != nil {
			t.Fatal(err)
		}
		if r := resp[topic][0]; r.Err != nil {
			t.Fatalf("move on broker %d: %v", broker, r.Err)
		}
	}
	for broker, dest := range dests {
		WaitFor(t, 60*time.Second, func() error {
			if got := replicaDirOn(t, ctx, adm, broker, topic); got != dest {
				return fmt.Errorf("broker %d: replica in %q, want %q", broker, got, dest)
			}
			return nil
		})
	}
	// The moved follower still replicates: more writes, and the ISR whole.
	moved := ackedCount()
	WaitFor(t, 30*time.Second, func() error {
		if n := ackedCount(); n < moved+500 {
			return fmt.Errorf("%d records acknowledged since the moves", n-moved)
		}
		return nil
	})
	close(stop)
	<-done
	waitReplicas(t, c, topic, 0, []int32{1, 2, 3}, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("%d produce failures during the moves, first: %v", len(failures), failures[0])
	}
	values, _ := readPartition(t, c, topic, 0)
	if len(values) != len(acked) {
		t.Fatalf("the log holds %d records, %d were acknowledged", len(values), len(acked))
	}
	for i, v := range values {
		if seq, _, _ := strings.Cut(v, " "); seq != strconv.Itoa(acked[i]) {
			t.Fatalf("offset %d holds record %s, want %d", i, seq, acked[i])
		}
	}
}

// replicaDirOn is the log dir broker holds topic-0's current replica in
// ("" while there is none), as DescribeLogDirs answers; a dir holding a
// future replica of it does not count.
func replicaDirOn(t *testing.T, ctx context.Context, adm *kadm.Client, broker int32, topic string) string {
	t.Helper()
	described, err := adm.DescribeBrokerLogDirs(ctx, broker, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	current, future := "", false
	for _, d := range described {
		if p, ok := d.Topics.Lookup(topic, 0); ok {
			if p.IsFuture {
				future = true
			} else {
				current = d.Dir
			}
		}
	}
	if future {
		return current + " (moving)"
	}
	return current
}
