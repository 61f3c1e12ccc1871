package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// restoredTopic is a tiered topic of TestTieredRestoreClusterFromBucket.
type restoredTopic struct {
	name       string
	partitions int32
	factor     int16
	configs    map[string]string
}

// TestTieredRestoreClusterFromBucket runs a 3-node cluster with two tiered
// topics on moto, produces until every partition has segments in the
// bucket, stops every node, wipes every node's data directory, and starts
// the cluster again on the same bucket with samsa.tiered.restore.enable:
// both topics come back under their old ids with their partition counts,
// replication factors and configs, and franz-go and kcat read every record
// the bucket holds, each at its old offset with its old key.
func TestTieredRestoreClusterFromBucket(t *testing.T) { testRestoreCluster(t, false) }

// TestTieredRestoreDedicatedClusterFromBucket is the same with a
// controller-only node and three broker-only nodes: the controller reads
// the cluster manifest, the brokers seed their logs.
func TestTieredRestoreDedicatedClusterFromBucket(t *testing.T) { testRestoreCluster(t, true) }

func testRestoreCluster(t *testing.T, dedicated bool) {
	moto := blobtest.StartMoto(t)
	url := moto.CreateBucket("restore")
	tiered := []string{"remote.log.storage.system.enable=true", "rsm.config.bucket.url=" + url,
		"remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200"}
	var c *Cluster
	if dedicated {
		c = StartDedicatedCluster(t, 1, 3, tiered...)
	} else {
		c = StartCluster(t, 3, tiered...)
	}
	every := append(append([]*Node(nil), c.Nodes...), c.Controllers...)
	ctx := context.Background()
	topics := []restoredTopic{
		{name: "orders", partitions: 3, factor: 3, configs: map[string]string{"retention.ms": "864000000"}},
		{name: "events", partitions: 2, factor: 2, configs: map[string]string{"max.message.bytes": "2000000"}},
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range topics {
		configs := map[string]*string{"remote.storage.enable": kadm.StringPtr("true"), "segment.bytes": kadm.StringPtr("1048576")}
		for k, v := range topic.configs {
			configs[k] = kadm.StringPtr(v)
		}
		WaitFor(t, 30*time.Second, func() error {
			resp, err := adm.CreateTopic(ctx, topic.partitions, topic.factor, configs, topic.name)
			if err != nil {
				return err
			}
			return resp.Err
		})
	}
	// Each partition gets about 1.5 MB: a closed segment to tier, and an
	// active one that stays local. Where the leader fetched as a follower
	// first, its segments rolled where its fetches ended, as Kafka's do,
	// so the closed segment's end varies; what the bucket holds at the
	// stop is what the restore must bring back.
	const recordsPerPartition = 500
	value := bytes.Repeat([]byte("r"), 3000)
	var produceErr atomic.Pointer[error]
	for _, topic := range topics {
		for p := range topic.partitions {
			for i := range recordsPerPartition {
				cl.Produce(ctx, &kgo.Record{Topic: topic.name, Partition: p, Key: []byte(fmt.Sprintf("%d/%d", p, i)), Value: value},
					func(_ *kgo.Record, err error) {
						if err != nil {
							produceErr.CompareAndSwap(nil, &err)
						}
					})
			}
		}
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := produceErr.Load(); err != nil {
		t.Fatalf("produce: %v", *err)
	}
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()

	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
	partitionsOf := func(topic restoredTopic) []tier.Partition {
		var out []tier.Partition
		for p := range topic.partitions {
			out = append(out, tier.Partition{TopicID: listed[topic.name].ID, Partition: p})
		}
		return out
	}
	WaitFor(t, 90*time.Second, func() error {
		manifests, err := store.TopicManifests(ctx)
		if err != nil || len(manifests) != len(topics) {
			return fmt.Errorf("%d topic manifests, %v", len(manifests), err)
		}
		for _, topic := range topics {
			for _, part := range partitionsOf(topic) {
				uploads, err := store.ListUploads(ctx, part)
				if err != nil {
					return err
				}
				view := tier.BuildView(uploads, nil)
				if view.EndOffset() < 0 {
					return fmt.Errorf("%s-%d: remote end %d", topic.name, part.Partition, view.EndOffset())
				}
				manifest, ok, err := store.ReadPartitionManifest(ctx, part)
				if err != nil || !ok || len(manifest.Segments) != len(view.Segments) {
					return fmt.Errorf("%s-%d: manifest behind the uploads (%v)", topic.name, part.Partition, err)
				}
			}
		}
		return nil
	})

	for _, node := range every {
		node.Stop()
	}
	// What the bucket holds is what a restore brings back.
	remoteEnds := map[string][]int64{}
	for _, topic := range topics {
		for _, part := range partitionsOf(topic) {
			uploads, err := store.ListUploads(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			view := tier.BuildView(uploads, nil)
			remoteEnds[topic.name] = append(remoteEnds[topic.name], view.EndOffset())
		}
	}
	bucketEpochs := map[string][]int32{}
	found, skipped, err := store.TopicsToRestore(ctx)
	if err != nil || len(skipped) != 0 || len(found) != len(topics) {
		t.Fatalf("topics to restore: %d, %v", len(found), err)
	}
	for _, rt := range found {
		bucketEpochs[rt.Manifest.Name] = rt.MaxLeaderEpochs
	}
	for _, node := range every {
		if err := os.RemoveAll(filepath.Join(node.Dir, "data")); err != nil {
			t.Fatal(err)
		}
		node.overrides = append(node.overrides, "samsa.tiered.restore.enable=true")
	}
	if len(c.Controllers) > 0 {
		startTogether(c.Controllers)
	}
	startTogether(c.Nodes)
	c.waitForBrokers(t, 3)

	check, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	checkAdm := kadm.NewClient(check)
	WaitFor(t, 60*time.Second, func() error {
		details, err := checkAdm.ListTopics(ctx, "orders", "events")
		if err != nil {
			return err
		}
		for _, topic := range topics {
			d := details[topic.name]
			if d.Err != nil {
				return d.Err
			}
			if d.ID != listed[topic.name].ID || int32(len(d.Partitions)) != topic.partitions {
				return fmt.Errorf("%s: id %v, %d partitions", topic.name, d.ID, len(d.Partitions))
			}
			for _, p := range d.Partitions {
				if len(p.Replicas) != int(topic.factor) || p.Leader < 0 {
					return fmt.Errorf("%s-%d: replicas %v, leader %d", topic.name, p.Partition, p.Replicas, p.Leader)
				}
				// Above the bucket's epochs, so fencing keeps the old
				// segments.
				if p.LeaderEpoch <= bucketEpochs[topic.name][p.Partition] {
					return fmt.Errorf("%s-%d: leader epoch %d, the bucket's highest is %d", topic.name, p.Partition, p.LeaderEpoch, bucketEpochs[topic.name][p.Partition])
				}
			}
		}
		return nil
	})
	configs, err := checkAdm.DescribeTopicConfigs(ctx, "orders", "events")
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range topics {
		rc, err := configs.On(topic.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range topic.configs {
			found := false
			for _, cfg := range rc.Configs {
				found = found || (cfg.Key == key && cfg.Value != nil && *cfg.Value == want)
			}
			if !found {
				t.Fatalf("%s: config %s not restored as %s", topic.name, key, want)
			}
		}
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("orders", "events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	next := map[string][]int64{}
	for _, topic := range topics {
		next[topic.name] = make([]int64, topic.partitions)
	}
	done := func() bool {
		for _, topic := range topics {
			for p, end := range remoteEnds[topic.name] {
				if next[topic.name][p] <= end {
					return false
				}
			}
		}
		return true
	}
	readCtx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	for !done() {
		fetches := consumer.PollFetches(readCtx)
		if readCtx.Err() != nil {
			t.Fatalf("consumed %v of %v", next, remoteEnds)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			want := next[r.Topic][r.Partition]
			if r.Offset != want || string(r.Key) != fmt.Sprintf("%d/%d", r.Partition, r.Offset) || !bytes.Equal(r.Value, value) {
				t.Fatalf("%s-%d: record at %d key %q, want offset %d", r.Topic, r.Partition, r.Offset, r.Key, want)
			}
			next[r.Topic][r.Partition]++
		})
	}
	kcatConsumeRestored(t, c, topics, remoteEnds)
	// The restored leaders serve the old uploads and delete none of them.
	for _, topic := range topics {
		for i, part := range partitionsOf(topic) {
			uploads, err := store.ListUploads(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			if view := tier.BuildView(uploads, nil); view.EndOffset() != remoteEnds[topic.name][i] || view.StartOffset() != 0 {
				t.Fatalf("%s-%d after restore: remote [%d, %d], was [0, %d]", topic.name, i, view.StartOffset(), view.EndOffset(), remoteEnds[topic.name][i])
			}
		}
	}
}

// kcatConsumeRestored reads every restored partition from the beginning to
// its end with kcat (librdkafka) and checks each offset and key.
func kcatConsumeRestored(t *testing.T, c *Cluster, topics []restoredTopic, remoteEnds map[string][]int64) {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_KCAT") != "" {
			t.Fatal("kcat not installed and SAMSA_REQUIRE_KCAT is set")
		}
		t.Log("kcat not installed; skipping its part")
		return
	}
	for _, topic := range topics {
		for p, end := range remoteEnds[topic.name] {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			out, err := exec.CommandContext(ctx, kcat, "-C", "-b", strings.Join(c.Addrs(), ","), "-t", topic.name,
				"-p", fmt.Sprint(p), "-o", "beginning", "-c", fmt.Sprint(end+1), "-e", "-q", "-f", "%o %k\\n").CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("kcat %s-%d: %v\n%s", topic.name, p, err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if int64(len(lines)) != end+1 {
				t.Fatalf("kcat read %d records of %s-%d, want %d", len(lines), topic.name, p, end+1)
			}
			for i, line := range lines {
				if line != fmt.Sprintf("%d %d/%d", i, p, i) {
					t.Fatalf("kcat %s-%d record %d: %q", topic.name, p, i, line)
				}
			}
		}
	}
}
