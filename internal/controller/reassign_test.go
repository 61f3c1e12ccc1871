package controller

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// reassignFixture is a controller over brokers 1-5 with topic "t", one
// partition on replicas 1,2,3 led by 1.
func reassignFixture(t *testing.T) (*memJournal, *Controller) {
	t.Helper()
	j := &memJournal{}
	c := newTestController(t, j, 5)
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignments: [][]int32{{1, 2, 3}}}}, false)
	if res[0].ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(res[0].ErrorCode))
	}
	return j, c
}

func partitionOf(c *Controller, topic string) *metadata.Partition {
	return c.Image().Topic(topic).Partitions[0]
}

func reassign(t *testing.T, c *Controller, replicas []int32) ReassignmentResult {
	t.Helper()
	res, err := c.AlterPartitionReassignments(context.Background(), []Reassignment{{Topic: "t", Partition: 0, Replicas: replicas}}, true)
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// alterISR sends the leader's AlterPartition for isr at the current epochs.
func alterISR(t *testing.T, c *Controller, isr []int32) AlterPartitionResult {
	t.Helper()
	img := c.Image()
	topic := img.Topic("t")
	p := topic.Partitions[0]
	res, err := c.AlterPartition([]AlterPartitionRequest{{Broker: p.Leader, TopicID: topic.ID, Partition: 0,
		LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, NewISR: isr}})
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

type wantPartition struct {
	replicas, isr, adding, removing []int32
	leader                          int32
}

func checkPartition(t *testing.T, c *Controller, want wantPartition) {
	t.Helper()
	p := partitionOf(c, "t")
	if !slices.Equal(p.Replicas, want.replicas) || !slices.Equal(p.ISR, want.isr) || !slices.Equal(p.AddingReplicas, want.adding) ||
		!slices.Equal(p.RemovingReplicas, want.removing) || p.Leader != want.leader {
		t.Fatalf("partition: replicas %v isr %v adding %v removing %v leader %d; want %+v",
			p.Replicas, p.ISR, p.AddingReplicas, p.RemovingReplicas, p.Leader, want)
	}
}

func TestReassignmentMovesLeaderAndCompletesOnISR(t *testing.T) {
	j, c := reassignFixture(t)
	if res := reassign(t, c, []int32{2, 3, 4}); res.Err != nil {
		t.Fatal(res.Err, res.Message)
	}
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 4, 1}, isr: []int32{1, 2, 3}, adding: []int32{4}, removing: []int32{1}, leader: 1})
	list, err := c.ListPartitionReassignments(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []OngoingReassignment{{Topic: "t", Partition: 0, Replicas: []int32{2, 3, 4, 1}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}}}
	if !reflect.DeepEqual(list, want) {
		t.Fatalf("list: %+v", list)
	}
	epoch := partitionOf(c, "t").LeaderEpoch

	// Replica 4 caught up: the leader's ISR change completes the move and,
	// the leader being removed, hands leadership to the first target
	// replica in the ISR.
	res := alterISR(t, c, []int32{1, 2, 3, 4})
	if res.Err != kerr.NewLeaderElected {
		t.Fatalf("AlterPartition completing the move: %v", res.Err)
	}
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 4}, isr: []int32{2, 3, 4}, leader: 2})
	if p := partitionOf(c, "t"); p.LeaderEpoch != epoch+1 {
		t.Fatalf("leader epoch %d, want %d", p.LeaderEpoch, epoch+1)
	}
	if list, _ := c.ListPartitionReassignments(nil); len(list) != 0 {
		t.Fatalf("completed reassignment still listed: %+v", list)
	}
	// The old leader's retry with its stale epoch is fenced.
	topic := c.Image().Topic("t")
	if res, _ := c.AlterPartition([]AlterPartitionRequest{{Broker: 1, TopicID: topic.ID, Partition: 0, LeaderEpoch: epoch,
		PartitionEpoch: 2, NewISR: []int32{1, 2, 3, 4}}}); res[0].Err != kerr.FencedLeaderEpoch {
		t.Fatalf("stale leader: %v", res[0].Err)
	}

	// The journal replays to the same image (the records are the decision).
	replayed := New(Config{NodeID: 1}, &memJournal{})
	j.replay(t, replayed)
	if !reflect.DeepEqual(replayed.Image().Records(), c.Image().Records()) {
		t.Fatal("replayed image differs")
	}
}

