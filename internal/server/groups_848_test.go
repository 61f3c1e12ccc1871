package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fastConsumerGroups shortens the consumer protocol's heartbeat interval so
// that a rebalance, which takes a few heartbeats, does not take seconds.
var fastConsumerGroups = []string{
	"group.consumer.min.heartbeat.interval.ms=100",
	"group.consumer.heartbeat.interval.ms=300",
}

// describeConsumerGroupUntil polls ConsumerGroupDescribe until ok accepts
// the group.
func describeConsumerGroupUntil(t *testing.T, adm *kadm.Client, group string, ok func(kadm.DescribedConsumerGroup) bool) kadm.DescribedConsumerGroup {
	t.Helper()
	ctx := testContext(t)
	for {
		// Each attempt has its own deadline: right after a restart a
		// request may wait on a coordinator that is still loading.
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		described, err := adm.DescribeConsumerGroups(attempt, group)
		cancel()
		if err != nil {
			t.Logf("describe %s: %v", group, err)
		}
		if err == nil {
			if g := described[group]; g.Err == nil && ok(g) {
				return g
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("group %s never reached the expected state: %+v (%v)", group, described[group], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// franz-go's KIP-848 consumer (ServerSideBalancer) against a real node: two
// members split the partitions, commit with their member epochs, leave, and
// the group resumes from its commits after a restart.
func TestConsumerProtocolGroupWithFranzGo(t *testing.T) {
	tn := startTestNode(t, fastConsumerGroups...)
	adm := tn.admin()
	mustCreateTopic(t, adm, "kip848", 4, nil)
	produceKeyed(t, tn.client(), "kip848", 400)

	seen := make(chan *kgo.Record, 1000)
	a, stopA := groupMember(t, tn, "g848", "kip848", seen, kgo.ServerSideBalancer())
	b, stopB := groupMember(t, tn, "g848", "kip848", seen, kgo.ServerSideBalancer())
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
	g := describeConsumerGroupUntil(t, adm, "g848", func(g kadm.DescribedConsumerGroup) bool {
		if g.State != "Stable" || len(g.Members) != 2 {
			return false
		}
		for _, m := range g.Members {
			if len(m.Assignment["kip848"]) != 2 {
				return false
			}
		}
		return true
	})
	if g.AssignorName != "uniform" || g.Epoch < 2 || g.Members[0].MemberType != 1 {
		t.Fatalf("%+v", g)
	}
	listed, err := adm.ListGroupsByType(testContext(t), []string{"consumer"})
	if err != nil || listed["g848"].GroupType != "consumer" || listed["g848"].ProtocolType != "consumer" {
		t.Fatalf("ListGroups: %+v, %v", listed, err)
	}

	ctx := testContext(t)
	for _, cl := range []*kgo.Client{a, b} {
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stopA()
	stopB()
	a.Close() // leaves the group: a heartbeat with epoch -1
	b.Close()
	before := describeConsumerGroupUntil(t, adm, "g848", func(g kadm.DescribedConsumerGroup) bool { return g.State == "Empty" })

	committed, err := adm.FetchOffsets(ctx, "g848")
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	committed.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != 400 {
		t.Fatalf("committed offsets sum to %d, want 400", total)
	}

	// The group and its offsets are rebuilt from __consumer_offsets.
	tn.restart()
	adm = tn.admin()
	after := describeConsumerGroupUntil(t, adm, "g848", func(g kadm.DescribedConsumerGroup) bool { return true })
	if after.State != "Empty" || after.Epoch != before.Epoch || after.AssignmentEpoch != before.AssignmentEpoch {
		t.Fatalf("after restart %+v, before %+v", after, before)
	}
	cl := tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: "kip848", Partition: 1, Value: []byte("after-restart")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	seen2 := make(chan *kgo.Record, 1000)
	_, stopC := groupMember(t, tn, "g848", "kip848", seen2, kgo.ServerSideBalancer())
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

// rawMember drives ConsumerGroupHeartbeat by hand, to watch each step of a
// rebalance.
type rawMember struct {
	t     *testing.T
	cl    *kgo.Client
	group string
	id    string
	epoch int32
}

func (m *rawMember) heartbeat(ctx context.Context, configure func(*kmsg.ConsumerGroupHeartbeatRequest)) *kmsg.ConsumerGroupHeartbeatResponse {
	m.t.Helper()
	for {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
		configure(req)
		resp, err := req.RequestWith(ctx, m.cl)
		if err != nil {
			m.t.Fatal(err)
		}
		// Right after a restart the coordinator may still be loading.
		if resp.ErrorCode == kerr.CoordinatorLoadInProgress.Code || resp.ErrorCode == kerr.NotCoordinator.Code {
			if ctx.Err() != nil {
				m.t.Fatalf("coordinator never became available: %v", ctx.Err())
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if resp.ErrorCode == 0 {
			m.epoch = resp.MemberEpoch
		}
		return resp
	}
}

func (m *rawMember) join(ctx context.Context, topics ...string) *kmsg.ConsumerGroupHeartbeatResponse {
	return m.heartbeat(ctx, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.SubscribedTopicNames, r.RebalanceTimeoutMillis = topics, 30000
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	})
}

// owning heartbeats reporting that it owns partitions of topic id.
func (m *rawMember) owning(ctx context.Context, id [16]byte, partitions ...int32) *kmsg.ConsumerGroupHeartbeatResponse {
	return m.heartbeat(ctx, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if len(partitions) > 0 {
			r.Topics = append(r.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: id, Partitions: partitions})
		}
	})
}

func assignedPartitions(resp *kmsg.ConsumerGroupHeartbeatResponse) []int32 {
	if resp.Assignment == nil {
		return nil
	}
	var out []int32
	for _, tp := range resp.Assignment.Topics {
		out = append(out, tp.Partitions...)
	}
	slices.Sort(out)
	return out
}

func sortedPartitions(set map[int32]struct{}) []int32 {
	var out []int32
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// commit commits offset 1 of a partition as member m at epoch.
func commit(t *testing.T, cl *kgo.Client, m *rawMember, topic string, id [16]byte, partition, epoch int32) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = m.group, m.id, epoch
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = partition, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// The protocol step by step with real requests: a partition moves only
// after its owner revoked it, commits need the member's current epoch, and
// the group's epochs and assignments survive a restart.
func TestConsumerProtocolRevocationEpochsAndReload(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "steps", 2, nil)
	topics, err := adm.ListTopics(testContext(t), "steps")
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte(topics["steps"].ID)
	ctx := testContext(t)
	cl := tn.client()
	m1 := &rawMember{t: t, cl: cl, group: "raw", id: "member-1"}
	m2 := &rawMember{t: t, cl: cl, group: "raw", id: "member-2"}

	if r := m1.join(ctx, "steps"); r.ErrorCode != 0 || r.MemberEpoch != 1 || !slices.Equal(assignedPartitions(r), []int32{0, 1}) {
		t.Fatalf("m1 join: %+v %v", r, assignedPartitions(r))
	}
	if r := m2.join(ctx, "steps"); r.ErrorCode != 0 || r.MemberEpoch != 2 || len(assignedPartitions(r)) != 0 {
		t.Fatalf("m2 join: %+v %v", r, assignedPartitions(r))
	}
	r := m1.owning(ctx, id, 0, 1)
	keep := assignedPartitions(r)
	if r.ErrorCode != 0 || m1.epoch != 1 || len(keep) != 1 {
		t.Fatalf("m1 should revoke one partition at epoch 1: %+v %v", r, keep)
	}
	moving := 1 - keep[0]
	if r := m2.owning(ctx, id); len(assignedPartitions(r)) != 0 {
		t.Fatalf("m2 got %v before m1 revoked it", assignedPartitions(r))
	}
	// Commits carry the member epoch: m1 is still at 1.
	if code := commit(t, cl, m1, "steps", id, keep[0], 2); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at a future epoch: %d", code)
	}
	if code := commit(t, cl, m1, "steps", id, keep[0], 1); code != 0 {
		t.Fatalf("commit at the current epoch: %d", code)
	}
	if r := m1.owning(ctx, id, keep[0]); r.ErrorCode != 0 || m1.epoch != 2 {
		t.Fatalf("m1 after revoking: %+v", r)
	}
	if r := m2.owning(ctx, id); !slices.Equal(assignedPartitions(r), []int32{moving}) || m2.epoch != 2 {
		t.Fatalf("m2 after m1 revoked: %+v %v", r, assignedPartitions(r))
	}
	if code := commit(t, cl, m1, "steps", id, keep[0], 1); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at the previous epoch: %d", code)
	}

	tn.restart()
	cl = tn.client()
	m1.cl, m2.cl = cl, cl
	ctx = testContext(t)
	if r := m1.owning(ctx, id, keep[0]); r.ErrorCode != 0 || r.MemberEpoch != 2 {
		t.Fatalf("m1 after restart: %+v", r)
	}
	if r := m2.owning(ctx, id, moving); r.ErrorCode != 0 || r.MemberEpoch != 2 {
		t.Fatalf("m2 after restart: %+v", r)
	}
	g := describeConsumerGroupUntil(t, tn.admin(), "raw", func(g kadm.DescribedConsumerGroup) bool { return true })
	if g.State != "Stable" || g.Epoch != 2 || len(g.Members) != 2 ||
		!slices.Equal(sortedPartitions(g.Members[0].Assignment["steps"]), keep) || !slices.Equal(sortedPartitions(g.Members[1].Assignment["steps"]), []int32{moving}) {
		t.Fatalf("after restart: %+v", g)
	}
	// A member that leaves hands its partition over at the next heartbeat.
	if r := m1.heartbeat(ctx, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -1 }); r.ErrorCode != 0 {
		t.Fatalf("leave: %+v", r)
	}
	if r := m2.owning(ctx, id, moving); !slices.Equal(assignedPartitions(r), []int32{0, 1}) || r.MemberEpoch != 3 {
		t.Fatalf("m2 after m1 left: %+v %v", r, assignedPartitions(r))
	}
}
