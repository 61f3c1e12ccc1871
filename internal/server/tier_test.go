package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// TestTieredTopicOffloadsClosedSegments runs a node with tiered storage on
// a file:// bucket and on S3 buckets of gofakes3 and, when moto_server is
// installed, moto: a franz-go producer fills a topic with remote.storage.enable=true,
// the leader copies its closed segments, the bucket's segment objects equal
// the local .log files byte for byte, a consumer reads every record, and
// deleting the topic empties the bucket.
func TestTieredTopicOffloadsClosedSegments(t *testing.T) {
	for name, url := range tieredBucketURLs(t, "samsa-tier") {
		t.Run(name, func(t *testing.T) {
			tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
				"remote.log.manager.task.interval.ms=100")
			ctx := testContext(t)
			adm := tn.admin()
			segmentBytes := "1048576"
			mustCreateTopic(t, adm, "tiered", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "segment.bytes": &segmentBytes})
			cl := tn.client(kgo.DefaultProduceTopic("tiered"), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
			const records = 1200
			value := bytes.Repeat([]byte("v"), 3000)
			for i := range records {
				cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: value}, nil)
			}
			if err := cl.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			topics, err := adm.ListTopics(ctx, "tiered")
			if err != nil {
				t.Fatal(err)
			}
			topicID := topics["tiered"].ID

			bucket, err := blob.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer bucket.Close()
			store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
			part := tier.Partition{TopicID: topicID, Partition: 0}
			var view tier.RemoteView
			waitFor(t, 30*time.Second, "closed segments copied", func() bool {
				uploads, err := store.ListUploads(ctx, part)
				if err != nil {
					return false
				}
				view = tier.BuildView(uploads, nil)
				return len(view.Segments) >= 3
			})
			snapshots := 0
			for _, m := range view.Segments {
				local, err := os.ReadFile(filepath.Join(tn.dir, "tiered-0", fmt.Sprintf("%020d.log", m.BaseOffset)))
				if err != nil {
					t.Fatal(err)
				}
				remote, err := store.ReadFile(ctx, &m, tier.FileSegment)
				if err != nil || !bytes.Equal(local, remote) {
					t.Fatalf("segment %d: local %d bytes, remote %d, %v", m.BaseOffset, len(local), len(remote), err)
				}
				// The epoch lineage goes up with every segment, and the
				// producer snapshot taken at the roll when the log still
				// had it at copy time.
				for _, f := range m.Files {
					if f.Kind != tier.FileProducerSnapshot {
						continue
					}
					if remote, err := store.ReadFile(ctx, &m, tier.FileProducerSnapshot); err != nil || int64(len(remote)) != f.Size {
						t.Fatalf("producer snapshot of %d: %v", m.BaseOffset, err)
					}
					snapshots++
				}
				checkpoint, err := store.ReadFile(ctx, &m, tier.FileLeaderEpochCheckpoint)
				if epochs, derr := tier.DecodeEpochCheckpoint(checkpoint); err != nil || derr != nil || len(epochs) == 0 {
					t.Fatalf("leader-epoch checkpoint of %d: %v %v", m.BaseOffset, err, derr)
				}
			}

			if snapshots == 0 {
				t.Fatal("no upload carries a producer snapshot")
			}
			waitFor(t, 30*time.Second, "remote metrics", func() bool {
				got := scrape(t, tn)
				return got[`samsa_remote_log_size_bytes{partition="0",topic="tiered"}`] >= float64(view.SizeBytes()) &&
					got[`samsa_remote_copy_bytes_total{topic="tiered"}`] >= float64(view.SizeBytes())
			})

			consumer := tn.client(kgo.ConsumeTopics("tiered"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			seen := 0
			for seen < records {
				fetches := consumer.PollFetches(ctx)
				if err := fetches.Err(); err != nil {
					t.Fatalf("consume after %d: %v", seen, err)
				}
				seen += fetches.NumRecords()
			}

			if _, err := adm.DeleteTopics(ctx, "tiered"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "bucket emptied after topic deletion", func() bool {
				n := 0
				_ = bucket.List(ctx, "", func(blob.ObjectInfo) error { n++; return nil })
				return n == 0
			})
		})
	}
}

// TestTieredTopicRefusedWithTieringOff checks Kafka's refusal of
// remote.storage.enable on a broker without tiered storage, and of a
// compacted tiered topic on one with it.
func TestTieredTopicRefusedWithTieringOff(t *testing.T) {
	for _, tt := range []struct {
		overrides []string
		configs   map[string]*string
		want      string
	}{
		{nil, map[string]*string{"remote.storage.enable": ptrTo("true")}, "Tiered Storage functionality is disabled"},
		{[]string{"remote.log.storage.system.enable=true", "rsm.config.bucket.url=file://" + t.TempDir()},
			map[string]*string{"remote.storage.enable": ptrTo("true"), "cleanup.policy": ptrTo("compact")}, "cleanup.policy=delete"},
	} {
		tn := startTestNode(t, tt.overrides...)
		resp, err := tn.admin().CreateTopics(testContext(t), 1, 1, tt.configs, "refused")
		if err != nil {
			t.Fatal(err)
		}
		r := resp["refused"]
		if r.Err != kerr.InvalidConfig || !strings.Contains(r.ErrMessage, tt.want) {
			t.Fatalf("got %v %q, want INVALID_CONFIG %q", r.Err, r.ErrMessage, tt.want)
		}
	}
}

