package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupMember consumes topic in group and reports each record's partition.
func groupMember(t *testing.T, tn *testNode, group, topic string, seen chan<- *kgo.Record, opts ...kgo.Opt) (*kgo.Client, context.CancelFunc) {
	t.Helper()
	cl := tn.client(append([]kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500 * time.Millisecond),
	}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			fetches := cl.PollFetches(ctx)
			fetches.EachRecord(func(r *kgo.Record) { seen <- r })
		}
	}()
	return cl, cancel
}

func TestConsumerGroupSplitsPartitionsAndResumes(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "g", 4, nil)
	produceKeyed(t, tn.client(), "g", 400)

	seen := make(chan *kgo.Record, 1000)
	a, stopA := groupMember(t, tn, "grp", "g", seen)
	b, stopB := groupMember(t, tn, "grp", "g", seen)
	deadline := time.After(60 * time.Second)
	got := map[string]bool{}
	for len(got) < 400 {
		select {
		case r := <-seen:
			got[string(r.Value)] = true
		case <-deadline:
			t.Fatalf("consumed %d of 400 records", len(got))
		}
	}
	// Both members got partitions once the group settled.
	ctx := testContext(t)
	var described kadm.DescribedGroups
	for {
		var err error
		described, err = adm.DescribeGroups(ctx, "grp")
		if err != nil {
			t.Fatal(err)
		}
		if g := described["grp"]; g.State == "Stable" && len(g.Members) == 2 {
			counts := []int{}
			for _, m := range g.Members {
				ca, _ := m.Assigned.AsConsumer()
				n := 0
				for _, tp := range ca.Topics {
					n += len(tp.Partitions)
				}
				counts = append(counts, n)
			}
			if counts[0] == 2 && counts[1] == 2 {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("group never split 4 partitions between 2 members: %+v", described["grp"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Commit what was consumed, stop both members.
	for _, cl := range []*kgo.Client{a, b} {
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stopA()
	stopB()
	a.Close()
	b.Close()

	committed, err := adm.FetchOffsets(ctx, "grp")
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	committed.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != 400 {
		t.Fatalf("committed offsets sum to %d, want 400", total)
	}

	// After a restart the group resumes from its commits: new records only.
	tn.restart()
	cl := tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: "g", Partition: 1, Value: []byte("after-restart")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	seen2 := make(chan *kgo.Record, 1000)
	_, stopC := groupMember(t, tn, "grp", "g", seen2)
	defer stopC()
	select {
	case r := <-seen2:
		if string(r.Value) != "after-restart" {
			t.Fatalf("resumed consumer read %q, want only the record produced after the commit", r.Value)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("resumed consumer read nothing")
	}
}

func TestOffsetFetchUnknownGroup(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "u", 1, nil)
	resp, err := tn.admin().FetchOffsets(testContext(t), "no-such-group")
	if err != nil {
		t.Fatalf("unknown group: %v (Kafka answers no error)", err)
	}
	if len(resp) != 0 {
		t.Fatalf("unknown group has offsets %+v", resp)
	}
}
