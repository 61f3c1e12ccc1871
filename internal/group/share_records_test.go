package group

import (
	"bytes"
	"testing"
)

func TestShareGroupMetadataRecord(t *testing.T) {
	kv := shareGroupMetadataKV("g", 5, 0, false)
	wantKey := []byte{0x00, 0x0b, 0x00, 0x01, 'g'}
	wantValue := []byte{0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(kv.Key, wantKey) || !bytes.Equal(kv.Value, wantValue) {
		t.Fatalf("encoded %x / %x", kv.Key, kv.Value)
	}
	r, err := decodeShareGroupMetadata(kv.Key, kv.Value)
	if err != nil || r.group != "g" || r.epoch != 5 || r.tombstone {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	if _, err := decodeShareGroupMetadata(kv.Key, []byte{0, 1, 0}); err == nil {
		t.Fatal("unknown version accepted")
	}
}

// FuzzShareGroupMetadataRecord: any bytes decode to a record or an error,
// never a panic, and a decoded record encodes back to a decodable one.
func FuzzShareGroupMetadataRecord(f *testing.F) {
	kv := shareGroupMetadataKV("group", 7, -3, false)
	f.Add(kv.Key, kv.Value)
	f.Add(kv.Key, []byte(nil))
	f.Add([]byte{0, 11, 0xff, 0xff}, []byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := decodeShareGroupMetadata(key, value)
		if err != nil {
			return
		}
		again := shareGroupMetadataKV(r.group, r.epoch, r.metadataHash, r.tombstone)
		if _, err := decodeShareGroupMetadata(again.Key, again.Value); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
	})
}
