package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumeShare polls cl until it has n records, accepting each by the
// next poll.
func consumeShare(t *testing.T, ctx context.Context, cl *kgo.Client, n int) map[string]int32 {
	t.Helper()
	got := map[string]int32{}
	for len(got) < n && ctx.Err() == nil {
		cl.PollRecords(ctx, 100).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r.DeliveryCount() })
	}
	if len(got) < n {
		t.Fatalf("consumed %d of %d", len(got), n)
	}
	return got
}

// TestShareGroupAdmin drives the share admin APIs through kadm and the
// group admin APIs through kmsg: ListGroups shows the share group with
// type "share", DescribeGroups refuses it as not classic, offsets are
// described from the durable state, altering them needs an empty group
// and makes the records come again, deleting offsets and then the group
// works once it is empty.
func TestShareGroupAdmin(t *testing.T) {
	tn := shareTestNode(t)
	const topic, group = "share-admin", "sg-admin"
	adm := tn.admin()
	mustCreateTopic(t, adm, topic, 2, nil)
	ctx := testContext(t)
	consumer := shareConsumer(t, tn, group, topic)
	pollCtx, cancel := context.WithTimeout(ctx, time.Second)
	consumer.PollRecords(pollCtx, 1)
	cancel()
	waitSharePartitions(t, tn, group, topic, 2)
	produceShareRecords(t, tn, topic, 0, 10)
	consumeShare(t, ctx, consumer, 10)
	consumer.PollRecords(pollCtx, 1) // acknowledges the last records
	if err := consumer.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	list := kmsg.NewPtrListGroupsRequest()
	list.TypesFilter = []string{"share"}
	listed, err := list.RequestWith(ctx, tn.client())
	if err != nil || listed.ErrorCode != 0 || len(listed.Groups) != 1 || listed.Groups[0].Group != group ||
		listed.Groups[0].GroupType != "share" || listed.Groups[0].GroupState != "Stable" {
		t.Fatalf("list share groups: %+v %v", listed, err)
	}
	classic, err := adm.DescribeGroups(ctx, group)
	if err != nil || !errors.Is(classic[group].Err, kerr.GroupIDNotFound) {
		t.Fatalf("classic describe of a share group: %+v %v", classic[group], err)
	}

	eventuallyOffsets := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			described, err := adm.DescribeShareGroupOffsets(ctx, group)
			ok := err == nil && described[group].Err == nil
			total := int64(0)
			if ok {
				for _, ps := range described[group].Offsets {
					for _, o := range ps {
						ok = ok && o.Err == nil
						total += o.StartOffset
					}
				}
			}
			if ok && total == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("share group offsets: %+v %v, want start offsets adding to %d", described[group], err, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	eventuallyOffsets(10)

	if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {At: 0}, 1: {At: 0}}}); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("alter with a member: %v", err)
	}
	consumer.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := adm.DescribeShareGroups(ctx, group)
		if err == nil && len(d[group].Members) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group kept its member: %+v %v", d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	altered, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {At: 0}, 1: {At: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if e, _ := altered.Lookup(topic, p); e != nil {
			t.Fatalf("alter partition %d: %v", p, e)
		}
	}
	again := shareConsumer(t, tn, group, topic)
	for k, dc := range consumeShare(t, ctx, again, 10) {
		if dc != 1 {
			t.Errorf("record %s after the reset has delivery count %d, want 1", k, dc)
		}
	}
	again.Close()

	deadline = time.Now().Add(20 * time.Second)
	for {
		deleted, err := adm.DeleteShareGroupOffsets(ctx, group, topic)
		if err == nil {
			if e, _ := deleted.Lookup(topic); e != nil {
				t.Fatalf("delete offsets: %v", e)
			}
			break
		}
		if !errors.Is(err, kerr.NonEmptyGroup) || time.Now().After(deadline) {
			t.Fatalf("delete offsets: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Both partitions are uninitialized again.
	describe := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	describe.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: group, Topics: []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: topic}}}}
	offsets, err := describe.RequestWith(ctx, tn.client())
	if err != nil || offsets.Groups[0].ErrorCode != 0 || len(offsets.Groups[0].Topics[0].Partitions) != 2 {
		t.Fatalf("describe after delete: %+v %v", offsets, err)
	}
	for _, p := range offsets.Groups[0].Topics[0].Partitions {
		if p.ErrorCode != 0 || p.StartOffset != -1 {
			t.Fatalf("partition %d after delete: %+v", p.Partition, p)
		}
	}
	deletedGroups, err := adm.DeleteGroups(ctx, group)
	if err != nil || deletedGroups[group].Err != nil {
		t.Fatalf("delete group: %+v %v", deletedGroups, err)
	}
	listed, err = list.RequestWith(ctx, tn.client())
	if err != nil || len(listed.Groups) != 0 {
		t.Fatalf("after delete: %+v %v", listed, err)
	}
}
