package clustertest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKillNineLosesNoAcknowledgedRecord produces with acks=all and an
// idempotent producer while the node is killed with SIGKILL and restarted
// several times, then checks every acknowledged record is in the log exactly
// once and in order. With one node, a record acknowledged from the page cache
// survives a process crash (not a machine crash: that takes replication).
func TestKillNineLosesNoAcknowledgedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	node := StartNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := kadm.NewClient(admin).CreateTopic(ctx, 3, 1, nil, "crash"); err != nil {
		t.Fatal(err)
	}

	producer, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(1000), kgo.RecordDeliveryTimeout(90*time.Second), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()

	var mu sync.Mutex
	acked := map[string]bool{}
	var failed int
	const total = 6000
	var wg sync.WaitGroup
	kills := 0
	for i := range total {
		if i > 0 && i%1500 == 0 {
			// Let some records be in flight, then crash and restart.
			node.Restart()
			kills++
		}
		wg.Add(1)
		v := strconv.Itoa(i)
		producer.Produce(ctx, &kgo.Record{Topic: "crash", Key: []byte(strconv.Itoa(i % 7)), Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if failed == 0 {
					t.Logf("first failure: record %s: %v", v, err)
				}
				failed++
				return
			}
			acked[v] = true
		})
	}
	wg.Wait()

	consumer, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()), kgo.ConsumeTopics("crash"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	var inLog int64
	ends.Each(func(o kadm.ListedOffset) { inLog += o.Offset })
	seen := map[string]int{}
	lastByKey := map[string]int{}
	var read int64
	for read < inLog {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", read, inLog)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			read++
			v := string(r.Value)
			seen[v]++
			i, _ := strconv.Atoi(v)
			if prev, ok := lastByKey[string(r.Key)]; ok && i < prev {
				t.Errorf("key %s: record %d after %d", r.Key, i, prev)
			}
			lastByKey[string(r.Key)] = i
		})
	}
	lost, duplicated := 0, 0
	for v := range acked {
		if seen[v] == 0 {
			lost++
		}
	}
	for _, n := range seen {
		if n > 1 {
			duplicated++
		}
	}
	t.Logf("kills: %d, produced: %d, acknowledged: %d, failed: %d, in log: %d, lost: %d, duplicated: %d",
		kills, total, len(acked), failed, inLog, lost, duplicated)
	if lost != 0 {
		t.Fatalf("%d acknowledged records lost", lost)
	}
	if duplicated != 0 {
		t.Fatalf("%d records duplicated", duplicated)
	}
	if len(acked) == 0 {
		t.Fatal(fmt.Sprint("nothing was acknowledged"))
	}
}