func TestReassignmentWaitsForEveryAddingReplica(t *testing.T) {
	_, c := reassignFixture(t)
	reassign(t, c, []int32{4, 5, 1})
	checkPartition(t, c, wantPartition{replicas: []int32{4, 5, 1, 2, 3}, isr: []int32{1, 2, 3}, adding: []int32{4, 5}, removing: []int32{2, 3}, leader: 1})
	// 4 joins, 5 has not: still in progress.
	if res := alterISR(t, c, []int32{1, 2, 3, 4}); res.Err != nil {
		t.Fatal(res.Err)
	}
	checkPartition(t, c, wantPartition{replicas: []int32{4, 5, 1, 2, 3}, isr: []int32{1, 2, 3, 4}, adding: []int32{4, 5}, removing: []int32{2, 3}, leader: 1})
	// 5 joins: done, the leader stays (it is in the target).
	res := alterISR(t, c, []int32{1, 2, 3, 4, 5})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	checkPartition(t, c, wantPartition{replicas: []int32{4, 5, 1}, isr: []int32{1, 4, 5}, leader: 1})
	if !slices.Equal(res.ISR, []int32{1, 4, 5}) || res.PartitionEpoch != partitionOf(c, "t").PartitionEpoch {
		t.Fatalf("the leader is told isr %v epoch %d", res.ISR, res.PartitionEpoch)
	}
}

func TestReassignmentWithinTheISRCompletesAtOnce(t *testing.T) {
	_, c := reassignFixture(t)
	// A reordering.
	reassign(t, c, []int32{3, 2, 1})
	checkPartition(t, c, wantPartition{replicas: []int32{3, 2, 1}, isr: []int32{1, 2, 3}, leader: 1})
	// A shrink that removes the leader.
	reassign(t, c, []int32{2, 3})
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3}, isr: []int32{2, 3}, leader: 2})
	// The same replicas again: nothing to write.
	before := c.Image().Offset
	if res := reassign(t, c, []int32{2, 3}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if c.Image().Offset != before {
		t.Fatal("a no-op reassignment wrote a record")
	}
}

func TestCancelReassignmentReverts(t *testing.T) {
	_, c := reassignFixture(t)
	reassign(t, c, []int32{2, 3, 4})
	alterISR(t, c, []int32{1, 2}) // 3 fell out
	if res := reassign(t, c, nil); res.Err != nil {
		t.Fatal(res.Err, res.Message)
	}
	// As in Kafka, the revert keeps the order of the merged replica list.
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 1}, isr: []int32{1, 2}, leader: 1})
	if res := reassign(t, c, nil); res.Err != kerr.NoReassignmentInProgress {
		t.Fatalf("second cancel: %v", res.Err)
	}
}

func TestReplacingAReassignmentInProgress(t *testing.T) {
	_, c := reassignFixture(t)
	reassign(t, c, []int32{2, 3, 4})
	// Kafka's controller treats the replicas in progress (4 included) as
	// the current ones: 4 is removed along with 1.
	reassign(t, c, []int32{2, 3, 5})
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 5, 4, 1}, isr: []int32{1, 2, 3}, adding: []int32{5}, removing: []int32{4, 1}, leader: 1})
	alterISR(t, c, []int32{1, 2, 3, 5})
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 5}, isr: []int32{2, 3, 5}, leader: 2})
}

func TestReassignmentCompletionSkipsFencedTargets(t *testing.T) {
	_, c := reassignFixture(t)
	reassign(t, c, []int32{2, 3, 4})
	if err := c.ControlledShutdown(2); err != nil {
		t.Fatal(err)
	}
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 4, 1}, isr: []int32{1, 3}, adding: []int32{4}, removing: []int32{1}, leader: 1})
	alterISR(t, c, []int32{1, 3, 4})
	// 2 is fenced and out of the ISR: 3 leads.
	checkPartition(t, c, wantPartition{replicas: []int32{2, 3, 4}, isr: []int32{3, 4}, leader: 3})
}

