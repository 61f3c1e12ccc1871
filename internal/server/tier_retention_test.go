package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// fetchPartitionCode sends one Fetch v12 of partition 0 at offset and returns the
// partition's error code and how many record bytes came.
func fetchPartitionCode(t *testing.T, tn *testNode, topic string, offset int64) (int16, int) {
	t.Helper()
	cl := tn.client()
	defer cl.Close()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = 12, -1, 100, 1<<20
	topics, err := kadm.NewClient(cl).ListTopics(testContext(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topics[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 0, offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	sp := resp.Topics[0].Partitions[0]
	return sp.ErrorCode, len(sp.RecordBatches)
}

// remoteView lists the readable remote segments of a topic's partition 0.
func remoteView(t *testing.T, tn *testNode, url, topic string) tier.RemoteView {
	t.Helper()
	ctx := testContext(t)
	topics, err := tn.admin().ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	uploads, err := tier.NewStore(tier.StoreConfig{Bucket: bucket}).ListUploads(ctx, tier.Partition{TopicID: topics[topic].ID, Partition: 0})
	if err != nil {
		t.Fatal(err)
	}
	return tier.BuildView(uploads, nil)
}

func alterTopic(t *testing.T, tn *testNode, topic, key, value string) {
	t.Helper()
	resp, err := tn.admin().AlterTopicConfigs(testContext(t), []kadm.AlterConfig{{Name: key, Value: kadm.StringPtr(value)}}, topic)
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter %s=%s: %v %v", key, value, err, resp)
	}
}

// TestTieredTotalRetention: total retention covers both tiers. By size,
// remote segments expire and the log start moves up with them; a fetch
// below it answers OFFSET_OUT_OF_RANGE and a consumer from the start reads
// from the new start through the remote tier. DeleteRecords below the
// local start moves the log start into the remote tier and expires the
// remote segments wholly below it. By time (retention.ms=1) every copied
// segment goes, the bucket is emptied of them, and the log start reaches
// the log end.
func TestTieredTotalRetention(t *testing.T) {
	for name, url := range tieredBucketURLs(t, "retention") {
		t.Run(name, func(t *testing.T) {
			tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
				"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
			mustCreateTopic(t, tn.admin(), "total", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
				"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576"), "retention.bytes": ptrTo("3145728")})
			const records = 2500
			produceNumbered(t, tn, "total", 0, records, 3000)
			p := tn.node.partitions.Get("total", 0)
			// Settled: everything closed is copied, retention.bytes has
			// expired what it covers and the log start followed.
			waitFor(t, 60*time.Second, "retention.bytes to expire remote segments", func() bool {
				closed := p.Log.ClosedSegments()
				view := remoteView(t, tn, url, "total")
				if len(closed) == 0 || p.Log.RemoteCopiedOffset() != closed[len(closed)-1].EndOffset ||
					view.StartOffset() <= 0 || view.StartOffset() != p.Log.LogStartOffset() {
					return false
				}
				// What retention.bytes counts: the remote tier and the
				// local bytes not in it (the active segment).
				onlyLocal := p.Log.Size()
				for _, c := range closed {
					onlyLocal -= c.SizeBytes
				}
				return view.SizeBytes()-view.Segments[0].SegmentSizeBytes+onlyLocal < 3145728
			})
			start := p.Log.LogStartOffset()
			if view := remoteView(t, tn, url, "total"); view.SizeBytes() > 3145728 {
				t.Fatalf("remote tier [%d, %d] of %d bytes over retention.bytes", view.StartOffset(), view.EndOffset(), view.SizeBytes())
			}
			if code, _ := fetchPartitionCode(t, tn, "total", start-1); code != kerr.OffsetOutOfRange.Code {
				t.Fatalf("fetch below the log start %d: code %d", start, code)
			}
			if code, n := fetchPartitionCode(t, tn, "total", start); code != 0 || n == 0 {
				t.Fatalf("fetch at the log start %d (remote): code %d, %d bytes", start, code, n)
			}

			// DeleteRecords inside the remote tier.
			local := p.Log.LocalLogStartOffset()
			target := start + (local-start)/2
			resp, err := tn.admin().DeleteRecords(testContext(t), kadm.Offsets{"total": {0: kadm.Offset{At: target}}})
			if err != nil || resp.Error() != nil {
				t.Fatalf("delete records to %d: %v %v", target, err, resp.Error())
			}
			if got, _ := listOffset(t, tn, "total", -2); got != target {
				t.Fatalf("earliest after DeleteRecords(%d) = %d", target, got)
			}
			if code, _ := fetchPartitionCode(t, tn, "total", target-1); code != kerr.OffsetOutOfRange.Code {
				t.Fatalf("fetch below the DeleteRecords offset: code %d", code)
			}
			waitFor(t, 30*time.Second, "remote segments below the DeleteRecords offset to expire", func() bool {
				view := remoteView(t, tn, url, "total")
				return len(view.Segments) > 0 && view.Segments[0].EndOffset >= target
			})
			if code, n := fetchPartitionCode(t, tn, "total", target); code != 0 || n == 0 {
				t.Fatalf("fetch at the DeleteRecords offset: code %d, %d bytes", code, n)
			}

			// By time: everything expires, the active segment is rolled
			// and copied first.
			alterTopic(t, tn, "total", "retention.ms", "1")
			waitFor(t, 60*time.Second, "retention.ms=1 to empty both tiers", func() bool {
				return p.Log.LogStartOffset() == records && len(remoteView(t, tn, url, "total").Segments) == 0
			})
			if got, _ := listOffset(t, tn, "total", -2); got != records {
				t.Fatalf("earliest after retention.ms=1 = %d", got)
			}
		})
	}
}

