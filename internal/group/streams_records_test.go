package group

import (
	"errors"
	"testing"
)

func sampleStreamsRecords() []*streamsRecord {
	topology := topologyFromRequest(wordCountTopology(2))
	member := &streamsMember{id: "m", instanceID: stringPtr("i"), clientID: "c", clientHost: "/h", rebalanceTimeoutMs: 30000,
		topologyEpoch: 2, processID: "p", userEndpoint: &streamsEndpoint{"host", 8080}, clientTags: []keyValue{{"zone", "a"}},
		memberEpoch: 4, previousMemberEpoch: 3, state: memberUnrevokedPartitions,
		assigned:          streamsTasks{active: tasksOf("0_0", "1_2"), standby: tasksOf("1_1"), warmup: taskSet{}},
		pendingRevocation: streamsTasks{active: tasksOf("0_3")}}
	return []*streamsRecord{
		streamsGroupMetadataRecord("g", 5, -77, 2),
		streamsGroupMetadataRecord("g", 5, 1, -1),
		streamsMemberRecord("g", member),
		streamsTargetEpochRecord("g", 5),
		streamsTargetRecord("g", "m", member.assigned),
		streamsCurrentAssignmentRecord("g", member),
		streamsTopologyRecord("g", topology),
		streamsTombstone(recordTypeStreamsGroupMemberMetadata, "g", "m"),
	}
}

// TestStreamsRecordsRoundTrip encodes every streams record type and
// decodes it back to the same fields.
func TestStreamsRecordsRoundTrip(t *testing.T) {
	for _, r := range sampleStreamsRecords() {
		kv := r.kv()
		back, err := decodeStreamsRecord(kv.Key, kv.Value)
		if err != nil {
			t.Fatalf("type %d: %v", r.recordType, err)
		}
		again := back.kv()
		if string(again.Key) != string(kv.Key) || string(again.Value) != string(kv.Value) || back.tombstone != r.tombstone {
			t.Errorf("type %d: %x/%x back as %x/%x", r.recordType, kv.Key, kv.Value, again.Key, again.Value)
		}
	}
	// The group epoch record of group "g" at epoch 5, hash 1, no validated
	// topology: the layout the package doc draws.
	kv := streamsGroupMetadataRecord("g", 5, 1, -1).kv()
	if got := []byte(kv.Value); string(kv.Key) != string(mustHex(t, "0011 0001 67")) ||
		string(got) != string(mustHex(t, "0000 00000005 0000000000000001 00")) {
		t.Fatalf("metadata record %x / %x", kv.Key, kv.Value)
	}
	kv = streamsGroupMetadataRecord("g", 5, 1, 2).kv()
	if string(kv.Value) != string(mustHex(t, "0000 00000005 0000000000000001 01 00 04 00000002")) {
		t.Fatalf("validated topology epoch tag: %x", kv.Value)
	}
}

func TestDecodeStreamsRecordRejectsCorruption(t *testing.T) {
	key := mustHex(t, "0011 0001 67")
	for _, value := range [][]byte{
		mustHex(t, "0001 00000005 0000000000000001 00"),    // unknown version
		mustHex(t, "0000 000000"),                          // short
		mustHex(t, "0000 00000005 0000000000000001 00 ff"), // trailing bytes
	} {
		if _, err := decodeStreamsRecord(key, value); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x: %v", value, err)
		}
	}
	if _, err := decodeStreamsRecord(mustHex(t, "0013 0001 67"), nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("member key without member id: %v", err)
	}
	// A task list claiming more elements than there are bytes.
	if _, err := decodeStreamsRecord(mustHex(t, "0015 0001 67 0001 6d"), mustHex(t, "0000 ffffff07")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("oversized array: %v", err)
	}
}

func FuzzDecodeStreamsRecord(f *testing.F) {
	for _, r := range sampleStreamsRecords() {
		kv := r.kv()
		f.Add(kv.Key, kv.Value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if !isStreamsRecordType(consumerRecordKind(key)) {
			return
		}
		r, err := decodeStreamsRecord(key, value)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same,
		// and applies without panicking.
		kv := r.kv()
		back, err := decodeStreamsRecord(kv.Key, kv.Value)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again := back.kv(); string(again.Value) != string(kv.Value) {
			t.Fatalf("not stable: %x then %x", kv.Value, again.Value)
		}
		s := newShard(0, DefaultConfig())
		s.applyStreamsRecord(r)
	})
}
