package record

import (
	"encoding/hex"
	"strings"
	"testing"
)

// fixtureBatch is a two-record uncompressed batch written out by hand from
// the layout in the package doc, one field a line. Its CRC was computed
// independently with hash/crc32 over bytes 21..82.
var fixtureBatch = strings.Join([]string{
	"0000000000000000", // baseOffset 0
	"00000047",         // batchLength 71: 49 header bytes after this field + 22 of records
	"ffffffff",         // partitionLeaderEpoch -1
	"02",               // magic 2
	"161c9455",         // crc
	"0000",             // attributes: no codec, CreateTime, not transactional, not control
	"00000001",         // lastOffsetDelta 1
	"0000018bcfe56800", // baseTimestamp 1700000000000
	"0000018bcfe56805", // maxTimestamp 1700000000005
	"ffffffffffffffff", // producerId -1
	"ffff",             // producerEpoch -1
	"ffffffff",         // baseSequence -1
	"00000002",         // recordCount 2
	// record 0
	"10",   // length 8
	"00",   // attributes
	"00",   // timestampDelta 0
	"00",   // offsetDelta 0
	"026b", // key length 1, "k"
	"0276", // value length 1, "v"
	"00",   // 0 headers
	// record 1
	"18",     // length 12
	"00",     // attributes
	"0a",     // timestampDelta 5
	"02",     // offsetDelta 1
	"01",     // key length -1: null
	"046869", // value length 2, "hi"
	"02",     // 1 header
	"0268",   // header key length 1, "h"
	"0278",   // header value length 1, "x"
}, "")

func TestDecodeFixture(t *testing.T) {
	batch, err := hex.DecodeString(fixtureBatch)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Verify(batch)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := Header{
		BatchLength: 71, PartitionLeaderEpoch: -1, Magic: 2, CRC: 0x161c9455,
		LastOffsetDelta: 1, BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000005,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: 2,
	}
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	records, err := ReadRecords(batch, 0)
	if err != nil {
		t.Fatalf("ReadRecords: %v", err)
	}
	wantRecords := []Record{
		{Key: []byte("k"), Value: []byte("v")},
		{TimestampDelta: 5, OffsetDelta: 1, Value: []byte("hi"), Headers: []RecordHeader{{Key: "h", Value: []byte("x")}}},
	}
	if len(records) != len(wantRecords) {
		t.Fatalf("%d records", len(records))
	}
	for i := range records {
		if diff := sameRecord(records[i], wantRecords[i], wantRecords[i].OffsetDelta); diff != "" {
			t.Errorf("record %d: %s", i, diff)
		}
	}
	if ts := h.RecordTimestamp(records[1].TimestampDelta); ts != 1700000000005 {
		t.Errorf("record 1 timestamp %d", ts)
	}

	// Our builder writes the same bytes from the same description.
	opts := DefaultBuildOptions()
	opts.BaseTimestamp = 1700000000000
	built := mustBuild(t, opts, wantRecords)
	if hex.EncodeToString(built) != fixtureBatch {
		t.Fatalf("Build differs from the fixture:\n got %x\nwant %s", built, fixtureBatch)
	}

	// A client would send it as is, and a default topic accepts it.
	if _, err := Validate(batch, DefaultValidateOptions(1700000000000)); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}
