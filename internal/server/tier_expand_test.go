package server

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// TestTieredPartitionExpansion adds partitions to a tiered topic whose
// first partition already has segments in the bucket: the new partitions
// are tiered too, under the topic's id, the topic manifest counts them,
// and once local retention deleted the copied segments of every partition,
// franz-go and kcat read every partition from offset 0, each record at its
// offset with its key, the oldest ones from the bucket.
func TestTieredPartitionExpansion(t *testing.T) {
	url := "file://" + t.TempDir()
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	ctx := testContext(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "expand", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "segment.bytes": ptrTo("1048576")})
	topics, err := adm.ListTopics(ctx, "expand")
	if err != nil {
		t.Fatal(err)
	}
	topicID := topics["expand"].ID

	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
	view := func(partition int32) tier.RemoteView {
		uploads, err := store.ListUploads(ctx, tier.Partition{TopicID: topicID, Partition: partition})
		if err != nil {
			t.Fatal(err)
		}
		return tier.BuildView(uploads, nil)
	}

	// About 2.7 MB in 1 MiB segments: two closed segments to tier.
	const records = 900
	produceNumbered(t, tn, "expand", 0, records, 3000)
	waitFor(t, 30*time.Second, "partition 0's closed segments in the bucket", func() bool { return len(view(0).Segments) >= 2 })

	resp, err := adm.CreatePartitions(ctx, 2, "expand")
	if err != nil || resp["expand"].Err != nil {
		t.Fatalf("add 2 partitions: %v %+v", err, resp)
	}
	waitFor(t, 10*time.Second, "partitions 1 and 2 hosted", func() bool {
		return tn.node.partitions.Get("expand", 1) != nil && tn.node.partitions.Get("expand", 2) != nil
	})
	topics, err = adm.ListTopics(ctx, "expand")
	if err != nil || topics["expand"].ID != topicID || len(topics["expand"].Partitions) != 3 {
		t.Fatalf("after the expansion: %+v, %v", topics["expand"], err)
	}
	for partition := range int32(3) {
		if partition > 0 {
			produceNumbered(t, tn, "expand", 0, records, 3000, kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.WithHooks(partitionHook(partition)))
		}
		waitFor(t, 30*time.Second, fmt.Sprintf("partition %d's closed segments in the bucket", partition), func() bool {
			closed := tn.node.partitions.Get("expand", partition).Log.ClosedSegments()
			v := view(partition)
			return len(closed) >= 2 && len(v.Segments) >= 2 && v.EndOffset() >= closed[len(closed)-1].EndOffset
		})
	}
	// Every object in the bucket belongs to this topic's id, and the
	// topic manifest has the new partition count.
	idHex := hex.EncodeToString(topicID[:])
	var keys []string
	if err := bucket.List(ctx, "", func(o blob.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if !strings.HasPrefix(key, "tier/v1/"+idHex+"/") && !strings.HasPrefix(key, "tier/v1/cluster/topics/"+idHex+"/") {
			t.Fatalf("object %s is not under topic id %s", key, idHex)
		}
	}
	waitFor(t, 10*time.Second, "the topic manifest to count 3 partitions", func() bool {
		manifests, err := store.TopicManifests(ctx)
		return err == nil && len(manifests) == 1 && manifests[0].TopicID == topicID && manifests[0].Partitions == 3
	})

	alterTopic(t, tn, "expand", "local.retention.bytes", "1048576")
	for partition := range int32(3) {
		p := tn.node.partitions.Get("expand", partition)
		waitFor(t, 30*time.Second, fmt.Sprintf("partition %d's local log start past 0", partition), func() bool {
			return p.Log.LocalLogStartOffset() > 0
		})
		if start := p.Log.LogStartOffset(); start != 0 {
			t.Fatalf("partition %d: log start %d after local retention, want 0", partition, start)
		}
	}

	consumeCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl := tn.client(kgo.ConsumeTopics("expand"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := make([]int64, 3)
	for next[0] < records || next[1] < records || next[2] < records {
		fetches := cl.PollFetches(consumeCtx)
		if err := consumeCtx.Err(); err != nil {
			t.Fatalf("consumed %v of %d records per partition: %v", next, records, err)
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			t.Fatalf("fetch %s-%d: %v", topic, partition, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			if want := next[r.Partition]; r.Offset != want || string(r.Key) != strconv.FormatInt(want, 10) {
				t.Fatalf("partition %d: record at offset %d key %q, want offset %d", r.Partition, r.Offset, r.Key, want)
			}
			next[r.Partition]++
		})
	}
	for partition := range int32(3) {
		kcatConsumeTieredPartition(t, tn, "expand", partition, records)
	}
}
