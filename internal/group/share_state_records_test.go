package group

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShareGroupStatePartitionsRecord: the record's bytes are Kafka's
// schema (type 15, flexible version 0), and they decode back.
func TestShareGroupStatePartitionsRecord(t *testing.T) {
	var state shareStatePartitions
	state.addInitialized([16]byte{1}, "t", []int32{1, 0, 1}, 5)
	kv := shareGroupStatePartitionsKV("g", &state)
	wantKey := "000f" + "000167"
	wantValue := "0000" + "01" + "02" + "01" + strings.Repeat("00", 15) + "0274" + "03" + "00000000" + "00000001" +
		"0000000000000005" + "00" + "01" + "00"
	if hex.EncodeToString(kv.Key) != wantKey || hex.EncodeToString(kv.Value) != wantValue {
		t.Fatalf("encoded %x / %x", kv.Key, kv.Value)
	}
	r, err := decodeShareGroupStatePartitions(kv.Key, kv.Value)
	if err != nil || r.group != "g" || r.tombstone || len(r.state.initialized) != 1 ||
		!slices.Equal(r.state.initialized[[16]byte{1}].partitions, []int32{0, 1}) || r.state.initialized[[16]byte{1}].createTimestampMs != 5 {
		t.Fatalf("decoded %+v, %v", r, err)
	}

	state.markDeleting([16]byte{1}, "t", 9)
	kv = shareGroupStatePartitionsKV("g", &state)
	r, err = decodeShareGroupStatePartitions(kv.Key, kv.Value)
	if err != nil || len(r.state.initialized) != 0 || r.state.deleting[[16]byte{1}].name != "t" {
		t.Fatalf("deleting: %+v, %v", r, err)
	}
	tomb := shareGroupStatePartitionsKV("g", nil)
	if r, err := decodeShareGroupStatePartitions(tomb.Key, tomb.Value); err != nil || !r.tombstone {
		t.Fatalf("tombstone: %+v %v", r, err)
	}
	for _, bad := range []string{"0001", "0000", "000002", "0000" + "7f"} {
		value, _ := hex.DecodeString(bad)
		if _, err := decodeShareGroupStatePartitions(kv.Key, value); err == nil {
			t.Errorf("value %s decoded", bad)
		}
	}
}

// FuzzShareGroupStatePartitionsRecord: any bytes decode to a record or an
// error, never a panic or an allocation the bytes cannot back, and a
// decoded record encodes back to one that decodes the same.
func FuzzShareGroupStatePartitionsRecord(f *testing.F) {
	var state shareStatePartitions
	state.addInitialized([16]byte{7}, "topic", []int32{0, 2, 4}, 123)
	state.markDeleting([16]byte{8}, "gone", 124)
	kv := shareGroupStatePartitionsKV("group", &state)
	f.Add(kv.Key, kv.Value)
	f.Add(kv.Key, []byte(nil))
	f.Add([]byte{0, 15, 0, 1, 'g'}, []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := decodeShareGroupStatePartitions(key, value)
		if err != nil || r.tombstone {
			return
		}
		again := shareGroupStatePartitionsKV(r.group, &r.state)
		r2, err := decodeShareGroupStatePartitions(again.Key, again.Value)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if len(r2.state.initialized) != len(r.state.initialized) || len(r2.state.deleting) != len(r.state.deleting) {
			t.Fatalf("round trip changed the sets: %+v then %+v", r.state, r2.state)
		}
	})
}

// TestShareGroupStatePartitionsSurviveReload: partitions assigned to
// members are recorded as initialized in the heartbeat's write, a reload
// (coordinator failover) replays them, a topic marked deleting leaves
// them, and deleting the group writes the record's tombstone.
func TestShareGroupStatePartitionsSurviveReload(t *testing.T) {
	topics := fakeTopics{"t": 3, "u": 2}
	h := newConsumerHarness(t, topics)
	if r := h.shareHeartbeat("a", 0, "t"); r.ErrorCode != 0 {
		t.Fatalf("join: %+v", r)
	}
	g := h.s.groups["sg"].(*shareGroup)
	if got := g.statePartitions.initialized[topicIDOf("t")]; got.name != "t" || !slices.Equal(got.partitions, []int32{0, 1, 2}) {
		t.Fatalf("initialized after the join: %+v", g.statePartitions)
	}
	written := 0
	for _, kv := range h.log {
		if consumerRecordKind(kv.Key) == recordTypeShareGroupStatePartitions {
			written++
		}
	}
	if written != 1 {
		t.Fatalf("%d state partition records after the join, want 1", written)
	}
	// A keepalive changes nothing and writes nothing.
	logged := len(h.log)
	h.shareHeartbeat("a", g.members["a"].memberEpoch)
	if len(h.log) != logged {
		t.Fatalf("a keepalive wrote %d records", len(h.log)-logged)
	}
	h.shareHeartbeat("b", 0, "u")

	h.reload()
	g = h.s.groups["sg"].(*shareGroup)
	if len(g.members) != 0 || len(g.statePartitions.initialized) != 2 ||
		!slices.Equal(g.statePartitions.initialized[topicIDOf("u")].partitions, []int32{0, 1}) {
		t.Fatalf("after the reload: members %d, %+v", len(g.members), g.statePartitions)
	}

	g.statePartitions.markDeleting(topicIDOf("u"), "u", h.now.UnixMilli())
	h.s.write([]KV{shareGroupStatePartitionsKV("sg", &g.statePartitions)}, func(time.Time, error) {})
	h.drain()
	h.reload()
	g = h.s.groups["sg"].(*shareGroup)
	if len(g.statePartitions.initialized) != 1 || g.statePartitions.deleting[topicIDOf("u")].name != "u" {
		t.Fatalf("after deleting u: %+v", g.statePartitions)
	}

	records := h.s.groupTombstoneKVs("sg")
	h.s.write(records, func(time.Time, error) { h.s.removeGroup("sg") })
	h.drain()
	h.reload()
	if h.s.groups["sg"] != nil {
		t.Fatalf("the deleted group came back: %+v", h.s.groups["sg"])
	}
}
