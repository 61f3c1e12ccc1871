package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// TestProduceV13ByTopicID produces with Produce v13 (KIP-516), which names
// topics by id: franz-go's producer uses it against a real node, a raw v13
// request to the id of a topic that was deleted and created again under the
// same name answers UNKNOWN_TOPIC_ID and writes nothing to the new topic,
// and one to the new id is written.
func TestProduceV13ByTopicID(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	mustCreateTopic(t, adm, "recreated", 1, nil)
	details, err := adm.ListTopics(ctx, "recreated")
	if err != nil {
		t.Fatal(err)
	}
	oldID := details["recreated"].ID
	if _, err := adm.DeleteTopics(ctx, "recreated"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var newID [16]byte
	for {
		resp, err := adm.CreateTopics(ctx, 1, 1, nil, "recreated")
		if err != nil {
			t.Fatal(err)
		}
		if resp["recreated"].Err == nil {
			newID = resp["recreated"].ID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recreate: %v", resp["recreated"].Err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if newID == oldID {
		t.Fatal("the recreated topic kept its id")
	}

	batch, err := record.Build(record.DefaultBuildOptions(), []record.Record{{Value: []byte("by-id")}})
	if err != nil {
		t.Fatal(err)
	}
	raw := tn.client()
	produceByID := func(id [16]byte) int16 {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 13, -1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 0, batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 13 || len(resp.Topics) != 1 || resp.Topics[0].TopicID != id || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("v13 response %+v", resp)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := produceByID(oldID); code != kerr.UnknownTopicID.Code {
		t.Fatalf("produce to the deleted topic's id: %v, want UNKNOWN_TOPIC_ID", kerr.ErrorForCode(code))
	}
	if code := produceByID([16]byte{9, 9, 9}); code != kerr.UnknownTopicID.Code {
		t.Fatalf("produce to an unknown id: %v, want UNKNOWN_TOPIC_ID", kerr.ErrorForCode(code))
	}
	if end, err := adm.ListEndOffsets(ctx, "recreated"); err != nil {
		t.Fatal(err)
	} else if o, _ := end.Lookup("recreated", 0); o.Offset != 0 {
		t.Fatalf("the recreated topic has %d records after produces to other ids", o.Offset)
	}
	if code := produceByID(newID); code != 0 {
		t.Fatalf("produce to the topic's id: %v", kerr.ErrorForCode(code))
	}
	// franz-go negotiates v13 and produces by id.
	cl := tn.client()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "recreated", Value: []byte("kgo")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumer := tn.client(kgo.ConsumeTopics("recreated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fetches := consumer.PollRecords(ctx, 2)
	var got []string
	fetches.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	for len(got) < 2 && ctx.Err() == nil {
		consumer.PollRecords(ctx, 2).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 2 || got[0] != "by-id" || got[1] != "kgo" {
		t.Fatalf("records of the recreated topic: %q", got)
	}
	stillServes(t, tn)
}
