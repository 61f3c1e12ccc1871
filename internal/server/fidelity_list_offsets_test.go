package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestListOffsetsByTimestampInsideBatch produces one batch of records with
// out-of-order timestamps and asks for offsets by timestamp: Kafka decodes
// the batch and answers the first record at or after the target, with that
// record's timestamp, and for the max-timestamp spec (-3) the record that
// carries the largest timestamp, not the batch's base or last offset.
func TestListOffsetsByTimestampInsideBatch(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "batched-times", 1, nil)
	cl := tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Second))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	// Minutes per offset: the largest timestamp (minute 20) is at offset 4,
	// in the middle of the batch.
	minutes := []int{0, 2, 4, 6, 20, 8, 10, 12}
	var recs []*kgo.Record
	for i, m := range minutes {
		recs = append(recs, &kgo.Record{Topic: "batched-times", Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(m) * time.Minute)})
	}
	ctx := testContext(t)
	results := cl.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		t.Fatal(err)
	}
	if results[0].Record.Offset != 0 || results[len(results)-1].Record.Offset != int64(len(minutes)-1) {
		t.Fatalf("offsets %d..%d", results[0].Record.Offset, results[len(results)-1].Record.Offset)
	}
	// One batch on the wire, so the answers below come from inside it.
	fetches := tn.client(kgo.ConsumeTopics("batched-times"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())).PollRecords(ctx, len(minutes))
	if err := fetches.Err(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		targetMinute float64
		offset       int64
		minute       int
	}{
		{0, 0, 0},
		{3, 2, 4},   // the third record of the batch
		{5.5, 3, 6}, // the fourth
		{7, 4, 20},  // offset order: the first record at or after minute 7 is minute 20
		{13, 4, 20}, // only the max-timestamp record reaches minute 13
	} {
		target := base.Add(time.Duration(tc.targetMinute * float64(time.Minute))).UnixMilli()
		listed, err := adm.ListOffsetsAfterMilli(ctx, target, "batched-times")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := listed.Lookup("batched-times", 0)
		want := base.Add(time.Duration(tc.minute) * time.Minute).UnixMilli()
		if o.Err != nil || o.Offset != tc.offset || o.Timestamp != want {
			t.Errorf("after minute %v: offset %d timestamp %d err %v, want offset %d timestamp %d", tc.targetMinute, o.Offset, o.Timestamp, o.Err, tc.offset, want)
		}
	}

	maxTs, err := adm.ListMaxTimestampOffsets(ctx, "batched-times")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := maxTs.Lookup("batched-times", 0); o.Err != nil || o.Offset != 4 || o.Timestamp != base.Add(20*time.Minute).UnixMilli() {
		t.Fatalf("max timestamp: %+v, want offset 4 at minute 20", o)
	}
}
