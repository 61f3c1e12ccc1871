package tier

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/blob"
)

func samplePartitionManifest() PartitionManifest {
	return PartitionManifest{TopicID: testPartition.TopicID, Partition: testPartition.Partition, LeaderEpoch: 4, BrokerID: 2,
		LogStartOffset: 100, WrittenMs: 1_700_000_000_000, Segments: []ManifestSegment{
			{SegmentID: [16]byte{1}, BaseOffset: 100, EndOffset: 199, MaxTimestampMs: 5, LeaderEpoch: 1, SizeBytes: 4096,
				LeaderEpochs: []EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 1, StartOffset: 150}}},
			{SegmentID: [16]byte{2}, BaseOffset: 200, EndOffset: 299, MaxTimestampMs: 6, LeaderEpoch: 4, SizeBytes: 8192,
				LeaderEpochs: []EpochEntry{{Epoch: 4, StartOffset: 200}}},
		}}
}

func sampleTopicManifest() TopicManifest {
	return TopicManifest{Name: "orders", TopicID: testPartition.TopicID, Partitions: 6, ReplicationFactor: 3,
		Configs:     map[string]string{"remote.storage.enable": "true", "retention.ms": "-1"},
		LeaderEpoch: 2, BrokerID: 1, WrittenMs: 1_700_000_000_000}
}

func TestManifestsRoundTrip(t *testing.T) {
	pm := samplePartitionManifest()
	got, err := DecodePartitionManifest(pm.Encode())
	if err != nil || !reflect.DeepEqual(got, pm) {
		t.Fatalf("partition manifest: %+v, %v", got, err)
	}
	if top := pm.MaxLeaderEpoch(); top != 4 {
		t.Fatalf("max leader epoch %d", top)
	}
	tm := sampleTopicManifest()
	gotTopic, err := DecodeTopicManifest(tm.Encode())
	if err != nil || !reflect.DeepEqual(gotTopic, tm) {
		t.Fatalf("topic manifest: %+v, %v", gotTopic, err)
	}
}

func TestManifestsRejectCorruption(t *testing.T) {
	pm := samplePartitionManifest()
	good := pm.Encode()
	flipped := append([]byte(nil), good...)
	flipped[20] ^= 1
	overlapping := samplePartitionManifest()
	overlapping.Segments[1].BaseOffset = 150
	tm := sampleTopicManifest()
	noName := tm
	noName.Name = ""
	for name, b := range map[string][]byte{
		"empty":           nil,
		"truncated":       good[:len(good)-1],
		"bit flipped":     flipped,
		"topic as parted": tm.Encode(),
		"overlapping":     overlapping.Encode(),
	} {
		if _, err := DecodePartitionManifest(b); !errors.Is(err, ErrCorruptManifest) {
			t.Errorf("partition manifest %s: %v", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"parted as topic": good,
		"no name":         noName.Encode(),
		"bad json":        encodeManifest(topicManifestMagic, "not an object"),
	} {
		if _, err := DecodeTopicManifest(b); !errors.Is(err, ErrCorruptManifest) {
			t.Errorf("topic manifest %s: %v", name, err)
		}
	}
}

func FuzzDecodePartitionManifest(f *testing.F) {
	pm := samplePartitionManifest()
	f.Add(pm.Encode())
	pm.Segments = nil
	f.Add(pm.Encode())
	f.Add([]byte(partitionManifestMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodePartitionManifest(b)
		if err != nil {
			return
		}
		again, err := DecodePartitionManifest(got.Encode())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("decoded manifest does not round-trip: %v", err)
		}
	})
}

func FuzzDecodeTopicManifest(f *testing.F) {
	tm := sampleTopicManifest()
	f.Add(tm.Encode())
	tm.Configs = nil
	f.Add(tm.Encode())
	f.Add([]byte(topicManifestMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeTopicManifest(b)
		if err != nil {
			return
		}
		again, err := DecodeTopicManifest(got.Encode())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("decoded manifest does not round-trip: %v", err)
		}
	})
}

func manifestObjects(t *testing.T, b blob.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	if err := b.List(context.Background(), prefix, func(o blob.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestManifestVersions writes manifests as leaders of several epochs do:
// each write leaves one version, the newest; a deposed leader's late write
// never hides its successor's; uploads never see the manifests.
func TestManifestVersions(t *testing.T) {
	ctx := context.Background()
	for name, bucket := range testBuckets(t) {
		t.Run(name, func(t *testing.T) {
			store := NewStore(StoreConfig{Bucket: bucket, Prefix: "c1/"})
			prefix := store.PartitionManifestPrefix(testPartition)
			pm := samplePartitionManifest()
			for i := range 3 {
				pm.LogStartOffset = int64(100 + i)
				if err := store.WritePartitionManifest(ctx, &pm); err != nil {
					t.Fatal(err)
				}
			}
			if keys := manifestObjects(t, bucket, prefix); len(keys) != 1 || !strings.HasSuffix(keys[0], "0000000004-00000000000000000002.manifest") {
				t.Fatalf("after three writes: %v", keys)
			}
			stale := pm
			stale.LeaderEpoch, stale.LogStartOffset = 3, 0
			if err := store.WritePartitionManifest(ctx, &stale); err != nil {
				t.Fatal(err)
			}
			got, ok, err := store.ReadPartitionManifest(ctx, testPartition)
			if err != nil || !ok || got.LeaderEpoch != 4 || got.LogStartOffset != 102 {
				t.Fatalf("after a deposed leader's write: %+v %v %v", got, ok, err)
			}
			pm.LeaderEpoch = 5
			if err := store.WritePartitionManifest(ctx, &pm); err != nil {
				t.Fatal(err)
			}
			if keys := manifestObjects(t, bucket, prefix); len(keys) != 1 || !strings.Contains(keys[0], "/0000000005-") {
				t.Fatalf("after a new leader's write: %v", keys)
			}
			if uploads, err := store.ListUploads(ctx, testPartition); err != nil || len(uploads) != 0 {
				t.Fatalf("manifests listed as uploads: %+v %v", uploads, err)
			}
			if _, ok, err := store.ReadPartitionManifest(ctx, Partition{TopicID: testPartition.TopicID, Partition: 9}); ok || err != nil {
				t.Fatalf("partition without a manifest: %v %v", ok, err)
			}

			tm := sampleTopicManifest()
			if err := store.WriteTopicManifest(ctx, &tm); err != nil {
				t.Fatal(err)
			}
			other := sampleTopicManifest()
			other.Name, other.TopicID = "payments", [16]byte{0xee}
			if err := store.WriteTopicManifest(ctx, &other); err != nil {
				t.Fatal(err)
			}
			topics, err := store.TopicManifests(ctx)
			if err != nil || len(topics) != 2 || topics[0].Name != "orders" || topics[1].Name != "payments" {
				t.Fatalf("topic manifests: %+v %v", topics, err)
			}
			if err := store.DeleteTopic(ctx, tm.TopicID); err != nil {
				t.Fatal(err)
			}
			topics, err = store.TopicManifests(ctx)
			if err != nil || len(topics) != 1 || topics[0].Name != "payments" {
				t.Fatalf("after deleting orders: %+v %v", topics, err)
			}
			if keys := manifestObjects(t, bucket, prefix); len(keys) != 0 {
				t.Fatalf("partition manifests of a deleted topic: %v", keys)
			}
		})
	}
}