func TestReassignmentErrors(t *testing.T) {
	_, c := reassignFixture(t)
	if err := c.ControlledShutdown(5); err != nil { // fenced, still registered
		t.Fatal(err)
	}
	cases := []struct {
		name string
		r    Reassignment
		rf   bool
		want *kerr.Error
	}{
		{"unknown topic", Reassignment{Topic: "nope", Partition: 0, Replicas: []int32{1}}, true, kerr.UnknownTopicOrPartition},
		{"unknown partition", Reassignment{Topic: "t", Partition: 1, Replicas: []int32{1}}, true, kerr.UnknownTopicOrPartition},
		{"negative partition", Reassignment{Topic: "t", Partition: -1, Replicas: []int32{1}}, true, kerr.UnknownTopicOrPartition},
		{"empty", Reassignment{Topic: "t", Partition: 0, Replicas: []int32{}}, true, kerr.InvalidReplicaAssignment},
		{"duplicate", Reassignment{Topic: "t", Partition: 0, Replicas: []int32{1, 2, 1}}, true, kerr.InvalidReplicaAssignment},
		{"unregistered", Reassignment{Topic: "t", Partition: 0, Replicas: []int32{1, 2, 9}}, true, kerr.InvalidReplicaAssignment},
		{"negative broker", Reassignment{Topic: "t", Partition: 0, Replicas: []int32{-1, 2, 3}}, true, kerr.InvalidReplicaAssignment},
		{"cancel without one", Reassignment{Topic: "t", Partition: 0}, true, kerr.NoReassignmentInProgress},
		{"factor change refused", Reassignment{Topic: "t", Partition: 0, Replicas: []int32{1, 2}}, false, kerr.InvalidReplicationFactor},
		{"fenced broker accepted", Reassignment{Topic: "t", Partition: 0, Replicas: []int32{1, 2, 5}}, false, nil},
	}
	for _, tc := range cases {
		res, err := c.AlterPartitionReassignments(context.Background(), []Reassignment{tc.r}, tc.rf)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != tc.want {
			t.Errorf("%s: got %v (%s), want %v", tc.name, res[0].Err, res[0].Message, tc.want)
		}
		if tc.want != nil && res[0].Message == "" {
			t.Errorf("%s: no error message", tc.name)
		}
	}
	// One request, one bad partition: the good one still commits.
	res, err := c.AlterPartitionReassignments(context.Background(), []Reassignment{{Topic: "t", Partition: 7, Replicas: []int32{1}}, {Topic: "t", Partition: 0, Replicas: nil}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != kerr.UnknownTopicOrPartition || res[1].Err != nil || partitionOf(c, "t").Reassigning() {
		t.Fatalf("mixed request: %v %v, reassigning %v", res[0].Err, res[1].Err, partitionOf(c, "t").Reassigning())
	}
	// Listing unknown topics and partitions is not an error.
	list, err := c.ListPartitionReassignments([]PartitionRef{{"nope", 0}, {"t", 5}, {"t", 0}})
	if err != nil || len(list) != 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
}

func TestCancelNeedingUncleanElectionIsRefused(t *testing.T) {
	_, c := reassignFixture(t)
	reassign(t, c, []int32{4, 5})
	// Only the adding replicas are left in the ISR (the others were
	// fenced); reverting would leave no ISR.
	for _, id := range []int32{2, 3} {
		if err := c.ControlledShutdown(id); err != nil {
			t.Fatal(err)
		}
	}
	alterISR(t, c, []int32{1, 4})
	if err := c.ControlledShutdown(1); err != nil {
		t.Fatal(err)
	}
	p := partitionOf(c, "t")
	if !p.Reassigning() || !slices.Equal(p.ISR, []int32{4}) {
		t.Fatalf("setup: %+v", p)
	}
	if res := reassign(t, c, nil); res.Err != kerr.InvalidReplicaAssignment {
		t.Fatalf("cancel needing an unclean election: %v", res.Err)
	}
}

func TestReassignmentNotActive(t *testing.T) {
	j, c := reassignFixture(t)
	j.fail = ErrNotActive
	if _, err := c.AlterPartitionReassignments(context.Background(), []Reassignment{{Topic: "t", Partition: 0, Replicas: []int32{2}}}, true); err == nil {
		t.Fatal("a follower accepted a reassignment")
	}
	if _, err := c.ListPartitionReassignments(nil); err == nil {
		t.Fatal("a follower listed reassignments")
	}
}

func TestUncleanElectionCanCompleteAReassignment(t *testing.T) {
	_, c := reassignFixture(t)
	reassign(t, c, []int32{4})
	// 4 caught up while 1-3 were lost: the partition goes offline...
	for _, id := range []int32{1, 2, 3} {
		if err := c.ControlledShutdown(id); err != nil {
			t.Fatal(err)
		}
	}
	if p := partitionOf(c, "t"); p.Leader != -1 {
		t.Fatalf("setup: %+v", p)
	}
	// ...and an unclean election of 4, the only target, completes the move.
	results, err := c.ElectLeaders(context.Background(), true, []PartitionRef{{"t", 0}})
	if err != nil || results[PartitionRef{"t", 0}] != 0 {
		t.Fatalf("unclean election: %v %v", results, err)
	}
	checkPartition(t, c, wantPartition{replicas: []int32{4}, isr: []int32{4}, leader: 4})
}

// TestReassignmentSurvivesControllerFailover restores a snapshot taken mid
// move on another controller, which completes it.
func TestReassignmentSurvivesControllerFailover(t *testing.T) {
	j, c := reassignFixture(t)
	reassign(t, c, []int32{2, 3, 4})
	snapshot, offset, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	next := New(Config{NodeID: 2}, j)
	if err := next.Restore(snapshot, offset); err != nil {
		t.Fatal(err)
	}
	if list, err := next.ListPartitionReassignments(nil); err != nil || len(list) != 1 {
		t.Fatalf("restored controller lists %+v, %v", list, err)
	}
	if res := alterISR(t, next, []int32{1, 2, 3, 4}); res.Err != kerr.NewLeaderElected {
		t.Fatalf("completion on the new controller: %v", res.Err)
	}
	checkPartition(t, next, wantPartition{replicas: []int32{2, 3, 4}, isr: []int32{2, 3, 4}, leader: 2})
}