func ptrTo(s string) *string { return &s }

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTieredCopyCatchesUpAfterStoreOutage stops the S3 server (SIGSTOP, so
// requests hang as with an unreachable endpoint) while a producer keeps
// writing: every produce succeeds, and once the server is back every closed
// segment reaches the bucket byte for byte.
func TestTieredCopyCatchesUpAfterStoreOutage(t *testing.T) {
	for _, server := range blobtest.StartS3Servers(t) {
		t.Run(server.Name(), func(t *testing.T) { testTieredCopyCatchesUpAfterStoreOutage(t, server) })
	}
}

func testTieredCopyCatchesUpAfterStoreOutage(t *testing.T, server blobtest.S3Server) {
	url := server.CreateBucket("outage")
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100")
	ctx := testContext(t)
	adm := tn.admin()
	segmentBytes := "1048576"
	mustCreateTopic(t, adm, "outage", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "segment.bytes": &segmentBytes})
	cl := tn.client(kgo.DefaultProduceTopic("outage"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := bytes.Repeat([]byte("o"), 3000)
	produce := func(n int) {
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	produce(400)
	server.Pause()
	produce(1200) // four more segments while the store is down
	server.Resume()

	topics, err := adm.ListTopics(ctx, "outage")
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
	part := tier.Partition{TopicID: topics["outage"].ID, Partition: 0}
	closed := tn.node.partitions.Get("outage", 0).Log.ClosedSegments()
	if len(closed) < 4 {
		t.Fatalf("only %d closed segments", len(closed))
	}
	var view tier.RemoteView
	waitFor(t, 60*time.Second, "copying to catch up", func() bool {
		uploads, err := store.ListUploads(ctx, part)
		if err != nil {
			return false
		}
		view = tier.BuildView(uploads, nil)
		return view.EndOffset() >= closed[len(closed)-1].EndOffset
	})
	for i, m := range view.Segments {
		local, _ := os.ReadFile(closed[i].LogPath)
		remote, err := store.ReadFile(ctx, &m, tier.FileSegment)
		if m.BaseOffset != closed[i].BaseOffset || err != nil || !bytes.Equal(local, remote) {
			t.Fatalf("segment %d after the outage differs: %v", m.BaseOffset, err)
		}
	}
}

// TestTieredDisableCopyThenDeleteOnDisable sets remote.log.copy.disable on
// a tiered topic (the remote tier stops growing and keeps its segments),
// then turns tiering off with remote.log.delete.on.disable=true (KIP-950):
// the partition's remote data is deleted and the local log still serves
// every record.
func TestTieredDisableCopyThenDeleteOnDisable(t *testing.T) {
	url := "file://" + t.TempDir()
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100")
	ctx := testContext(t)
	adm := tn.admin()
	segmentBytes := "1048576"
	mustCreateTopic(t, adm, "disable", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "segment.bytes": &segmentBytes})
	cl := tn.client(kgo.DefaultProduceTopic("disable"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := bytes.Repeat([]byte("d"), 3000)
	produce := func(n int) {
		for range n {
			cl.Produce(ctx, &kgo.Record{Value: value}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	produce(800)
	topics, _ := adm.ListTopics(ctx, "disable")
	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
	part := tier.Partition{TopicID: topics["disable"].ID, Partition: 0}
	segments := func() int {
		uploads, err := store.ListUploads(ctx, part)
		if err != nil {
			return -1
		}
		view := tier.BuildView(uploads, nil)
		return len(view.Segments)
	}
	waitFor(t, 30*time.Second, "first copies", func() bool { return segments() >= 2 })

	alter := func(configs ...kadm.AlterConfig) {
		resp, err := adm.AlterTopicConfigs(ctx, configs, "disable")
		if err == nil {
			err = resp[0].Err
		}
		if err != nil {
			t.Fatalf("alter %v: %v", configs, err)
		}
	}
	alter(kadm.AlterConfig{Name: "remote.log.copy.disable", Value: kadm.StringPtr("true")})
	waitFor(t, 10*time.Second, "copy.disable to reach the partition", func() bool {
		return tn.node.partitions.Get("disable", 0).Config().RemoteLogCopyDisable
	})
	before := segments()
	produce(800)
	closed := len(tn.node.partitions.Get("disable", 0).Log.ClosedSegments())
	if closed <= before {
		t.Fatalf("no new closed segments (%d closed, %d remote)", closed, before)
	}
	// A task ran after them, saw them, and left them uncopied.
	waitFor(t, 10*time.Second, "a task to report the uncopied segments as lag", func() bool {
		return scrape(t, tn)[`samsa_remote_copy_lag_segments{partition="0",topic="disable"}`] >= float64(closed-before)
	})
	if got := segments(); got != before {
		t.Fatalf("copy.disable: remote segments went from %d to %d", before, got)
	}

	alter(kadm.AlterConfig{Name: "remote.storage.enable", Value: kadm.StringPtr("false")},
		kadm.AlterConfig{Name: "remote.log.delete.on.disable", Value: kadm.StringPtr("true")})
	waitFor(t, 30*time.Second, "remote data deleted on disable", func() bool {
		n := 0
		_ = bucket.List(ctx, "", func(blob.ObjectInfo) error { n++; return nil })
		return n == 0
	})
	consumer := tn.client(kgo.ConsumeTopics("disable"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for seen := 0; seen < 1600; {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatal(err)
		}
		seen += fetches.NumRecords()
	}
}

// TestTieredRestartContinuesWithoutDuplicates restarts a node after its
// first copies: the remote log manager takes its state from the bucket, so
// after more produce every closed segment is in the bucket exactly once.
func TestTieredRestartContinuesWithoutDuplicates(t *testing.T) {
	url := "file://" + t.TempDir()
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100")
	segmentBytes := "1048576"
	mustCreateTopic(t, tn.admin(), "restart", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "segment.bytes": &segmentBytes})
	produce := func(n int) {
		ctx := testContext(t)
		cl := tn.client(kgo.DefaultProduceTopic("restart"), kgo.ProducerBatchCompression(kgo.NoCompression()))
		for range n {
			cl.Produce(ctx, &kgo.Record{Value: bytes.Repeat([]byte("r"), 3000)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	produce(800)
	ctx := testContext(t)
	topics, _ := tn.admin().ListTopics(ctx, "restart")
	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
	part := tier.Partition{TopicID: topics["restart"].ID, Partition: 0}
	uploads := func() []tier.Upload {
		u, err := store.ListUploads(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	waitFor(t, 30*time.Second, "first copies", func() bool { return len(tier.BuildView(uploads(), nil).Segments) >= 2 })
	tn.restart()
	produce(800)
	closed := tn.node.partitions.Get("restart", 0).Log.ClosedSegments()
	waitFor(t, 30*time.Second, "copies after the restart", func() bool {
		view := tier.BuildView(uploads(), nil)
		return view.EndOffset() >= closed[len(closed)-1].EndOffset
	})
	seen := map[int64]int{}
	for _, u := range uploads() {
		// An upload cut by the shutdown may remain as an orphan until it
		// is collected; it is never served and is not a duplicate.
		if u.Finished {
			seen[u.Metadata.BaseOffset]++
		}
	}
	for base, n := range seen {
		if n != 1 {
			t.Fatalf("segment %d uploaded %d times", base, n)
		}
	}
	if len(seen) != len(closed) {
		t.Fatalf("%d uploads for %d closed segments", len(seen), len(closed))
	}
}

// TestTieredRetentionWaitsForTheStore stops the S3 server and lets
// retention.ms expire every closed segment: the node keeps them all until
// the server is back and they are copied, then retention deletes them.
func TestTieredRetentionWaitsForTheStore(t *testing.T) {
	for _, server := range blobtest.StartS3Servers(t) {
		t.Run(server.Name(), func(t *testing.T) { testTieredRetentionWaitsForTheStore(t, server) })
	}
}

func testTieredRetentionWaitsForTheStore(t *testing.T, server blobtest.S3Server) {
	url := server.CreateBucket("retention")
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	ctx := testContext(t)
	adm := tn.admin()
	segmentBytes := "1048576"
	mustCreateTopic(t, adm, "wait", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "segment.bytes": &segmentBytes})
	// One task must have run to guard the partition before the outage.
	waitFor(t, 10*time.Second, "the first task", func() bool {
		_, ok := scrape(t, tn)[`samsa_remote_copy_lag_segments{partition="0",topic="wait"}`]
		return ok
	})
	server.Pause()
	cl := tn.client(kgo.DefaultProduceTopic("wait"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for range 1200 {
		cl.Produce(ctx, &kgo.Record{Value: bytes.Repeat([]byte("w"), 3000)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	p := tn.node.partitions.Get("wait", 0)
	closed := len(p.Log.ClosedSegments())
	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("1")}}, "wait")
	if err != nil || alter[0].Err != nil {
		t.Fatalf("alter: %v %v", err, alter)
	}
	waitFor(t, 10*time.Second, "retention.ms=1 to reach the partition", func() bool { return p.Config().RetentionMs == 1 })
	// Several retention checks run while the store is down; none deletes.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if p.Log.LogStartOffset() != 0 || p.Log.LocalLogStartOffset() != 0 {
			t.Fatalf("retention deleted uncopied data: log start %d, local start %d", p.Log.LogStartOffset(), p.Log.LocalLogStartOffset())
		}
		time.Sleep(50 * time.Millisecond)
	}
	server.Resume()
	waitFor(t, 60*time.Second, "copies, then local deletion", func() bool {
		return len(p.Log.ClosedSegments()) < closed && p.Log.LogStartOffset() > 0
	})
}
