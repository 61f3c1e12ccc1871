package txn

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, tv := range []int8{TV0, TV2} {
		tr := Transit{
			ProducerID: 42, PrevProducerID: 41, NextProducerID: -1, ProducerEpoch: 3, TimeoutMs: 60000,
			State: Ongoing, Partitions: partitionSet{{"b", 1}: {}, {"a", 0}: {}, {"a", 2}: {}},
			StartTimestampMs: 10, UpdateTimestampMs: 20, ClientTransactionVersion: tv,
		}
		r, err := DecodeRecord(EncodeKey("tx"), EncodeValue(tr, tv))
		if err != nil {
			t.Fatal(err)
		}
		got := r.Transit
		if r.TransactionalID != "tx" || got.ProducerID != 42 || got.ProducerEpoch != 3 || got.State != Ongoing ||
			!got.Partitions.equal(tr.Partitions) || got.StartTimestampMs != 10 || got.UpdateTimestampMs != 20 {
			t.Fatalf("tv %d: round trip %+v", tv, got)
		}
		if tv == TV2 && (got.PrevProducerID != 41 || got.ClientTransactionVersion != TV2) {
			t.Fatalf("v1 tagged fields lost: %+v", got)
		}
		if tv == TV0 && got.PrevProducerID != NoProducerID {
			t.Fatalf("v0 has no previous producer id: %+v", got)
		}
	}
	if r, err := DecodeRecord(EncodeKey("tx"), nil); err != nil || !r.Tombstone {
		t.Fatalf("tombstone: %+v %v", r, err)
	}
}

// TestRecordBytes pins the exact bytes of a v0 record, so the format on disk
// is Kafka's.
func TestRecordBytes(t *testing.T) {
	key := EncodeKey("t")
	if want := "00000001" + "74"; hex.EncodeToString(key) != want {
		t.Fatalf("key = %x, want %s", key, want)
	}
	v := EncodeValue(Transit{ProducerID: 1, ProducerEpoch: 2, TimeoutMs: 3, State: Empty, Partitions: partitionSet{}, StartTimestampMs: -1, UpdateTimestampMs: 4}, TV0)
	want := "0000" + "0000000000000001" + "0002" + "00000003" + "00" + "ffffffff" + "0000000000000004" + "ffffffffffffffff"
	if hex.EncodeToString(v) != want {
		t.Fatalf("value = %x\n want %s", v, want)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	tr := Transit{ProducerID: 1, ProducerEpoch: 0, TimeoutMs: 100, State: PrepareCommit, Partitions: partitionSet{{"a", 0}: {}}, UpdateTimestampMs: 1}
	f.Add(EncodeKey("x"), EncodeValue(tr, TV0))
	f.Add(EncodeKey("x"), EncodeValue(tr, TV2))
	f.Add([]byte{0, 0}, []byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := DecodeRecord(key, value)
		if err != nil || r.Tombstone {
			return
		}
		again, err := DecodeRecord(EncodeKey(r.TransactionalID), EncodeValue(r.Transit, TV2))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again.Transit.State != r.Transit.State || !again.Transit.Partitions.equal(r.Transit.Partitions) || !bytes.Equal([]byte(again.TransactionalID), []byte(r.TransactionalID)) {
			t.Fatalf("re-encoded record differs: %+v vs %+v", again, r)
		}
	})
}
