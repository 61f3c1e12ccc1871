package api

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// memFile is a region file backed by memory.
type memFile struct {
	vfs.File
	*bytes.Reader
}

func (f memFile) ReadAt(p []byte, off int64) (int, error) { return f.Reader.ReadAt(p, off) }

// flatten reads a response's chunks into one byte slice.
func flatten(t *testing.T, resp network.Response) []byte {
	t.Helper()
	var out []byte
	for _, c := range resp.Chunks {
		if c.File == nil {
			out = append(out, c.Bytes...)
			continue
		}
		buf := make([]byte, c.Length)
		if _, err := c.File.ReadAt(buf, c.Offset); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf...)
	}
	return out
}

// TestFetchWriterMatchesKmsg checks the hand-written Fetch encoder against
// franz-go's decoder for every version served.
func TestFetchWriterMatchesKmsg(t *testing.T) {
	file := memFile{Reader: bytes.NewReader([]byte("0123456789abcdefghijklmnopqrstuvwxyz"))}
	results := []fetchPartitionResult{
		{topic: "a", topicID: metadata.UUID{1}, partition: 0, highWatermark: 10, lastStable: 9, logStartOffset: 2,
			regions: []log.Region{{File: file, Offset: 0, Length: 10}, {File: file, Offset: 20, Length: 6}}, bytes: 16},
		{topic: "a", topicID: metadata.UUID{1}, partition: 1, errorCode: 1, highWatermark: -1, lastStable: -1, logStartOffset: -1},
		{topic: "b", topicID: metadata.UUID{2}, partition: 7, highWatermark: 0, lastStable: 0, logStartOffset: 0,
			preferredReadReplica: 3, hasPreferredReadReplica: true},
		{topic: "b", topicID: metadata.UUID{2}, partition: 8, highWatermark: 50, lastStable: 50, logStartOffset: 0,
			divergingEpoch: &partition.EpochEndOffset{Epoch: 3, EndOffset: 42}},
	}
	for version := int16(4); version <= 18; version++ {
		body := flatten(t, writeFetchResponse(version, 0, 77, results))
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("v%d: kmsg cannot decode our response: %v", version, err)
		}
		if version >= 7 && resp.SessionID != 77 {
			t.Fatalf("v%d: session id %d", version, resp.SessionID)
		}
		if len(resp.Topics) != 2 {
			t.Fatalf("v%d: %d topics", version, len(resp.Topics))
		}
		a := resp.Topics[0]
		if version >= 13 {
			if a.TopicID != [16]byte{1} {
				t.Fatalf("v%d: topic id %v", version, a.TopicID)
			}
		} else if a.Topic != "a" {
			t.Fatalf("v%d: topic %q", version, a.Topic)
		}
		if len(a.Partitions) != 2 {
			t.Fatalf("v%d: %d partitions", version, len(a.Partitions))
		}
		p := a.Partitions[0]
		if string(p.RecordBatches) != "0123456789klmnop" || p.HighWatermark != 10 || p.LastStableOffset != 9 {
			t.Fatalf("v%d: partition 0 %+v records %q", version, p, p.RecordBatches)
		}
		if version >= 5 && p.LogStartOffset != 2 {
			t.Fatalf("v%d: log start %d", version, p.LogStartOffset)
		}
		if a.Partitions[1].ErrorCode != 1 {
			t.Fatalf("v%d: error code lost", version)
		}
		if got := resp.Topics[1].Partitions[0].Partition; got != 7 {
			t.Fatalf("v%d: partition %d", version, got)
		}
		// The preferred read replica (KIP-392) exists from v11; kmsg's
		// default for the field is -1.
		if got, other := resp.Topics[1].Partitions[0].PreferredReadReplica, p.PreferredReadReplica; version >= 11 && (got != 3 || other != -1) {
			t.Fatalf("v%d: preferred read replicas %d and %d, want 3 and -1", version, got, other)
		}
		// DivergingEpoch is a v12+ tagged field; older versions cannot carry it.
		d := resp.Topics[1].Partitions[1].DivergingEpoch
		if nd := resp.Topics[1].Partitions[0].DivergingEpoch; nd.Epoch != -1 || nd.EndOffset != -1 {
			t.Fatalf("v%d: diverging epoch on a partition without one: %+v", version, nd)
		}
		switch {
		case version >= 12 && (d.Epoch != 3 || d.EndOffset != 42):
			t.Fatalf("v%d: diverging epoch %+v, want 3/42", version, d)
		case version < 12 && (d.Epoch != -1 || d.EndOffset != -1):
			t.Fatalf("v%d: diverging epoch %+v in a version without the field", version, d)
		}
		// Nothing is left over: the encoding is exactly one response.
		again := resp.AppendTo(nil)
		if len(again) != len(body) {
			t.Fatalf("v%d: our encoding is %d bytes, kmsg's of the same response %d", version, len(body), len(again))
		}
	}
}
