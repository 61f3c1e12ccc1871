package metadata

import (
	"reflect"
	"testing"
)

func sampleRecords() []Record {
	v := "compact"
	rack := "r1"
	leader := int32(2)
	return []Record{
		&ClusterRecord{ClusterID: "abc"},
		&RegisterBrokerRecord{BrokerID: 1, Endpoints: []Endpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}, Rack: &rack},
		&TopicRecord{Name: "t", TopicID: UUID{1, 2, 3}},
		&PartitionRecord{TopicID: UUID{1, 2, 3}, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
		&PartitionRecord{TopicID: UUID{1, 2, 3}, Partition: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1},
		&PartitionChangeRecord{TopicID: UUID{1, 2, 3}, Partition: 1, Leader: &leader},
		&ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: "cleanup.policy", Value: &v},
		&ProducerIDsRecord{BrokerID: 1, NextProducerID: 1000},
		&FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: 24},
		&FeatureLevelRecord{Name: GroupVersionFeature, FeatureLevel: 0},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, r := range sampleRecords() {
		b, err := Encode(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip of %T: got %+v want %+v", r, got, r)
		}
	}
}

func TestDecodeRejectsUnknown(t *testing.T) {
	for _, b := range [][]byte{nil, {0x80}, {99, 0, '{', '}'}, {2, 7, '{', '}'}, {2, 0, 'x'}} {
		if _, err := Decode(b); err == nil {
			t.Fatalf("Decode(%v) accepted bad input", b)
		}
	}
}

func TestImageApply(t *testing.T) {
	img := EmptyImage().Apply(7, sampleRecords())
	if img.ClusterID != "abc" || img.Offset != 7 {
		t.Fatalf("cluster %q offset %d", img.ClusterID, img.Offset)
	}
	topic := img.Topic("t")
	if topic == nil || len(topic.Partitions) != 2 {
		t.Fatalf("topic %+v", topic)
	}
	if p := topic.Partitions[1]; p.Leader != 2 || p.LeaderEpoch != 1 || p.PartitionEpoch != 1 {
		t.Fatalf("partition change not applied: %+v", p)
	}
	if img.Configs(ResourceTopic, "t")["cleanup.policy"] != "compact" {
		t.Fatal("config not applied")
	}
	if img.NextProducerID != 1000 {
		t.Fatalf("next producer id %d", img.NextProducerID)
	}
	// Older images are unchanged by later applies.
	next := img.Apply(8, []Record{&RemoveTopicRecord{TopicID: UUID{1, 2, 3}}})
	if next.Topic("t") != nil || len(next.Configs(ResourceTopic, "t")) != 0 {
		t.Fatal("topic not removed")
	}
	if img.Topic("t") == nil {
		t.Fatal("removing from the next image changed the old one")
	}
}

func FuzzDecode(f *testing.F) {
	for _, r := range sampleRecords() {
		b, _ := Encode(nil, r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(nil, r)
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
	})
}

func TestSnapshotRoundTrip(t *testing.T) {
	img := EmptyImage().Apply(41, sampleRecords())
	b, err := EncodeSnapshot(img)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b, 41)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Records(), img.Records()) || back.Offset != 41 || back.NextProducerID != img.NextProducerID {
		t.Fatalf("snapshot round trip differs:\n%+v\n%+v", back.Records(), img.Records())
	}
	if _, err := DecodeSnapshot(b[:len(b)-1], 41); err == nil {
		t.Fatal("truncated snapshot decoded")
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	b, _ := EncodeSnapshot(EmptyImage().Apply(1, sampleRecords()))
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := DecodeSnapshot(b, 1)
		if err != nil {
			return
		}
		again, err := EncodeSnapshot(img)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeSnapshot(again, 1); err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
	})
}
