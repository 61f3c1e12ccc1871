package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestOffsetCommitUnknownTopicOrPartition commits offsets for a topic that
// exists, a partition it does not have and a topic that does not exist:
// Kafka 4.x answers UNKNOWN_TOPIC_OR_PARTITION for the last two and commits
// the first.
func TestOffsetCommitUnknownTopicOrPartition(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "commits", 2, nil)
	ctx := testContext(t)

	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "commits", Partition: 1, At: 7, LeaderEpoch: -1})
	offsets.Add(kadm.Offset{Topic: "commits", Partition: 5, At: 3, LeaderEpoch: -1})
	offsets.Add(kadm.Offset{Topic: "no-such-topic", Partition: 0, At: 4, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "simple-group", offsets)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int32]error{
		"commits":       {1: nil, 5: kerr.UnknownTopicOrPartition},
		"no-such-topic": {0: kerr.UnknownTopicOrPartition},
	}
	for topic, partitions := range want {
		for partition, wantErr := range partitions {
			got, ok := resp.Lookup(topic, partition)
			if !ok {
				t.Fatalf("%s/%d missing from the response", topic, partition)
			}
			if got.Err != wantErr {
				t.Errorf("%s/%d: %v, want %v", topic, partition, got.Err, wantErr)
			}
		}
	}
	fetched, err := adm.FetchOffsets(ctx, "simple-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("commits", 1); !ok || o.At != 7 {
		t.Fatalf("committed offset of commits/1: %+v, want 7", o)
	}
	if _, ok := fetched.Lookup("no-such-topic", 0); ok {
		t.Fatal("an offset was stored for a topic that does not exist")
	}

	// Only unknown partitions: answered without the group coordinator, and a
	// v10 commit by an unknown topic id answers UNKNOWN_TOPIC_ID.
	for _, version := range []int16{9, 10} {
		versions := kversion.V4_4_0()
		versions.SetMaxKeyVersion(8, version)
		cl := tn.client(kgo.MaxVersions(versions))
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = version, "simple-group", -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = "missing", [16]byte{1, 2, 3}
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := raw.(*kmsg.OffsetCommitResponse)
		want := kerr.UnknownTopicOrPartition.Code
		if version >= 10 {
			want = kerr.UnknownTopicID.Code
		}
		if len(got.Topics) != 1 || len(got.Topics[0].Partitions) != 1 || got.Topics[0].Partitions[0].ErrorCode != want {
			t.Fatalf("v%d commit to an unknown topic: %+v, want error %d", version, got.Topics, want)
		}
	}
}