// TestTieredTinyLocalRetentionRollsActive: with local.retention.ms=1 the
// active segment is rolled, copied and deleted locally, and a consumer
// reads every record from the bucket.
func TestTieredTinyLocalRetentionRollsActive(t *testing.T) {
	url := "file://" + t.TempDir()
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	mustCreateTopic(t, tn.admin(), "tiny", 1, map[string]*string{"remote.storage.enable": ptrTo("true"), "local.retention.ms": ptrTo("1")})
	const records = 200
	produceNumbered(t, tn, "tiny", 0, records, 100)
	p := tn.node.partitions.Get("tiny", 0)
	waitFor(t, 30*time.Second, "the active segment to be rolled, copied and deleted", func() bool {
		return p.Log.LocalLogStartOffset() == records
	})
	if p.Log.LogStartOffset() != 0 {
		t.Fatalf("log start %d, want 0", p.Log.LogStartOffset())
	}
	consumeTiered(t, tn, "tiny", records)
}

// TestTieredStoreOutageUnderLoad pauses the S3 server while a producer
// writes to a tiered topic with a small local retention: local retention
// deletes nothing that is not in the bucket, produce keeps working, and
// once the server is back copying catches up, local segments go, and a
// consumer reads every record, the oldest from the bucket.
func TestTieredStoreOutageUnderLoad(t *testing.T) {
	for _, server := range blobtest.StartS3Servers(t) {
		t.Run(server.Name(), func(t *testing.T) { testTieredStoreOutageUnderLoad(t, server) })
	}
}

func testTieredStoreOutageUnderLoad(t *testing.T, server blobtest.S3Server) {
	url := server.CreateBucket("outage-load")
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	mustCreateTopic(t, tn.admin(), "load", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
		"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
	produceNumbered(t, tn, "load", 0, 700, 3000)
	p := tn.node.partitions.Get("load", 0)
	waitFor(t, 30*time.Second, "the first copies", func() bool { return p.Log.RemoteCopiedOffset() > 0 })
	server.Pause()
	produceNumbered(t, tn, "load", 700, 1300, 3000)
	copiedAtPause := p.Log.RemoteCopiedOffset()
	// Several tasks and retention checks run while the store is down.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if local := p.Log.LocalLogStartOffset(); local > copiedAtPause+1 {
			t.Fatalf("local retention deleted uncopied data: local start %d, copied up to %d", local, copiedAtPause)
		}
		time.Sleep(50 * time.Millisecond)
	}
	server.Resume()
	// 6 MB written, at most 2 MiB kept locally once every closed segment
	// is copied: local retention goes past what was copied at the pause.
	if local := settleLocalRetention(t, p); local <= copiedAtPause+1 {
		t.Fatalf("after the outage: local start %d, copied up to %d at the pause", local, copiedAtPause)
	}
	consumeTiered(t, tn, "load", 2000)
}
