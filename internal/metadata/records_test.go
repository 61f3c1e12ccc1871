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
		&PartitionChangeRecord{TopicID: UUID{1, 2, 3}, Partition: 0, Replicas: []int32{2, 1}, AddingReplicas: []int32{2}, RemovingReplicas: []int32{1}},
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

// TestRecordVersions pins the version each partition record is written at
// and that version 0 records written before reassignments existed still
// decode.
func TestRecordVersions(t *testing.T) {
	id := UUID{1, 2, 3}
	cases := []struct {
		r       Record
		version byte
	}{
		{&PartitionRecord{TopicID: id, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}, 0},
		{&PartitionRecord{TopicID: id, Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1, AddingReplicas: []int32{2}}, 1},
		{&PartitionChangeRecord{TopicID: id, ISR: []int32{1}}, 0},
		{&PartitionChangeRecord{TopicID: id, Replicas: []int32{2}}, 0},
		{&PartitionChangeRecord{TopicID: id, Replicas: []int32{2, 1}, RemovingReplicas: []int32{1}}, 1},
	}
	for _, tc := range cases {
		b, err := Encode(nil, tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if b[1] != tc.version {
			t.Errorf("%+v written at version %d, want %d", tc.r, b[1], tc.version)
		}
	}
	// Bytes as version 0 wrote them.
	old := append([]byte{byte(TypePartitionChange), 0}, `{"topicId":"AQIDAAAAAAAAAAAAAAAAAA","partitionId":0,"isr":[1,2]}`...)
	r, err := Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.(*PartitionChangeRecord); !reflect.DeepEqual(c.ISR, []int32{1, 2}) || c.TopicID != id {
		t.Fatalf("old record decoded as %+v", c)
	}
	for _, bad := range []string{
		// Version 0 carrying version 1 fields.
		`{"topicId":"AQIDAAAAAAAAAAAAAAAAAA","partitionId":0,"replicas":[1,2],"addingReplicas":[2]}`,
	} {
		if _, err := Decode(append([]byte{byte(TypePartitionChange), 0}, bad...)); err == nil {
			t.Errorf("version 0 record %s decoded", bad)
		}
	}
	// Adding replicas without the replica set they belong to.
	bad := append([]byte{byte(TypePartitionChange), 1}, `{"topicId":"AQIDAAAAAAAAAAAAAAAAAA","partitionId":0,"addingReplicas":[2]}`...)
	if _, err := Decode(bad); err == nil {
		t.Error("adding replicas without replicas decoded")
	}
	if _, err := Decode(append([]byte{byte(TypeTopic), 1}, `{}`...)); err == nil {
		t.Error("topic record version 1 decoded")
	}
}

func TestImageReassignmentState(t *testing.T) {
	id := UUID{1, 2, 3}
	img := EmptyImage().Apply(0, []Record{
		&TopicRecord{Name: "t", TopicID: id},
		&PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1},
	})
	img = img.Apply(1, []Record{&PartitionChangeRecord{TopicID: id, Partition: 0, Replicas: []int32{2, 3, 1}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}}})
	p := img.Topic("t").Partitions[0]
	if !p.Reassigning() || !reflect.DeepEqual(p.TargetReplicas(), []int32{2, 3}) {
		t.Fatalf("reassigning partition %+v", p)
	}
	// An ISR change leaves the reassignment as it was.
	img = img.Apply(2, []Record{&PartitionChangeRecord{TopicID: id, Partition: 0, ISR: []int32{1, 2, 3}}})
	if p := img.Topic("t").Partitions[0]; !p.Reassigning() {
		t.Fatalf("ISR change ended the reassignment: %+v", p)
	}
	// The snapshot keeps it.
	b, err := EncodeSnapshot(img)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Topic("t").Partitions[0], img.Topic("t").Partitions[0]) {
		t.Fatalf("snapshot: %+v, want %+v", back.Topic("t").Partitions[0], img.Topic("t").Partitions[0])
	}
	// A record setting replicas alone ends it.
	img = img.Apply(3, []Record{&PartitionChangeRecord{TopicID: id, Partition: 0, Replicas: []int32{2, 3}, ISR: []int32{2, 3}}})
	if p := img.Topic("t").Partitions[0]; p.Reassigning() || !reflect.DeepEqual(p.Replicas, []int32{2, 3}) {
		t.Fatalf("completed partition %+v", p)
	}
}

// TestRandomUUIDAsKafka: of 10,000 random UUIDs (about 156 of which a plain
// random draw would print with a leading "-"), none prints with one, none
// is reserved, and no two are equal.
func TestRandomUUIDAsKafka(t *testing.T) {
	seen := make(map[UUID]bool)
	for range 10000 {
		u := RandomUUID()
		if s := u.String(); s[0] == '-' {
			t.Fatalf("%s starts with '-'", s)
		}
		if [8]byte(u[:8]) == [8]byte{} {
			t.Fatalf("%s is reserved", u)
		}
		if seen[u] {
			t.Fatalf("%s drawn twice", u)
		}
		seen[u] = true
	}
}
