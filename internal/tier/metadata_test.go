package tier

import (
	"errors"
	"reflect"
	"testing"
)

func sampleMetadata() SegmentMetadata {
	return SegmentMetadata{
		State: CopySegmentFinished, TopicID: [16]byte{1, 2, 3}, Partition: 7, SegmentID: [16]byte{9, 9},
		BaseOffset: 100, EndOffset: 199, MaxTimestampMs: 1700000000000, BrokerID: 2, LeaderEpoch: 5,
		EventTimestampMs: 1700000001000, SegmentSizeBytes: 4096,
		LeaderEpochs: []EpochEntry{{Epoch: 3, StartOffset: 0}, {Epoch: 5, StartOffset: 150}},
		Files:        []FileSize{{FileSegment, 4096}, {FileOffsetIndex, 16}, {FileLeaderEpochCheckpoint, 20}},
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	m := sampleMetadata()
	got, err := DecodeMetadata(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, m)
	}
}

func TestMetadataRejectsCorruption(t *testing.T) {
	good := sampleMetadata()
	encoded := good.Encode()
	for i := range encoded {
		flipped := append([]byte(nil), encoded...)
		flipped[i] ^= 0x40
		if _, err := DecodeMetadata(flipped); !errors.Is(err, ErrCorruptMetadata) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	for n := range len(encoded) {
		if _, err := DecodeMetadata(encoded[:n]); !errors.Is(err, ErrCorruptMetadata) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	bad := good
	bad.LeaderEpochs = []EpochEntry{{Epoch: 5, StartOffset: 0}, {Epoch: 3, StartOffset: 10}}
	if _, err := DecodeMetadata(bad.Encode()); !errors.Is(err, ErrCorruptMetadata) {
		t.Fatalf("epochs out of order: %v", err)
	}
	bad = good
	bad.EndOffset = 10
	if _, err := DecodeMetadata(bad.Encode()); !errors.Is(err, ErrCorruptMetadata) {
		t.Fatalf("end before base: %v", err)
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	m := sampleMetadata()
	f.Add(m.Encode())
	m.LeaderEpochs, m.Files = nil, nil
	f.Add(m.Encode())
	f.Add([]byte("SRSM"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeMetadata(b)
		if err != nil {
			return
		}
		again, err := DecodeMetadata(got.Encode())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("decoded record does not round-trip: %v", err)
		}
	})
}
