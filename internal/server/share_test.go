package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// shareTestNode is a node with share-group timings short enough for tests:
// one-second heartbeats and a two-second record lock.
func shareTestNode(t *testing.T, overrides ...string) *testNode {
	return startTestNode(t, append([]string{
		"group.share.heartbeat.interval.ms=1000", "group.share.min.heartbeat.interval.ms=1000",
		"group.share.min.record.lock.duration.ms=1000",
		"group.share.record.lock.duration.ms=2000",
	}, overrides...)...)
}

// shareConsumer is a kgo share-group consumer of topic.
func shareConsumer(t *testing.T, tn *testNode, group, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return tn.client(append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)
}

// waitSharePartitions polls until the share-partitions of group on every
// partition of topic exist: the consumers have fetched them, so records
// produced from now on are delivered (share.auto.offset.reset=latest).
func waitSharePartitions(t *testing.T, tn *testNode, group, topic string, partitions int32) {
	t.Helper()
	topicID := tn.node.broker.Image().Topic(topic).ID
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := int32(0)
		for p := range partitions {
			if _, ok := tn.node.broker.SharePartitionStartOffset(group, topicID, p); ok {
				ready++
			}
		}
		if ready == partitions {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("share-partitions of %s on %s: %d of %d started", group, topic, ready, partitions)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func produceShareRecords(t *testing.T, tn *testNode, topic string, from, to int) {
	t.Helper()
	producer := tn.client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := from; i < to; i++ {
		wg.Add(1)
		producer.Produce(context.Background(), &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte("v")}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
}

// TestShareGroupKgoConsumersShareOnePartitionSet: three kgo share consumers
// of one group over six partitions each get records, and together get
// every record exactly once, acknowledged by the next poll's automatic
// ACCEPT; ShareGroupDescribe shows the three members with two partitions
// each.
func TestShareGroupKgoConsumersShareOnePartitionSet(t *testing.T) {
	// The default lock: a slow (race-detector) run must not see locks
	// time out while records wait for the next poll's acknowledgement.
	tn := shareTestNode(t, "group.share.record.lock.duration.ms=30000")
	const topic, group, partitions = "share-many", "sg-many", 6
	const total = 100000
	mustCreateTopic(t, tn.admin(), topic, partitions, nil)
	var mu sync.Mutex
	seen := make(map[int]int, total)
	perConsumer := make([]int, 3)
	redelivered := 0
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var wg sync.WaitGroup
	consumers := make([]*kgo.Client, 3)
	for i := range consumers {
		consumers[i] = shareConsumer(t, tn, group, topic)
	}
	for i, cl := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fetches := cl.PollRecords(ctx, 1000)
				mu.Lock()
				fetches.EachRecord(func(r *kgo.Record) {
					k, _ := strconv.Atoi(string(r.Key))
					seen[k]++
					perConsumer[i]++
					if r.DeliveryCount() > 1 {
						redelivered++
					}
				})
				mu.Unlock()
			}
		}()
	}
	waitSharePartitions(t, tn, group, topic, partitions)
	start := time.Now()
	produceShareRecords(t, tn, topic, 0, total)
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d distinct of %d records", n, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	// Every member ends up with two of the six partitions, taken on its
	// next heartbeat.
	eventually(t, 20*time.Second, "each member to own two partitions", func() bool {
		described, err := tn.admin().DescribeShareGroups(testContext(t), group)
		if err != nil || described[group].Err != nil || len(described[group].Members) != 3 {
			return false
		}
		for _, m := range described[group].Members {
			n := 0
			for _, ps := range m.Assignment {
				n += len(ps)
			}
			if n != 2 {
				return false
			}
		}
		return true
	})
	cancel()
	wg.Wait()
	// Closing the consumers sends the last automatic acknowledgements:
	// every share-partition then starts past its last record.
	for _, cl := range consumers {
		cl.Close()
	}
	topicID := tn.node.broker.Image().Topic(topic).ID
	for p := range int32(partitions) {
		start, _ := tn.node.broker.SharePartitionStartOffset(group, topicID, p)
		if end := tn.node.partitions.Get(topic, p).HighWatermark(); start != end {
			t.Errorf("partition %d: share-partition start %d, log end %d: not everything was acknowledged", p, start, end)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("record %d delivered %d times", k, n)
		}
	}
	for i, n := range perConsumer {
		if n == 0 {
			t.Errorf("consumer %d got no records: %v", i, perConsumer)
		}
	}
	if redelivered != 0 {
		t.Errorf("%d redeliveries without failures", redelivered)
	}
	// The reference, measured in the same run: one plain consumer reading
	// the same records from the start, without a group.
	plain := tn.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	plainCtx := testContext(t)
	plainStart := time.Now()
	for read := 0; read < total && plainCtx.Err() == nil; {
		read += plain.PollFetches(plainCtx).NumRecords()
	}
	plainElapsed := time.Since(plainStart)
	t.Logf("%d records over 3 share consumers, each acknowledged, in %v (%.0f records/s), per consumer %v; one plain consumer read them in %v (%.0f records/s)",
		total, elapsed, float64(total)/elapsed.Seconds(), perConsumer, plainElapsed, float64(total)/plainElapsed.Seconds())
}

// severableDialer dials normally until severed; then every connection it
// made is closed and new dials fail, as if the client's process died.
type severableDialer struct {
	mu      sync.Mutex
	severed bool
	conns   []net.Conn
}

func (d *severableDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.severed {
		return nil, errors.New("severed")
	}
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *severableDialer) sever() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.severed = true
	for _, c := range d.conns {
		c.Close()
	}
}

