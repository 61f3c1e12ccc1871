package group

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The bytes in the package doc, laid out from Kafka's OffsetCommitKey.json
// (record type 1: group, topic, partition) and OffsetCommitValue.json (v3:
// offset, leaderEpoch, metadata, commitTimestamp).
func TestOffsetCommitRecordMatchesKafkaBytes(t *testing.T) {
	wantKey := mustHex(t, "0001 0001 67 0001 74 00000000")
	wantValue := mustHex(t, "0003 0000000000000005 00000001 0000 00000000000003e8")

	kv := offsetCommitKV("g", "t", 0, &offsetValue{offset: 5, leaderEpoch: 1, commitTimestampMs: 1000, expireTimestampMs: -1})
	if !bytes.Equal(kv.Key, wantKey) {
		t.Errorf("key = %x, want %x", kv.Key, wantKey)
	}
	if !bytes.Equal(kv.Value, wantValue) {
		t.Errorf("value = %x, want %x", kv.Value, wantValue)
	}

	r, err := DecodeRecord(wantKey, wantValue)
	if err != nil {
		t.Fatal(err)
	}
	k, v := r.OffsetCommitKey, r.OffsetCommitValue
	if k.Group != "g" || k.Topic != "t" || k.Partition != 0 {
		t.Errorf("key decoded as %+v", k)
	}
	got := offsetValueFromRecord(v)
	want := offsetValue{offset: 5, leaderEpoch: 1, commitTimestampMs: 1000, expireTimestampMs: -1}
	if got != want {
		t.Errorf("value decoded as %+v, want %+v", got, want)
	}
}

