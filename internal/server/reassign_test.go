package server

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPartitionReassignmentRequests drives AlterPartitionReassignments and
// ListPartitionReassignments with kadm against one node: every bad input
// gets Kafka's error, a reassignment to the replicas it has is a no-op, and
// the records stay readable. Moving data between brokers is covered by
// the clustertest package.
func TestPartitionReassignmentRequests(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	mustCreateTopic(t, adm, "moving", 2, nil)
	cl := tn.client(kgo.DefaultProduceTopic("moving"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("moving", 0, []int32{1})    // the replicas it has: success
	req.Assign("moving", 1, []int32{1, 1}) // a broker twice
	req.Assign("moving", 7, []int32{1})    // no such partition
	req.Assign("nowhere", 0, []int32{1})   // no such topic
	req.Assign("moving", 2, nil)           // cancel, no such partition
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int32]error{
		"moving":  {0: nil, 1: kerr.InvalidReplicaAssignment, 7: kerr.UnknownTopicOrPartition, 2: kerr.UnknownTopicOrPartition},
		"nowhere": {0: kerr.UnknownTopicOrPartition},
	}
	for topic, ps := range want {
		for p, wantErr := range ps {
			got, ok := resp[topic][p]
			if !ok {
				t.Fatalf("no answer for %s-%d", topic, p)
			}
			if !errors.Is(got.Err, wantErr) && !(wantErr == nil && got.Err == nil) {
				t.Errorf("%s-%d: %v (%s), want %v", topic, p, got.Err, got.ErrMessage, wantErr)
			}
		}
	}

	// One request per remaining case, each answered by itself.
	cases := []struct {
		name     string
		replicas []int32
		forbidRF bool
		want     error
	}{
		{"unregistered broker", []int32{9}, false, kerr.InvalidReplicaAssignment},
		{"empty", []int32{}, false, kerr.InvalidReplicaAssignment},
		{"cancel with none in progress", nil, false, kerr.NoReassignmentInProgress},
		// v1 with AllowReplicationFactorChange false: the same size passes
		// (another size is refused; see the controller's tests).
		{"factor kept (v1)", []int32{1}, true, nil},
	}
	for _, tc := range cases {
		var r kadm.AlterPartitionAssignmentsReq
		r.Assign("moving", 0, tc.replicas)
		cctx := ctx
		if tc.forbidRF {
			cctx = kadm.ForbidAlterRf(ctx)
		}
		resp, err := adm.AlterPartitionAssignments(cctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp["moving"][0]; !errors.Is(got.Err, tc.want) {
			t.Errorf("%s: %v (%s), want %v", tc.name, got.Err, got.ErrMessage, tc.want)
		}
	}
	list, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"moving": {0: {}, 1: {}}, "nowhere": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Sorted()); n != 0 {
		t.Fatalf("listed %d reassignments, want none: %+v", n, list.Sorted())
	}

	// The partition still serves its records.
	consumer := tn.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"moving": {0: kgo.NewOffset().AtStart()}}))
	got := 0
	for got < 5 {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 5 records after the no-op reassignment", got)
		}
		got += fs.NumRecords()
	}
}