// TestShareGroupKgoKilledConsumerRecordsRedelivered: a consumer that dies
// holding acquired records (its connections cut, no acknowledgement or
// release sent) has them delivered to another consumer once the
// two-second lock times out, with delivery count 2.
func TestShareGroupKgoKilledConsumerRecordsRedelivered(t *testing.T) {
	tn := shareTestNode(t)
	const topic, group = "share-killed", "sg-killed"
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	dialer := &severableDialer{}
	victim := shareConsumer(t, tn, group, topic, kgo.Dialer(dialer.dial))
	ctx := testContext(t)
	go func() {
		// Poll until records arrive, then never again: a next poll would
		// acknowledge them.
		for ctx.Err() == nil && victim.PollRecords(ctx, 1).NumRecords() == 0 {
		}
	}()
	waitSharePartitions(t, tn, group, topic, 1)
	produceShareRecords(t, tn, topic, 0, 10)
	topicID := tn.node.broker.Image().Topic(topic).ID
	// Wait until the victim holds records, then kill it.
	deadline := time.Now().Add(30 * time.Second)
	for tn.node.broker.ShareAcquiredCount(group, topicID, 0) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the victim acquired nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	killedAt := time.Now()
	dialer.sever()
	survivor := shareConsumer(t, tn, group, topic)
	got := map[string]int32{}
	for len(got) < 10 {
		fetches := survivor.PollRecords(ctx, 100)
		if ctx.Err() != nil {
			t.Fatalf("survivor got %d of 10 records: %v", len(got), got)
		}
		fetches.EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r.DeliveryCount() })
	}
	redelivered := 0
	for _, dc := range got {
		if dc == 2 {
			redelivered++
		}
	}
	if redelivered == 0 {
		t.Fatalf("no record was redelivered: %v", got)
	}
	t.Logf("%d records redelivered %v after the kill", redelivered, time.Since(killedAt).Round(time.Millisecond))
}

// TestShareGroupKgoPoisonRecordArchived: a record released by every
// delivery is delivered group.share.delivery.count.limit times and then
// archived, never again; a rejected record is never redelivered, and the
// share-partition start offset moves past both.
func TestShareGroupKgoPoisonRecordArchived(t *testing.T) {
	tn := shareTestNode(t, "group.share.delivery.count.limit=3")
	const topic, group = "share-poison", "sg-poison"
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	cl := shareConsumer(t, tn, group, topic)
	ctx := testContext(t)
	// The first poll starts the share-partition; nothing is there yet.
	pollCtx, cancel := context.WithTimeout(ctx, time.Second)
	cl.PollRecords(pollCtx, 1)
	cancel()
	waitSharePartitions(t, tn, group, topic, 1)
	produceShareRecords(t, tn, topic, 0, 3) // 0: released always, 1: rejected, 2: accepted
	deliveries := map[string][]int32{}
	topicID := tn.node.broker.Image().Topic(topic).ID
	deadline := time.Now().Add(30 * time.Second)
	for {
		start, _ := tn.node.broker.SharePartitionStartOffset(group, topicID, 0)
		if start == 3 && len(deliveries["0"]) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("start offset %d, deliveries %v", start, deliveries)
		}
		pollCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fetches := cl.PollRecords(pollCtx, 10)
		cancel()
		fetches.EachRecord(func(r *kgo.Record) {
			k := string(r.Key)
			deliveries[k] = append(deliveries[k], r.DeliveryCount())
			switch k {
			case "0":
				r.Ack(kgo.AckRelease)
			case "1":
				r.Ack(kgo.AckReject)
			default:
				r.Ack(kgo.AckAccept)
			}
		})
		if err := cl.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"0": "[1 2 3]", "1": "[1]", "2": "[1]"}
	for k, w := range want {
		if got := fmt.Sprint(deliveries[k]); got != w {
			t.Errorf("record %s delivery counts %s, want %s", k, got, w)
		}
	}
}

// TestShareStateSurvivesRestart: records accepted before the node restarts
// are never delivered again; records released are delivered again after
// it, with their delivery counts kept, from the share-partition state in
// __share_group_state.
func TestShareStateSurvivesRestart(t *testing.T) {
	tn := shareTestNode(t)
	const topic, group, total = "share-durable", "sg-durable", 100
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	ctx := testContext(t)
	first := shareConsumer(t, tn, group, topic)
	pollCtx, cancel := context.WithTimeout(ctx, time.Second)
	first.PollRecords(pollCtx, 1)
	cancel()
	waitSharePartitions(t, tn, group, topic, 1)
	produceShareRecords(t, tn, topic, 0, total)
	seen := 0
	for seen < total && ctx.Err() == nil {
		fetches := first.PollRecords(ctx, total)
		fetches.EachRecord(func(r *kgo.Record) {
			seen++
			if k, _ := strconv.Atoi(string(r.Key)); k < total/2 {
				r.Ack(kgo.AckAccept)
			} else {
				r.Ack(kgo.AckRelease)
			}
		})
		if err := first.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	first.Close()
	tn.restart()
	second := shareConsumer(t, tn, group, topic)
	got := map[int]int32{}
	for len(got) < total/2 && ctx.Err() == nil {
		second.PollRecords(ctx, total).EachRecord(func(r *kgo.Record) {
			k, _ := strconv.Atoi(string(r.Key))
			if k < total/2 {
				t.Errorf("record %d accepted before the restart was delivered again", k)
			}
			got[k] = r.DeliveryCount()
		})
	}
	if len(got) != total/2 {
		t.Fatalf("after the restart %d of %d released records came back", len(got), total/2)
	}
	for k, dc := range got {
		if dc < 2 {
			t.Errorf("record %d has delivery count %d after a release and a restart, want 2 or more", k, dc)
		}
	}
}
