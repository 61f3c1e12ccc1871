package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestTxnOffsetCommitV6AndUnknownTopics commits offsets inside a franz-go
// producer's transaction with TxnOffsetCommit v6 (topics by id) and v5
// (by name): a known partition is committed with the transaction, and an
// unknown topic id answers UNKNOWN_TOPIC_ID, an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION, as Kafka 4.4 does.
func TestTxnOffsetCommitV6AndUnknownTopics(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	mustCreateTopic(t, adm, "txn-commits", 1, nil)
	details, err := adm.ListTopics(ctx, "txn-commits")
	if err != nil {
		t.Fatal(err)
	}
	topicID := details["txn-commits"].ID

	cl := txnProducer(t, tn, "txn-commits-id")
	produceTxn(t, cl, "txn-commits", true, "warm-up") // franz-go opts in to transactions v2
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "txn-commits", Value: []byte("in-txn")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []int16{6, 5} {
		versions := kversion.V4_4_0()
		versions.SetMaxKeyVersion(28, version)
		raw := tn.client(kgo.MaxVersions(versions))
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "txn-commits-id", "txn-commits-group", pid, epoch
		topic := func(name string, id [16]byte, partitions ...int32) {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = name, id
			for _, p := range partitions {
				rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch = p, 1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		topic("txn-commits", topicID, 0, 4)
		topic("no-such-topic", [16]byte{7, 7}, 0)
		raw2, err := raw.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := raw2.(*kmsg.TxnOffsetCommitResponse)
		got := map[string]int16{}
		for _, rt := range resp.Topics {
			key := rt.Topic
			if version >= 6 {
				key = map[[16]byte]string{topicID: "txn-commits", {7, 7}: "no-such-topic"}[rt.TopicID]
			}
			for _, rp := range rt.Partitions {
				got[key+"/"+string(rune('0'+rp.Partition))] = rp.ErrorCode
			}
		}
		unknownTopic := kerr.UnknownTopicOrPartition.Code
		if version >= 6 {
			unknownTopic = kerr.UnknownTopicID.Code
		}
		want := map[string]int16{"txn-commits/0": 0, "txn-commits/4": kerr.UnknownTopicOrPartition.Code, "no-such-topic/0": unknownTopic}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("v%d %s: error %d, want %d (all: %v)", version, k, got[k], w, got)
			}
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	fetched, err := adm.FetchOffsets(ctx, "txn-commits-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("txn-commits", 0); !ok || o.At != 1 {
		t.Fatalf("committed offset after the transaction: %+v", o)
	}
	if _, ok := fetched.Lookup("no-such-topic", 0); ok {
		t.Fatal("an offset was stored for a topic that does not exist")
	}
}
