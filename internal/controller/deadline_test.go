package controller

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// stalledJournal accepts entries but never commits them while stalled: an
// Append waits until its context ends, as on a quorum that lost its
// majority.
type stalledJournal struct {
	memJournal
	stalled  bool
	proposed [][][]byte
}

func (j *stalledJournal) Append(ctx context.Context, values [][]byte) (int64, error) {
	if !j.stalled {
		return j.memJournal.Append(ctx, values)
	}
	j.proposed = append(j.proposed, values)
	<-ctx.Done()
	return 0, ctx.Err()
}

func expired() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestPassedDeadlineTimesOutBeforeDeciding(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 3)
	if r := c.CreateTopics(context.Background(), []CreateTopic{{Name: "t", NumPartitions: 2, ReplicationFactor: 3}}, false); r[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", r[0])
	}
	entries := len(j.entries)
	for _, validateOnly := range []bool{true, false} {
		res := c.CreateTopics(expired(), []CreateTopic{{Name: "a", NumPartitions: 1, ReplicationFactor: 1}, {Name: "a", NumPartitions: 1, ReplicationFactor: 1}}, validateOnly)
		for _, r := range res {
			if r.ErrorCode != kerr.RequestTimedOut.Code {
				t.Fatalf("CreateTopics validate_only=%v past its deadline: %+v, want REQUEST_TIMED_OUT", validateOnly, r)
			}
		}
		if r := c.CreatePartitions(expired(), "t", 4, nil, validateOnly); r.ErrorCode != kerr.RequestTimedOut.Code {
			t.Fatalf("CreatePartitions validate_only=%v past its deadline: %+v", validateOnly, r)
		}
	}
	id := c.Image().Topic("t").ID
	if r := c.DeleteTopics(expired(), []metadata.UUID{id}); r[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("DeleteTopics past its deadline: %+v", r[0])
	}
	if _, err := c.ElectLeaders(expired(), false, nil); !IsTimeout(err) || commitError(err) != kerr.RequestTimedOut {
		t.Fatalf("ElectLeaders past its deadline: %v", err)
	}
	if _, err := c.AlterPartitionReassignments(expired(), []Reassignment{{Topic: "t", Partition: 0, Replicas: []int32{2}}}, true); !IsTimeout(err) {
		t.Fatalf("AlterPartitionReassignments past its deadline: %v", err)
	}
	if len(j.entries) != entries {
		t.Fatalf("requests past their deadline wrote %d entries", len(j.entries)-entries)
	}
	if img := c.Image(); img.Topic("a") != nil || len(img.Topic("t").Partitions) != 2 {
		t.Fatal("a request past its deadline changed the image")
	}
}

func TestDeadlineBoundsTheCommit(t *testing.T) {
	j := &stalledJournal{}
	c := New(Config{NodeID: 1, DefaultNumPartitions: 1, DefaultReplicationFactor: 1, DeleteTopicEnable: true}, j)
	if err := c.Bootstrap("cluster", metadata.RegisterBrokerRecord{BrokerID: 1}); err != nil {
		t.Fatal(err)
	}
	j.stalled = true
	before := c.Image()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := c.CreateTopics(ctx, []CreateTopic{{Name: "stuck", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("CreateTopics on a journal that cannot commit: %+v, want REQUEST_TIMED_OUT", res[0])
	}
	if len(j.proposed) != 1 {
		t.Fatalf("proposed %d entries, want 1", len(j.proposed))
	}
	if c.Image() != before {
		t.Fatal("an entry that did not commit changed the image")
	}
	// Should the entry commit later after all, it arrives whole through the
	// journal's replication.
	if err := c.ApplyCommitted(before.Offset+1, j.proposed[0]); err != nil {
		t.Fatal(err)
	}
	if topic := c.Image().Topic("stuck"); topic == nil || len(topic.Partitions) != 1 {
		t.Fatalf("the entry committed late left topic %+v", topic)
	}
}

func TestDeadlineBoundsTheWaitForEarlierChanges(t *testing.T) {
	c := newTestController(t, &memJournal{}, 1)
	// Another change holds the decision lock, as a write stuck on a lost
	// quorum would.
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := c.CreateTopics(ctx, []CreateTopic{{Name: "queued", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("CreateTopics behind a stuck change: %+v, want REQUEST_TIMED_OUT", res[0])
	}
	if _, err := c.ElectLeaders(ctx, false, nil); !IsTimeout(err) {
		t.Fatalf("ElectLeaders behind a stuck change: %v", err)
	}
}
