package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeAllShareOffsets is DescribeShareGroupOffsets naming no topics,
// as "topic/partition=start" rows sorted.
func describeAllShareOffsets(t *testing.T, ctx context.Context, cl *kgo.Client, group string) []string {
	t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: group}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("describe share group offsets: %+v", resp)
	}
	var rows []string
	for _, rt := range resp.Groups[0].Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("describe %s/%d: %v", rt.Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
			rows = append(rows, fmt.Sprintf("%s/%d=%d", rt.Topic, rp.Partition, rp.StartOffset))
		}
	}
	slices.Sort(rows)
	return rows
}

// TestShareOffsetsOfInitializedPartitions: AlterShareGroupOffsets as the
// first share request of a fresh node succeeds (the persister waits out
// the loading of __share_group_state, as Kafka's retries), and
// DescribeShareGroupOffsets naming no topics answers the group's
// initialized share-partitions: the ones altered and the ones its members
// were assigned, also once the members are gone, and still after a
// restart, from the group's ShareGroupStatePartitionMetadata record.
func TestShareOffsetsOfInitializedPartitions(t *testing.T) {
	tn := shareTestNode(t)
	const altered, consumed, group = "share-init-altered", "share-init-consumed", "sg-init"
	adm := tn.admin()
	mustCreateTopic(t, adm, altered, 2, nil)
	mustCreateTopic(t, adm, consumed, 1, nil)
	ctx := testContext(t)
	cl := tn.client()

	alter := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	alter.GroupID = group
	at := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	at.Topic = altered
	ap := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
	ap.Partition, ap.StartOffset = 1, 0
	at.Partitions = append(at.Partitions, ap)
	alter.Topics = append(alter.Topics, at)
	resp, err := alter.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("alter on a fresh node: %+v %v", resp, err)
	}
	wantCode(t, "alter on a fresh node", resp.Topics[0].Partitions[0].ErrorCode, nil)
	if got, want := describeAllShareOffsets(t, ctx, cl, group), []string{altered + "/1=0"}; !slices.Equal(got, want) {
		t.Fatalf("after the alter: %v, want %v", got, want)
	}

	// A member consumes a second topic and leaves: its partition stays
	// initialized, with the start offset past what it accepted.
	consumer := shareConsumer(t, tn, group, consumed)
	pollCtx, cancel := context.WithTimeout(ctx, time.Second)
	consumer.PollRecords(pollCtx, 1)
	cancel()
	waitSharePartitions(t, tn, group, consumed, 1)
	produceShareRecords(t, tn, consumed, 0, 4)
	consumeShare(t, ctx, consumer, 4)
	consumer.PollRecords(pollCtx, 1) // acknowledges the last records
	if err := consumer.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	consumer.Close()
	want := []string{altered + "/1=0", consumed + "/0=4"}
	eventually(t, 20*time.Second, "the consumed partition's start offset", func() bool {
		return slices.Equal(describeAllShareOffsets(t, ctx, cl, group), want)
	})

	tn.restart()
	cl = tn.client()
	eventually(t, 30*time.Second, "the initialized partitions after the restart", func() bool {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: group}}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			return false
		}
		return slices.Equal(describeAllShareOffsets(t, ctx, cl, group), want)
	})
}