func TestOffsetCommitValueVersions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		want  offsetValue
	}{
		{"v0", "0000 0000000000000007 0002 6d64 0000000000000064", offsetValue{offset: 7, leaderEpoch: -1, metadata: "md", commitTimestampMs: 100, expireTimestampMs: -1}},
		{"v1 with expiry", "0001 0000000000000007 0000 0000000000000064 00000000000000c8", offsetValue{offset: 7, leaderEpoch: -1, commitTimestampMs: 100, expireTimestampMs: 200}},
		{"v2", "0002 0000000000000007 0000 0000000000000064", offsetValue{offset: 7, leaderEpoch: -1, commitTimestampMs: 100, expireTimestampMs: -1}},
		// v4 is flexible: compact string (length+1) and a tag section.
		{"v4", "0004 0000000000000007 00000003 03 6d64 0000000000000064 00", offsetValue{offset: 7, leaderEpoch: 3, metadata: "md", commitTimestampMs: 100, expireTimestampMs: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRecord(mustHex(t, "0001 0001 67 0001 74 00000000"), mustHex(t, tc.value))
			if err != nil {
				t.Fatal(err)
			}
			if got := offsetValueFromRecord(r.OffsetCommitValue); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOffsetCommitWithRetentionWritesV1(t *testing.T) {
	kv := offsetCommitKV("g", "t", 1, &offsetValue{offset: 9, leaderEpoch: 2, commitTimestampMs: 10, expireTimestampMs: 20})
	if kv.Value[1] != 1 {
		t.Fatalf("value version %d, want 1", kv.Value[1])
	}
	r, err := DecodeRecord(kv.Key, kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	want := offsetValue{offset: 9, leaderEpoch: -1, commitTimestampMs: 10, expireTimestampMs: 20}
	if got := offsetValueFromRecord(r.OffsetCommitValue); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestGroupMetadataRecordRoundTrip(t *testing.T) {
	instance := "instance-1"
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.ProtocolType = "consumer"
	v.Generation = 4
	v.Protocol = stringPtr("range")
	v.Leader = stringPtr("m1")
	v.CurrentStateTimestamp = 1234
	v.Members = []kmsg.GroupMetadataValueMember{{
		MemberID: "m1", InstanceID: &instance, ClientID: "c", ClientHost: "/127.0.0.1",
		RebalanceTimeoutMillis: 60000, SessionTimeoutMillis: 45000,
		Subscription: []byte{1, 2}, Assignment: []byte{3},
	}}
	kv := groupMetadataKV("grp", v)
	wantKey := mustHex(t, "0002 0003 677270")
	if !bytes.Equal(kv.Key, wantKey) {
		t.Errorf("key = %x, want %x", kv.Key, wantKey)
	}
	// Hand-laid v3 value, field by field from GroupMetadataValue.json.
	wantValue := mustHex(t, "0003"+
		"0008 636f6e73756d6572"+ // protocolType "consumer"
		"00000004"+ // generation
		"0005 72616e6765"+ // protocol "range"
		"0002 6d31"+ // leader "m1"
		"00000000000004d2"+ // currentStateTimestamp
		"00000001"+ // one member
		"0002 6d31"+ // memberId
		"000a 696e7374616e63652d31"+ // groupInstanceId
		"0001 63"+ // clientId
		"000a 2f3132372e302e302e31"+ // clientHost
		"0000ea60"+ // rebalanceTimeout
		"0000afc8"+ // sessionTimeout
		"00000002 0102"+ // subscription
		"00000001 03") // assignment
	if !bytes.Equal(kv.Value, wantValue) {
		t.Errorf("value = %x\nwant    %x", kv.Value, wantValue)
	}
	r, err := DecodeRecord(kv.Key, kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	g := classicGroupFromRecord(r.GroupMetadataKey.Group, r.GroupMetadataValue)
	if g.state != stateStable || g.generation != 4 || g.protocolName != "range" || g.leaderID != "m1" || g.stateTimestampMs != 1234 {
		t.Errorf("group decoded as %+v", g)
	}
	m := g.members["m1"]
	if m == nil || *m.instanceID != instance || m.rebalanceTimeoutMs != 60000 || !bytes.Equal(m.assignment, []byte{3}) || !bytes.Equal(m.metadata("range"), []byte{1, 2}) {
		t.Errorf("member decoded as %+v", m)
	}
	if g.staticMembers[instance] != "m1" {
		t.Error("static member not indexed")
	}
}

func TestTombstones(t *testing.T) {
	r, err := DecodeRecord(offsetCommitKV("g", "t", 3, nil).Key, nil)
	if err != nil || r.OffsetCommitKey == nil || r.OffsetCommitValue != nil {
		t.Errorf("offset tombstone decoded as %+v, %v", r, err)
	}
	kv := groupMetadataKV("g", nil)
	if kv.Value != nil {
		t.Error("group tombstone has a value")
	}
	r, err = DecodeRecord(kv.Key, nil)
	if err != nil || r.GroupMetadataKey == nil || r.GroupMetadataValue != nil {
		t.Errorf("group tombstone decoded as %+v, %v", r, err)
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key, value string
		want       error
	}{
		{"empty key", "", "", ErrCorrupt},
		{"short key", "0001 0001", "", ErrCorrupt},
		{"consumer group record", "0003 0001 67", "0000", ErrUnknownRecordType},
		{"future value version", "0001 0001 67 0001 74 00000000", "0005 00", ErrCorrupt},
		{"negative value version", "0002 0001 67", "ffff", ErrCorrupt},
		{"truncated value", "0001 0001 67 0001 74 00000000", "0003 0000", ErrCorrupt},
		{"one byte value", "0002 0001 67", "00", ErrCorrupt},
		{"huge member count", "0002 0001 67", "0003 0000 00000000 ffff ffff 0000000000000000 7fffffff", ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			value := mustHex(t, tc.value)
			if tc.value == "" {
				value = []byte{}
			}
			_, err := DecodeRecord(mustHex(t, tc.key), value)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzDecodeRecord(f *testing.F) {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.ProtocolType = "consumer"
	v.Protocol = stringPtr("range")
	v.Members = []kmsg.GroupMetadataValueMember{{MemberID: "m", Subscription: []byte{0, 1}}}
	for _, kv := range []KV{
		offsetCommitKV("g", "t", 0, &offsetValue{offset: 5, leaderEpoch: 1, commitTimestampMs: 1000, expireTimestampMs: -1}),
		offsetCommitKV("g", "t", 0, &offsetValue{offset: 5, commitTimestampMs: 1000, expireTimestampMs: 2000}),
		offsetCommitKV("g", "t", 0, nil),
		groupMetadataKV("g", v),
		groupMetadataKV("g", nil),
	} {
		f.Add(kv.Key, kv.Value, kv.Value == nil)
	}
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		}
		r, err := DecodeRecord(key, value)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnknownRecordType) {
				t.Fatalf("unmarked error %v", err)
			}
			return
		}
		// Whatever decodes must load into a shard without panicking.
		s := newShard(0, DefaultConfig())
		if err := s.replay(key, value); err != nil {
			t.Fatalf("decoded but did not replay: %v", err)
		}
		if r.GroupMetadataValue != nil {
			classicGroupFromRecord("g", r.GroupMetadataValue).checkInvariants()
		}
	})
}
