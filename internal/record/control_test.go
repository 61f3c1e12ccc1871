package record

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBuildControlBatch(t *testing.T) {
	for _, typ := range []ControlType{ControlCommit, ControlAbort} {
		t.Run(typ.String(), func(t *testing.T) {
			batch, err := BuildControlBatch(ControlBatchOptions{
				BaseOffset: 500, PartitionLeaderEpoch: 3, TimestampMs: testNowMs,
				ProducerID: 77, ProducerEpoch: 4, Type: typ, CoordinatorEpoch: 5,
			})
			if err != nil {
				t.Fatal(err)
			}
			h, err := Verify(batch)
			if err != nil {
				t.Fatal(err)
			}
			if !h.IsControl() || !h.IsTransactional() || h.Compression() != CodecNone || h.IsLogAppendTime() ||
				h.BaseOffset != 500 || h.PartitionLeaderEpoch != 3 || h.ProducerID != 77 || h.ProducerEpoch != 4 ||
				h.BaseSequence != -1 || h.RecordCount != 1 || h.LastOffsetDelta != 0 ||
				h.BaseTimestamp != testNowMs || h.MaxTimestamp != testNowMs {
				t.Fatalf("header %+v", h)
			}
			records, err := ReadRecords(batch, 0)
			if err != nil || len(records) != 1 {
				t.Fatalf("%d records, %v", len(records), err)
			}
			key, value := records[0].Key, records[0].Value
			got, err := ParseControlRecordType(key)
			if err != nil || got != typ {
				t.Fatalf("type %v, %v", got, err)
			}
			epoch, err := ParseEndTxnMarker(value)
			if err != nil || epoch != 5 {
				t.Fatalf("coordinator epoch %d, %v", epoch, err)
			}

			// franz-go's encodings of the same key and value.
			wantKey := (&kmsg.ControlRecordKey{Version: 0, Type: kmsg.ControlRecordKeyType(typ)}).AppendTo(nil)
			wantValue := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 5}).AppendTo(nil)
			if !bytes.Equal(key, wantKey) || !bytes.Equal(value, wantValue) {
				t.Fatalf("key % x value % x, kmsg writes % x and % x", key, value, wantKey, wantValue)
			}

			// Clients may not produce one.
			SetBaseOffset(batch, 0)
			if _, err := Validate(batch, DefaultValidateOptions(testNowMs)); !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("Validate of a control batch: %v", err)
			}
		})
	}
	if _, err := BuildControlBatch(ControlBatchOptions{Type: ControlLeaderChange}); err == nil {
		t.Fatal("built a leader change as an end-transaction marker")
	}
}

func TestParseControlRecordType(t *testing.T) {
	tests := []struct {
		key     []byte
		want    ControlType
		wantErr bool
	}{
		{[]byte{0, 0, 0, 1}, ControlCommit, false},
		{[]byte{0, 0, 0, 0}, ControlAbort, false},
		{[]byte{0, 0, 0, 6}, ControlKRaftVoters, false},
		{[]byte{0, 3, 0, 1}, ControlCommit, false}, // a newer version still names its type
		{[]byte{0, 0, 0, 99, 1, 2}, 99, false},
		{[]byte{0xff, 0xff, 0, 1}, 0, true},
		{[]byte{0, 0, 0}, 0, true},
		{nil, 0, true},
	}
	for _, test := range tests {
		got, err := ParseControlRecordType(test.key)
		if (err != nil) != test.wantErr || (err == nil && got != test.want) {
			t.Errorf("ParseControlRecordType(% x) = %v, %v", test.key, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("error %v is not ErrInvalidRecord", err)
		}
	}
	if _, err := ParseEndTxnMarker([]byte{0, 0, 0, 0, 5}); err == nil {
		t.Error("5-byte marker parsed")
	}
	if _, err := ParseEndTxnMarker([]byte{0x80, 0, 0, 0, 0, 5}); err == nil {
		t.Error("marker with a negative version parsed")
	}
	if ControlType(42).String() != "UNKNOWN(42)" || ControlCommit.String() != "COMMIT" {
		t.Error("ControlType.String")
	}
}
