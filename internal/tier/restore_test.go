package tier

import (
	"context"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// newTieredLog creates an empty tiered log of testPartition in a log
// directory of its own, as a broker restoring from the bucket has.
func newTieredLog(t *testing.T) *log.Log {
	t.Helper()
	m, err := log.NewManager(vfs.Default, []string{t.TempDir()}, log.ManagerOptions{ClusterID: "tier-test", NodeID: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	cfg := log.DefaultConfig()
	cfg.RemoteStorage = true
	l, err := m.Create(log.TopicPartition{Topic: "tiered", Partition: testPartition.Partition}, testPartition.TopicID, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRestoreFromManifests offloads a log of two leader epochs, moves its
// log start with DeleteRecords, then restores it from the bucket alone: the
// cluster manifest names the topic, the restore point starts an empty log
// where the bucket ends with the bucket's lineage and log start, and a
// leader of a higher epoch on the restored log serves every remote segment
// and deletes none.
func TestRestoreFromManifests(t *testing.T) {
	ctx := context.Background()
	for name, bucket := range testBuckets(t) {
		t.Run(name, func(t *testing.T) {
			l := newTestLog(t)
			nowMs := int64(10_000_000)
			for range 3 {
				appendSegmentAtEpoch(t, l, 20, nowMs, true, 0)
			}
			appendSegmentAtEpoch(t, l, 20, nowMs, true, 2)
			appendSegmentAtEpoch(t, l, 5, nowMs, false, 2)
			clock := nowMs
			store := NewStore(StoreConfig{Bucket: bucket})
			manager := NewManager(ManagerConfig{Store: store, BrokerID: 1, OrphanGraceMs: 60_000,
				Now: func() time.Time { return time.UnixMilli(clock) }})
			task := Task{Partition: testPartition, Log: logAdapter{l}, LeaderEpoch: 2,
				Settings: TopicSettings{RetentionMs: -1, RetentionBytes: -1}}
			result, err := manager.Run(ctx, task)
			if err != nil || result.ManifestErr != nil || result.CopiedOffset != 79 {
				t.Fatalf("offload: copied to %d, %v %v", result.CopiedOffset, err, result.ManifestErr)
			}
			manifest, ok, err := store.ReadPartitionManifest(ctx, testPartition)
			if err != nil || !ok || len(manifest.Segments) != 4 || manifest.LeaderEpoch != 2 || manifest.LogStartOffset != 0 {
				t.Fatalf("partition manifest: %+v %v %v", manifest, ok, err)
			}
			// An unchanged task writes no new manifest.
			clock += 1000
			if _, err := manager.Run(ctx, task); err != nil {
				t.Fatal(err)
			}
			if again, _, _ := store.ReadPartitionManifest(ctx, testPartition); again.WrittenMs != manifest.WrittenMs {
				t.Fatalf("an unchanged manifest was written again at %d", again.WrittenMs)
			}
			if err := l.DeleteRecordsBefore(30); err != nil {
				t.Fatal(err)
			}
			if r, err := manager.Run(ctx, task); err != nil || len(r.Expired) != 1 {
				t.Fatalf("below the log start: expired %d, %v", len(r.Expired), err)
			}
			if err := manager.WriteTopicManifest(ctx, TopicManifest{Name: "tiered", TopicID: testPartition.TopicID,
				Partitions: testPartition.Partition + 1, ReplicationFactor: 1,
				Configs: map[string]string{"remote.storage.enable": "true"}, LeaderEpoch: 2}); err != nil {
				t.Fatal(err)
			}

			topics, skipped, err := store.TopicsToRestore(ctx)
			if err != nil || len(skipped) != 0 || len(topics) != 1 || topics[0].Manifest.Name != "tiered" {
				t.Fatalf("topics to restore: %+v %v", topics, err)
			}
			if epochs := topics[0].MaxLeaderEpochs; len(epochs) != 4 || epochs[0] != -1 || epochs[3] != 2 {
				t.Fatalf("max leader epochs %v", epochs)
			}
			point, ok, err := store.RestorePoint(ctx, testPartition)
			if err != nil || !ok {
				t.Fatalf("restore point: %v %v", ok, err)
			}
			if point.LocalLogStartOffset != 80 || point.LogStartOffset != 30 || point.MaxLeaderEpoch != 2 {
				t.Fatalf("restore point %+v", point)
			}
			if n := len(point.LeaderEpochs); n == 0 || point.LeaderEpochs[n-1] != (EpochEntry{Epoch: 2, StartOffset: 60}) {
				t.Fatalf("restored lineage %v", point.LeaderEpochs)
			}

			// A damaged object in the bucket keeps back only what it
			// describes: a topic manifest that does not decode is skipped
			// and reported, a partition manifest that does not decode is
			// ignored (the uploads are the truth).
			damaged := [16]byte{0xdd}
			if err := bucket.Put(ctx, manifestKey(store.TopicManifestPrefix(damaged), 0, 0), []byte("STMF not a manifest")); err != nil {
				t.Fatal(err)
			}
			if topics, skipped, err := store.TopicsToRestore(ctx); err != nil || len(skipped) != 1 || len(topics) != 1 {
				t.Fatalf("with a damaged topic manifest: %d topics, skipped %v, %v", len(topics), skipped, err)
			}
			if err := store.DeleteTopicManifest(ctx, damaged); err != nil {
				t.Fatal(err)
			}
			damagedKey := manifestKey(store.PartitionManifestPrefix(testPartition), 9, 0)
			if err := bucket.Put(ctx, damagedKey, []byte("SPMF not a manifest")); err != nil {
				t.Fatal(err)
			}
			if lenient, ok, err := store.RestorePoint(ctx, testPartition); err != nil || !ok || lenient.LocalLogStartOffset != 80 || lenient.LogStartOffset != 20 {
				t.Fatalf("restore point with a damaged partition manifest: %+v %v %v", lenient, ok, err)
			}
			if err := bucket.Delete(ctx, damagedKey); err != nil {
				t.Fatal(err)
			}

			restored := newTieredLog(t)
			aux := partition.RemoteAuxState{LocalLogStartOffset: point.LocalLogStartOffset, LogStartOffset: point.LogStartOffset}
			for _, e := range point.LeaderEpochs {
				aux.LeaderEpochs = append(aux.LeaderEpochs, log.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset})
			}
			if err := partition.SeedLogFromRemote(restored, aux); err != nil {
				t.Fatal(err)
			}
			if restored.LogEndOffset() != 80 || restored.LogStartOffset() != 30 {
				t.Fatalf("restored log [%d, %d)", restored.LogStartOffset(), restored.LogEndOffset())
			}
			// The restored partition's leader epoch is above the bucket's.
			if err := restored.MaybeAssignEpochStartOffset(point.MaxLeaderEpoch+1, restored.LogEndOffset()); err != nil {
				t.Fatal(err)
			}
			successor := NewManager(ManagerConfig{Store: store, BrokerID: 2, OrphanGraceMs: 60_000})
			r, err := successor.Run(ctx, Task{Partition: testPartition, Log: logAdapter{restored}, LeaderEpoch: point.MaxLeaderEpoch + 1,
				Settings: TopicSettings{RetentionMs: -1, RetentionBytes: -1}})
			if err != nil || r.Collected != 0 || len(r.View.Unreferenced) != 0 || len(r.View.Segments) != 3 || r.View.StartOffset() != 20 || r.View.EndOffset() != 79 {
				t.Fatalf("restored leader: view %d segments [%d, %d], %d unreferenced, %d collected, %v",
					len(r.View.Segments), r.View.StartOffset(), r.View.EndOffset(), len(r.View.Unreferenced), r.Collected, err)
			}

			// The hazard: a leader of a log that was never seeded has none
			// of the bucket's epochs, so every upload is outside its
			// lineage. With restore on they are kept.
			unseeded := newTieredLog(t)
			if err := unseeded.MaybeAssignEpochStartOffset(3, 0); err != nil {
				t.Fatal(err)
			}
			keeping := NewManager(ManagerConfig{Store: store, BrokerID: 3, OrphanGraceMs: 60_000, KeepUnreferenced: true})
			r, err = keeping.Run(ctx, Task{Partition: testPartition, Log: logAdapter{unseeded}, LeaderEpoch: 3,
				Settings: TopicSettings{RetentionMs: -1, RetentionBytes: -1}})
			if err != nil || len(r.View.Unreferenced) != 3 || r.Collected != 0 {
				t.Fatalf("unseeded leader with restore on: %d unreferenced, %d collected, %v", len(r.View.Unreferenced), r.Collected, err)
			}
			if uploads, err := store.ListUploads(ctx, testPartition); err != nil || len(uploads) != 3 {
				t.Fatalf("uploads left: %d, %v", len(uploads), err)
			}
		})
	}
}
