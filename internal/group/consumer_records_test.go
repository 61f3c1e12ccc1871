package group

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// The example in consumer_records.go, laid out from Kafka's
// ConsumerGroupMetadataKey.json (type 3, group) and
// ConsumerGroupMetadataValue.json (v0, flexible: epoch, empty tags).
func TestConsumerGroupEpochRecordMatchesKafkaBytes(t *testing.T) {
	kv := groupEpochRecord("g", 5).kv()
	if want := mustHex(t, "0003 0001 67"); !bytes.Equal(kv.Key, want) {
		t.Errorf("key %x, want %x", kv.Key, want)
	}
	if want := mustHex(t, "0000 00000005 00"); !bytes.Equal(kv.Value, want) {
		t.Errorf("value %x, want %x", kv.Value, want)
	}
}

// ConsumerGroupCurrentMemberAssignmentValue laid out by hand from Kafka's
// schema: memberEpoch, previousMemberEpoch, state, then two compact arrays
// of (uuid, compact int32 array, tags), then tags.
func TestCurrentAssignmentRecordMatchesKafkaBytes(t *testing.T) {
	topic := [16]byte{0xaa, 15: 0xbb}
	m := newConsumerMember("m")
	m.memberEpoch, m.previousMemberEpoch, m.state = 3, 2, memberUnrevokedPartitions
	m.assigned = assignment{topic: {0, 2}}
	m.pendingRevocation = assignment{topic: {1}}
	kv := currentAssignmentRecord("g", m).kv()
	if want := mustHex(t, "0008 0001 67 0001 6d"); !bytes.Equal(kv.Key, want) {
		t.Errorf("key %x, want %x", kv.Key, want)
	}
	want := mustHex(t, "0000 00000003 00000002 01"+
		" 02 aa0000000000000000000000000000bb 03 00000000 00000002 00"+
		" 02 aa0000000000000000000000000000bb 02 00000001 00"+
		" 00")
	if !bytes.Equal(kv.Value, want) {
		t.Errorf("value\n %x\nwant\n %x", kv.Value, want)
	}
}

func TestConsumerRecordsRoundTrip(t *testing.T) {
	topic := [16]byte{1, 2, 3}
	m := newConsumerMember("member-1")
	m.instanceID, m.rackID = stringPtr("inst"), nil
	m.clientID, m.clientHost = "client", "/10.0.0.1"
	m.subscribedTopicNames, m.subscribedTopicRegex = []string{"a", "b"}, "c.*"
	m.rebalanceTimeoutMs, m.serverAssignor = 30000, stringPtr("range")
	cur := newConsumerMember("member-1")
	cur.memberEpoch, cur.previousMemberEpoch, cur.state = 7, 6, memberStable
	cur.assigned = assignment{topic: {0, 1, 5}}
	records := []*consumerRecord{
		groupEpochRecord("g", 9),
		subscriptionMetadataRecord("g", map[string]topicInfo{"a": {id: topic, partitions: 6}, "b": {id: [16]byte{9}, partitions: 1}}),
		memberMetadataRecord("g", m),
		targetEpochRecord("g", 9),
		targetMemberRecord("g", "member-1", assignment{topic: {0, 1}}),
		currentAssignmentRecord("g", cur),
		regexRecord("g", "c.*", resolvedRegex{topics: []string{"cat", "cow"}, version: -1, timestampMs: 12345}),
		tombstone(recordTypeConsumerGroupCurrentAssignment, "g", "member-1"),
		tombstone(recordTypeConsumerGroupRegex, "g", "c.*"),
		tombstone(recordTypeConsumerGroupMetadata, "g", ""),
	}
	for _, r := range records {
		kv := r.kv()
		got, err := decodeConsumerRecord(kv.Key, kv.Value)
		if err != nil {
			t.Fatalf("type %d: %v", r.recordType, err)
		}
		// Normalize what decoding fills in but the record did not carry.
		if got.metadata != nil {
			got.metadata.memberEpoch, got.metadata.previousMemberEpoch = r.metadata.memberEpoch, r.metadata.previousMemberEpoch
		}
		if got.assignment != nil {
			got.assignment.rebalanceTimeoutMs = r.assignment.rebalanceTimeoutMs
			if len(got.assignment.pendingRevocation) == 0 {
				got.assignment.pendingRevocation = r.assignment.pendingRevocation
			}
		}
		if got.topics != nil && r.topics == nil {
			got.topics = nil
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("type %d:\n got %+v\nwant %+v", r.recordType, got, r)
		}
	}
}

func TestDecodeConsumerRecordSkipsUnknownTags(t *testing.T) {
	// Kafka 4.1 adds the metadata hash as tag 0 of ConsumerGroupMetadataValue.
	value := mustHex(t, "0000 00000005 01 00 08 0102030405060708")
	r, err := decodeConsumerRecord(mustHex(t, "0003 0001 67"), value)
	if err != nil || r.epoch != 5 {
		t.Fatalf("%+v, %v", r, err)
	}
}

func TestDecodeConsumerRecordRejectsCorruption(t *testing.T) {
	key := mustHex(t, "0003 0001 67")
	for _, value := range [][]byte{
		mustHex(t, "0001 00000005 00"),    // unknown version
		mustHex(t, "0000 000000"),         // short
		mustHex(t, "0000 00000005 00 ff"), // trailing bytes
	} {
		if _, err := decodeConsumerRecord(key, value); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x: %v", value, err)
		}
	}
	if _, err := decodeConsumerRecord(mustHex(t, "0005 0001 67"), nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("member key without member id: %v", err)
	}
}

func FuzzDecodeConsumerRecord(f *testing.F) {
	for _, r := range []*consumerRecord{
		groupEpochRecord("g", 1),
		memberMetadataRecord("g", &consumerMember{id: "m", subscribedTopicNames: []string{"t"}}),
		currentAssignmentRecord("g", &consumerMember{id: "m", assigned: assignment{{1}: {0, 1}}}),
		subscriptionMetadataRecord("g", map[string]topicInfo{"t": {partitions: 3}}),
	} {
		kv := r.kv()
		f.Add(kv.Key, kv.Value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if !isConsumerRecordType(consumerRecordKind(key)) {
			return
		}
		r, err := decodeConsumerRecord(key, value)
		if err != nil {
			return
		}
		// Whatever decodes must apply without panicking (the invariants
		// hold for logs this package writes, not for any record alone).
		s := newShard(0, DefaultConfig())
		s.applyConsumerRecord(r)
	})
}
