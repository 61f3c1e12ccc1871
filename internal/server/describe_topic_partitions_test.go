package server

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type describedPartition struct {
	topic     string
	partition int32
}

// describeTopicPartitions sends one DescribeTopicPartitions request.
func describeTopicPartitions(t *testing.T, cl *kgo.Client, topics []string, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	req.ResponsePartitionLimit, req.Cursor = limit, cursor
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDescribeTopicPartitionsPagesWithCursor describes three topics two
// partitions at a time, following next_cursor as the Java Admin client does,
// and checks Kafka's answers to bad cursors and unknown topics.
func TestDescribeTopicPartitionsPagesWithCursor(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "dtp-a", 3, nil)
	mustCreateTopic(t, adm, "dtp-b", 2, nil)
	mustCreateTopic(t, adm, "dtp-c", 1, nil)
	cl := tn.client()
	named := []string{"dtp-c", "dtp-a", "dtp-b"} // answered in name order

	var pages [][]describedPartition
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for range 10 {
		resp := describeTopicPartitions(t, cl, named, 2, cursor)
		var page []describedPartition
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 || rt.TopicID == [16]byte{} {
				t.Fatalf("%s: error %d id %x", *rt.Topic, rt.ErrorCode, rt.TopicID)
			}
			for _, rp := range rt.Partitions {
				if rp.LeaderID != 1 || len(rp.Replicas) != 1 || len(rp.ISR) != 1 || rp.EligibleLeaderReplicas == nil || len(rp.EligibleLeaderReplicas) != 0 || len(rp.LastKnownELR) != 0 {
					t.Fatalf("%s/%d: %+v", *rt.Topic, rp.Partition, rp)
				}
				page = append(page, describedPartition{*rt.Topic, rp.Partition})
			}
		}
		pages = append(pages, page)
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := "[[{dtp-a 0} {dtp-a 1}] [{dtp-a 2} {dtp-b 0}] [{dtp-b 1} {dtp-c 0}]]"
	if got := fmt.Sprint(pages); got != want {
		t.Fatalf("pages %s, want %s", got, want)
	}

	// A cursor past a topic's last partition: that topic without
	// partitions, then the rest.
	resp := describeTopicPartitions(t, cl, named, 100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-a", Partition: 1 << 30})
	if len(resp.Topics) != 3 || len(resp.Topics[0].Partitions) != 0 || len(resp.Topics[1].Partitions) != 2 || resp.NextCursor != nil {
		t.Fatalf("cursor past the end: %+v", resp)
	}
	// A cursor naming a topic not asked for, or a negative partition.
	for _, bad := range []kmsg.DescribeTopicPartitionsRequestCursor{{Topic: "dtp-z", Partition: 0}, {Topic: "dtp-a", Partition: -1}} {
		resp := describeTopicPartitions(t, cl, named, 100, &bad)
		if len(resp.Topics) != 3 {
			t.Fatalf("bad cursor %+v: %+v", bad, resp)
		}
		for _, rt := range resp.Topics {
			if rt.ErrorCode != kerr.InvalidRequest.Code {
				t.Fatalf("bad cursor %+v: %s error %d, want INVALID_REQUEST", bad, *rt.Topic, rt.ErrorCode)
			}
		}
	}
	// Every topic, from a cursor naming a topic that does not exist.
	resp = describeTopicPartitions(t, cl, nil, 100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-aa", Partition: 0})
	var all []string
	for _, rt := range resp.Topics {
		all = append(all, *rt.Topic)
	}
	if fmt.Sprint(all) != "[dtp-b dtp-c]" {
		t.Fatalf("every topic from cursor dtp-aa: %v", all)
	}
	// Unknown and invalid names.
	resp = describeTopicPartitions(t, cl, []string{"dtp-missing", "bad/name"}, 100, nil)
	codes := map[string]int16{}
	for _, rt := range resp.Topics {
		codes[*rt.Topic] = rt.ErrorCode
	}
	if codes["dtp-missing"] != kerr.UnknownTopicOrPartition.Code || codes["bad/name"] != kerr.InvalidTopicException.Code {
		t.Fatalf("unknown topics: %v", codes)
	}
	stillServes(t, tn)
}
