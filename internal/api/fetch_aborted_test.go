package api

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// TestFetchWriterAbortedTransactions checks the aborted-transactions list
// against franz-go's decoder: null for read_uncommitted and errors, the
// entries for read_committed.
func TestFetchWriterAbortedTransactions(t *testing.T) {
	file := memFile{Reader: bytes.NewReader([]byte("0123456789"))}
	results := []fetchPartitionResult{
		{topic: "a", topicID: metadata.UUID{1}, partition: 0, highWatermark: 10, lastStable: 5, readCommitted: true,
			aborted: []log.AbortedTxn{{ProducerID: 7, FirstOffset: 1}, {ProducerID: 9, FirstOffset: 3}},
			regions: []log.Region{{File: file, Offset: 0, Length: 10}}, bytes: 10},
		{topic: "a", topicID: metadata.UUID{1}, partition: 1, highWatermark: 4, lastStable: 4, readCommitted: true},
		{topic: "a", topicID: metadata.UUID{1}, partition: 2, errorCode: 1, readCommitted: true},
		{topic: "a", topicID: metadata.UUID{1}, partition: 3, highWatermark: 4, lastStable: 4},
	}
	for version := int16(4); version <= 16; version++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		if err := resp.ReadFrom(flatten(t, writeFetchResponse(version, 0, 0, results))); err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		ps := resp.Topics[0].Partitions
		if got := ps[0].AbortedTransactions; len(got) != 2 || got[0].ProducerID != 7 || got[0].FirstOffset != 1 || got[1].ProducerID != 9 || got[1].FirstOffset != 3 {
			t.Fatalf("v%d: aborted %+v", version, got)
		}
		if string(ps[0].RecordBatches) != "0123456789" || ps[0].LastStableOffset != 5 {
			t.Fatalf("v%d: partition 0 %+v", version, ps[0])
		}
		if got := ps[1].AbortedTransactions; got == nil || len(got) != 0 {
			t.Fatalf("v%d: read_committed without aborts: %#v, want empty", version, got)
		}
		if ps[2].AbortedTransactions != nil || ps[3].AbortedTransactions != nil {
			t.Fatalf("v%d: error or read_uncommitted: %#v %#v, want null", version, ps[2].AbortedTransactions, ps[3].AbortedTransactions)
		}
	}
}
