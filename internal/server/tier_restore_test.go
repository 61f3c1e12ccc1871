package server

import (
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// TestTieredRestoreFromBucket offloads a tiered topic, stops the node, and
// starts a new node on an empty data directory and the same bucket with
// samsa.tiered.restore.enable: the topic comes back under its old id with
// its configs, readable from offset 0 by franz-go and kcat up to the last
// offset in the bucket, and takes new records after it.
func TestTieredRestoreFromBucket(t *testing.T) {
	for name, url := range tieredBucketURLs(t, "restore") {
		t.Run(name, func(t *testing.T) {
			tiered := []string{"remote.log.storage.system.enable=true", "rsm.config.bucket.url=" + url,
				"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100"}
			tn := startTestNode(t, tiered...)
			mustCreateTopic(t, tn.admin(), "restored", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
				"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576"), "retention.ms": ptrTo("864000000")})
			const records = 1500
			produceNumbered(t, tn, "restored", 0, records, 3000)
			ctx := testContext(t)
			topics, err := tn.admin().ListTopics(ctx, "restored")
			if err != nil {
				t.Fatal(err)
			}
			topicID := topics["restored"].ID
			bucket, err := blob.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer bucket.Close()
			store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
			part := tier.Partition{TopicID: topicID, Partition: 0}
			waitFor(t, 60*time.Second, "segments and manifests in the bucket", func() bool {
				uploads, err := store.ListUploads(ctx, part)
				if err != nil {
					return false
				}
				view := tier.BuildView(uploads, nil)
				manifest, ok, err := store.ReadPartitionManifest(ctx, part)
				if err != nil || !ok || len(manifest.Segments) == 0 || manifest.Segments[len(manifest.Segments)-1].EndOffset != view.EndOffset() {
					return false
				}
				topics, err := store.TopicManifests(ctx)
				return err == nil && len(topics) == 1 && view.EndOffset() >= 600
			})
			tn.stop()
			uploads, err := store.ListUploads(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			view := tier.BuildView(uploads, nil)
			remoteEnd := view.EndOffset()

			restored := startTestNode(t, append(tiered, "samsa.tiered.restore.enable=true")...)
			adm := restored.admin()
			waitFor(t, 60*time.Second, "the topic restored", func() bool {
				topics, err := adm.ListTopics(ctx, "restored")
				return err == nil && topics["restored"].Err == nil && topics["restored"].ID == topicID
			})
			configs, err := adm.DescribeTopicConfigs(ctx, "restored")
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{"retention.ms": "864000000", "remote.storage.enable": "true", "segment.bytes": "1048576"} {
				got, err := configs.On("restored", nil)
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, c := range got.Configs {
					if c.Key == key && c.Value != nil && *c.Value == want {
						found = true
					}
				}
				if !found {
					t.Fatalf("restored config %s != %s: %+v", key, want, got.Configs)
				}
			}
			waitFor(t, 30*time.Second, "the restored partition hosted", func() bool {
				return restored.node.partitions.Get("restored", 0) != nil
			})
			p := restored.node.partitions.Get("restored", 0)
			if local, end := p.Log.LocalLogStartOffset(), p.Log.LogEndOffset(); local != remoteEnd+1 || end != remoteEnd+1 {
				t.Fatalf("restored log: local start %d, end %d, want both %d", local, end, remoteEnd+1)
			}
			if off, _ := listOffset(t, restored, "restored", -2); off != 0 {
				t.Fatalf("earliest = %d, want 0", off)
			}
			waitFor(t, 30*time.Second, "the high watermark at the bucket's end", func() bool {
				off, _ := listOffset(t, restored, "restored", -1)
				return off == remoteEnd+1
			})
			if _, epoch := listOffset(t, restored, "restored", -1); epoch < 1 {
				t.Fatalf("restored leader epoch %d, want above the bucket's 0", epoch)
			}
			consumeTiered(t, restored, "restored", int(remoteEnd+1))
			kcatConsumeTiered(t, restored, "restored", int(remoteEnd+1))
			produceNumbered(t, restored, "restored", int(remoteEnd+1), 5, 100)
			consumeTiered(t, restored, "restored", int(remoteEnd+6))
			// A restart with the key still on restores nothing twice: the
			// topic and its log are there.
			restored.restart()
			if topics, err := restored.admin().ListTopics(ctx); err != nil || len(topics) != 1 || topics["restored"].ID != topicID {
				t.Fatalf("topics after a restart: %v %v", topics.Names(), err)
			}
			consumeTiered(t, restored, "restored", int(remoteEnd+6))
			// The restored leader serves the old uploads: none is deleted.
			waitFor(t, 30*time.Second, "the restored leader's manifest", func() bool {
				manifest, ok, err := store.ReadPartitionManifest(ctx, part)
				return err == nil && ok && manifest.LeaderEpoch >= 1 && len(manifest.Segments) == len(view.Segments)
			})
			after, err := store.ListUploads(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			kept := tier.BuildView(after, nil)
			if len(kept.Segments) != len(view.Segments) {
				t.Fatalf("readable uploads after restore: %d of %d", len(kept.Segments), len(view.Segments))
			}
			for i, seg := range kept.Segments {
				if seg.SegmentID != view.Segments[i].SegmentID {
					t.Fatalf("upload %d after restore is %x, was %x", i, seg.SegmentID, view.Segments[i].SegmentID)
				}
			}
		})
	}
}
