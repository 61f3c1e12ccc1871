package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareRaw sends share requests straight to the node, as a client with
// bugs would.
type shareRaw struct {
	t       *testing.T
	cl      *kgo.Client
	topicID [16]byte
}

func (r shareRaw) fetch(member string, epoch int32, partitionAcks ...kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) *kmsg.ShareFetchResponse {
	r.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("sg-raw"), kmsg.StringPtr(member), epoch
	req.MaxBytes, req.MaxRecords, req.MaxWaitMillis = 1<<20, 100, 0
	p := kmsg.NewShareFetchRequestTopicPartition()
	p.Partition, p.PartitionMaxBytes, p.AcknowledgementBatches = 0, 1<<20, partitionAcks
	req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: r.topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
	resp, err := req.RequestWith(context.Background(), r.cl.Broker(1))
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

func (r shareRaw) ack(member string, epoch int32, first, last int64, types ...int8) *kmsg.ShareAcknowledgeResponse {
	r.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("sg-raw"), kmsg.StringPtr(member), epoch
	p := kmsg.NewShareAcknowledgeRequestTopicPartition()
	p.AcknowledgementBatches = []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{{FirstOffset: first, LastOffset: last, AcknowledgeTypes: types}}
	req.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: r.topicID, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{p}}}
	resp, err := req.RequestWith(context.Background(), r.cl.Broker(1))
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

func ackBatch(first, last int64, types ...int8) kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch {
	return kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{FirstOffset: first, LastOffset: last, AcknowledgeTypes: types}
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	if want == nil && got != 0 || want != nil && got != want.Code {
		t.Errorf("%s: got %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// TestShareBadInput: share session misuse, acknowledgements of records
// not acquired or outside the share-partition, stale and unknown member
// epochs and unknown groups get Kafka's error codes, and the node keeps
// serving: the records are then consumed normally.
func TestShareBadInput(t *testing.T) {
	tn := shareTestNode(t)
	const topic = "share-bad"
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	cl := tn.client()
	r := shareRaw{t: t, cl: cl, topicID: tn.node.broker.Image().Topic(topic).ID}
	ctx := testContext(t)

	// A first fetch starts the share-partition at the log end, 0, once
	// __share_group_state (created by it) has a loaded coordinator.
	eventually(t, 20*time.Second, "the share-partition to start", func() bool {
		r.fetch("m0", 0)
		_, ok := tn.node.broker.SharePartitionStartOffset("sg-raw", r.topicID, 0)
		return ok
	})

	// Sessions.
	wantCode(t, "fetch without a session", r.fetch("m1", 3).ErrorCode, kerr.ShareSessionNotFound)
	wantCode(t, "acknowledge without a session", r.ack("m1", 1, 0, 0, 1).ErrorCode, kerr.ShareSessionNotFound)
	wantCode(t, "acknowledge opening a session", r.ack("m1", 0, 0, 0, 1).ErrorCode, kerr.InvalidShareSessionEpoch)
	wantCode(t, "initial fetch with acks", r.fetch("m1", 0, ackBatch(0, 0, 1)).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "initial fetch", r.fetch("m1", 0).ErrorCode, nil) // starts the share-partition at 0
	wantCode(t, "wrong epoch", r.fetch("m1", 7).ErrorCode, kerr.InvalidShareSessionEpoch)

	produceShareRecords(t, tn, topic, 0, 5)
	resp := r.fetch("m1", 1)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].AcquiredRecords) == 0 {
		t.Fatalf("fetch: %+v", resp)
	}
	acquired := resp.Topics[0].Partitions[0].AcquiredRecords[0]
	if acquired.FirstOffset != 0 || acquired.LastOffset != 4 || acquired.DeliveryCount != 1 {
		t.Fatalf("acquired %+v", acquired)
	}

	// Acknowledgements.
	part := func(resp *kmsg.ShareAcknowledgeResponse) int16 {
		if resp.ErrorCode != 0 {
			return resp.ErrorCode
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	wantCode(t, "ack past the share-partition end", part(r.ack("m1", 2, 3, 9, 1)), kerr.InvalidRecordState)
	wantCode(t, "ack of another member's records", func() int16 {
		wantCode(t, "second member's session", r.fetch("m2", 0).ErrorCode, nil)
		return part(r.ack("m2", 1, 0, 0, 1))
	}(), kerr.InvalidRecordState)
	wantCode(t, "ack with first > last", part(r.ack("m1", 3, 2, 1, 1)), kerr.InvalidRequest)
	wantCode(t, "ack with an unknown type", part(r.ack("m1", 4, 0, 0, 9)), kerr.InvalidRequest)
	wantCode(t, "renew without IsRenewAck", part(r.ack("m1", 5, 0, 0, 4)), kerr.InvalidRequest)
	wantCode(t, "accept 0-1", part(r.ack("m1", 6, 0, 1, 1)), nil)
	wantCode(t, "accept 0 again", part(r.ack("m1", 7, 0, 0, 1)), kerr.InvalidRecordState)
	resp = r.fetch("m1", 8, ackBatch(2, 4, 1, 2, 3))
	if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].AcknowledgeErrorCode != 0 {
		t.Fatalf("piggybacked acks: %+v", resp)
	}
	if start, _ := tn.node.broker.SharePartitionStartOffset("sg-raw", r.topicID, 0); start != 3 {
		t.Fatalf("start offset %d after accepting 0-2 and releasing 3, want 3", start)
	}
	unknown := r
	unknown.topicID = [16]byte{1, 2, 3}
	unknownPartition := unknown.fetch("m3", 0).Topics[0].Partitions[0]
	wantCode(t, "unknown topic id", unknownPartition.ErrorCode, kerr.UnknownTopicID)
	if unknownPartition.Records == nil {
		t.Error("a partition without records has null records; Kafka's schema (and the Java client) needs them non-null")
	}

	// Group membership.
	hb := func(member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = "sg-hb", member, epoch, topics
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	joined := hb("a", 0, topic)
	wantCode(t, "join", joined.ErrorCode, nil)
	wantCode(t, "newer epoch than the member's", hb("a", joined.MemberEpoch+5).ErrorCode, kerr.FencedMemberEpoch)
	wantCode(t, "unknown member", hb("nobody", 4).ErrorCode, kerr.UnknownMemberID)
	wantCode(t, "empty member id", hb("", 0, topic).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "join without topics", hb("b", 0).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "leave of an unknown member", hb("nobody", -1).ErrorCode, kerr.UnknownMemberID)
	describe := kmsg.NewPtrShareGroupDescribeRequest()
	describe.GroupIDs = []string{"no-such-group"}
	dresp, err := describe.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "describe an unknown group", dresp.Groups[0].ErrorCode, kerr.GroupIDNotFound)

	// The node still serves: a share consumer takes the records left.
	consumer := shareConsumer(t, tn, "sg-after", topic)
	waitSharePartitions(t, tn, "sg-after", topic, 1)
	produceShareRecords(t, tn, topic, 5, 8)
	got := 0
	for got < 3 && ctx.Err() == nil {
		got += consumer.PollRecords(ctx, 10).NumRecords()
	}
	if got != 3 {
		t.Fatalf("consumed %d of 3 after the bad input", got)
	}
}
