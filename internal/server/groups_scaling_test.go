package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ownership checks that no partition is ever owned by two members at once.
type ownership struct {
	mu         sync.Mutex
	owner      map[int32]string
	violations []string
	consumed   map[string]int // value -> times consumed
}

func (o *ownership) assigned(member string, parts map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ps := range parts {
		for _, p := range ps {
			if cur, ok := o.owner[p]; ok && cur != member {
				o.violations = append(o.violations, fmt.Sprintf("partition %d assigned to %s while %s owns it", p, member, cur))
			}
			o.owner[p] = member
		}
	}
}

func (o *ownership) released(member string, parts map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ps := range parts {
		for _, p := range ps {
			if o.owner[p] == member {
				delete(o.owner, p)
			}
		}
	}
}

func (o *ownership) owned() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	counts := map[string]int{}
	for _, m := range o.owner {
		counts[m]++
	}
	return counts
}

// scalingMember joins the group; it commits what it consumed before giving
// partitions up, and lets a rebalance happen only between polls.
type scalingMember struct {
	name   string
	client *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
}

func startScalingMember(t *testing.T, tn *testNode, name, group, topic string, balancer kgo.GroupBalancer, o *ownership) *scalingMember {
	m := &scalingMember{name: name, done: make(chan struct{})}
	commitOnRevoke := func(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
		if err := cl.CommitMarkedOffsets(ctx); err != nil {
			t.Errorf("%s: commit on revoke: %v", name, err)
		}
		o.released(name, parts)
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(tn.addr()),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.Balancers(balancer),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), kgo.AutoCommitInterval(200*time.Millisecond),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, parts map[string][]int32) { o.assigned(name, parts) }),
		kgo.OnPartitionsRevoked(commitOnRevoke),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, parts map[string][]int32) { o.released(name, parts) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	m.client = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fetches := cl.PollFetches(ctx)
			fetches.EachRecord(func(r *kgo.Record) {
				o.mu.Lock()
				o.consumed[string(r.Value)]++
				o.mu.Unlock()
				cl.MarkCommitRecords(r)
			})
			cl.AllowRebalance()
		}
	}()
	return m
}

// stop leaves the group: the revoke callback commits, then the client closes.
func (m *scalingMember) stop() {
	m.cancel()
	<-m.done
	m.client.Close()
}

func TestConsumerGroupScalingKeepsPartitionsExclusive(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"eager", kgo.RangeBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := startTestNode(t)
			topic := "scale-" + tc.name
			mustCreateTopic(t, tn.admin(), topic, 6, nil)
			o := &ownership{owner: map[int32]string{}, consumed: map[string]int{}}
			ctx := testContext(t)

			// A producer keeps writing while the group scales.
			var produced atomic.Int64
			stopProducing := make(chan struct{})
			producerDone := make(chan struct{})
			producer := tn.client()
			go func() {
				defer close(producerDone)
				for i := 0; ; i++ {
					select {
					case <-stopProducing:
						return
					default:
					}
					r := &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i % 31)), Value: []byte(strconv.Itoa(i))}
					if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
						t.Errorf("produce: %v", err)
						return
					}
					produced.Add(1)
				}
			}()
			waitOwned := func(what string, want map[string]int) {
				t.Helper()
				deadline := time.Now().Add(60 * time.Second)
				for {
					got := o.owned()
					match := len(got) == len(want)
					for k, v := range want {
						if got[k] != v {
							match = false
						}
					}
					if match {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: ownership %v, want %v", what, got, want)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}

			group := "scaling-" + tc.name
			m1 := startScalingMember(t, tn, "m1", group, topic, tc.balancer, o)
			waitOwned("one member", map[string]int{"m1": 6})
			m2 := startScalingMember(t, tn, "m2", group, topic, tc.balancer, o)
			m3 := startScalingMember(t, tn, "m3", group, topic, tc.balancer, o)
			waitOwned("three members", map[string]int{"m1": 2, "m2": 2, "m3": 2})
			m2.stop()
			m3.stop()
			waitOwned("back to one member", map[string]int{"m1": 6})
			close(stopProducing)
			<-producerDone
			total := int(produced.Load())
			deadline := time.Now().Add(60 * time.Second)
			for {
				o.mu.Lock()
				n := len(o.consumed)
				o.mu.Unlock()
				if n >= total {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("consumed %d of %d records", n, total)
				}
				time.Sleep(20 * time.Millisecond)
			}
			m1.stop()

			o.mu.Lock()
			defer o.mu.Unlock()
			redelivered := 0
			for _, times := range o.consumed {
				if times > 1 {
					redelivered++
				}
			}
			t.Logf("%s: produced %d, consumed %d distinct, re-delivered %d, ownership violations %d",
				tc.name, total, len(o.consumed), redelivered, len(o.violations))
			for _, v := range o.violations {
				t.Error(v)
			}
			if redelivered != 0 {
				t.Errorf("%d records delivered twice though offsets were committed on every revoke", redelivered)
			}
		})
	}
}
