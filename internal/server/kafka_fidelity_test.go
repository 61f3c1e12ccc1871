package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Answers the API differential against Apache Kafka 4.4 found different,
// pinned to what Kafka sends.

// TestFetchOutOfRangeOffsetsUnknownToConsumers: Kafka answers a consumer's
// fetch at an offset past the log end with OFFSET_OUT_OF_RANGE and high
// watermark, last stable offset and log start offset all -1.
func TestFetchOutOfRangeOffsetsUnknownToConsumers(t *testing.T) {
	tn := startTestNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := tn.client(kgo.DefaultProduceTopic("oor"), kgo.AllowAutoTopicCreation())
	defer client.Close()
	if err := client.ProduceSync(ctx, &kgo.Record{Value: []byte("one")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The client picks the version; v13+ names the topic by id.
	metadata, err := tn.admin().Metadata(ctx, "oor")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 1<<20, -1
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic, topic.TopicID = "oor", metadata.Topics["oor"].ID
	partition := kmsg.NewFetchRequestTopicPartition()
	partition.FetchOffset, partition.PartitionMaxBytes = 1000, 1<<20
	topic.Partitions = append(topic.Partitions, partition)
	req.Topics = append(req.Topics, topic)
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != kerr.OffsetOutOfRange.Code || got.HighWatermark != -1 || got.LastStableOffset != -1 || got.LogStartOffset != -1 {
		t.Errorf("got error %d, high watermark %d, last stable %d, log start %d; want %d and -1, -1, -1",
			got.ErrorCode, got.HighWatermark, got.LastStableOffset, got.LogStartOffset, kerr.OffsetOutOfRange.Code)
	}
	// The broker keeps serving the partition.
	if err := client.ProduceSync(ctx, &kgo.Record{Value: []byte("two")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestDescribeUnknownTransactionZeroFields: Kafka's entry for an unknown
// transactional id carries TRANSACTIONAL_ID_NOT_FOUND and leaves the
// producer id, epoch and start time 0.
func TestDescribeUnknownTransactionZeroFields(t *testing.T) {
	tn := startTestNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := tn.client()
	defer client.Close()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{"no-such-transaction"}
	for {
		resp, err := req.RequestWith(ctx, client)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.TransactionStates[0]
		if got.ErrorCode == kerr.CoordinatorLoadInProgress.Code || got.ErrorCode == kerr.NotCoordinator.Code {
			select {
			case <-ctx.Done():
				t.Fatalf("coordinator never loaded: %v", ctx.Err())
			case <-time.After(50 * time.Millisecond):
				continue
			}
		}
		if got.ErrorCode != kerr.TransactionalIDNotFound.Code || got.ProducerID != 0 || got.ProducerEpoch != 0 || got.StartTimestamp != 0 {
			t.Errorf("got error %d, producer %d epoch %d start %d; want %d with zeros",
				got.ErrorCode, got.ProducerID, got.ProducerEpoch, got.StartTimestamp, kerr.TransactionalIDNotFound.Code)
		}
		return
	}
}

// TestDescribeQuorumLeaderReportsItselfCaughtUp: Kafka's leader lists
// itself among the voters with last fetch and last caught-up time now,
// not -1 (kafka-metadata-quorum describe --replication shows it 0 ms ago).
func TestDescribeQuorumLeaderReportsItselfCaughtUp(t *testing.T) {
	tn := startTestNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := tn.client()
	defer client.Close()
	before := time.Now().UnixMilli()
	req := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = "__cluster_metadata"
	topic.Partitions = append(topic.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, topic)
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	partition := resp.Topics[0].Partitions[0]
	found := false
	for _, voter := range partition.CurrentVoters {
		if voter.ReplicaID != partition.LeaderID {
			continue
		}
		found = true
		if voter.LastFetchTimestamp < before || voter.LastCaughtUpTimestamp < before {
			t.Errorf("leader's own last fetch %d, caught up %d; want at least %d", voter.LastFetchTimestamp, voter.LastCaughtUpTimestamp, before)
		}
	}
	if !found {
		t.Fatalf("leader %d not among the voters %+v", partition.LeaderID, partition.CurrentVoters)
	}
}

// TestFetchFencedEpochOffsetsUnknownToConsumers: a consumer's fetch with a
// leader epoch from the future answers UNKNOWN_LEADER_EPOCH with the
// offsets -1, as Kafka does.
func TestFetchFencedEpochOffsetsUnknownToConsumers(t *testing.T) {
	tn := startTestNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := tn.client(kgo.DefaultProduceTopic("epoch"), kgo.AllowAutoTopicCreation())
	defer client.Close()
	if err := client.ProduceSync(ctx, &kgo.Record{Value: []byte("one")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	metadata, err := tn.admin().Metadata(ctx, "epoch")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 1<<20, -1
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic, topic.TopicID = "epoch", metadata.Topics["epoch"].ID
	partition := kmsg.NewFetchRequestTopicPartition()
	partition.PartitionMaxBytes, partition.CurrentLeaderEpoch = 1<<20, 99
	topic.Partitions = append(topic.Partitions, partition)
	req.Topics = append(req.Topics, topic)
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != kerr.UnknownLeaderEpoch.Code || got.HighWatermark != -1 || got.LastStableOffset != -1 || got.LogStartOffset != -1 {
		t.Errorf("got error %d, high watermark %d, last stable %d, log start %d; want %d and -1, -1, -1",
			got.ErrorCode, got.HighWatermark, got.LastStableOffset, got.LogStartOffset, kerr.UnknownLeaderEpoch.Code)
	}
}
