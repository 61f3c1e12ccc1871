package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// tieredBucketURLs returns the buckets a tiered test runs against: the
// file:// driver, and a bucket on every S3 implementation the tests have
// (gofakes3 always, moto when installed; SAMSA_REQUIRE_MOTO makes it
// required), keyed "file", "s3-gofakes3", "s3-moto".
func tieredBucketURLs(t *testing.T, name string) map[string]string {
	urls := map[string]string{"file": "file://" + t.TempDir()}
	for _, server := range blobtest.StartS3Servers(t) {
		urls["s3-"+server.Name()] = server.CreateBucket(name)
	}
	return urls
}

// settleLocalRetention waits until the remote log manager has copied every
// closed segment of p, then runs local retention itself and returns the
// local log start offset. With nothing left to copy, what local retention
// keeps depends on segment sizes alone, not on how fast tasks and
// retention checks ran nor on how the producer batched: at most
// local.retention.bytes plus one segment stays local, so a test that wrote
// N bytes more than that has N bytes in the remote tier only.
func settleLocalRetention(t *testing.T, p *partition.Partition) int64 {
	t.Helper()
	waitFor(t, 60*time.Second, "every closed segment copied", func() bool {
		closed := p.Log.ClosedSegments()
		return len(closed) == 0 || p.Log.RemoteCopiedOffset() >= closed[len(closed)-1].EndOffset
	})
	if _, err := p.Log.EnforceRetention(time.Now()); err != nil {
		t.Fatal(err)
	}
	return p.Log.LocalLogStartOffset()
}

// remoteOnlySegments counts the segments of view wholly below localStart.
func remoteOnlySegments(view tier.RemoteView, localStart int64) int {
	n := 0
	for _, s := range view.Segments {
		if s.EndOffset < localStart {
			n++
		}
	}
	return n
}

// recordTime is the create time produceNumbered gives record i: 10 ms
// apart from a fixed start.
// The start is an hour before the test, inside every retention.ms a test
// leaves at its default.
func recordTime(i int) time.Time {
	return recordTimeStart.Add(time.Duration(i) * 10 * time.Millisecond)
}

var recordTimeStart = time.Now().Add(-time.Hour).Truncate(time.Second)

// produceNumbered writes n records keyed by their index from first, each
// with a value of size bytes, and waits for every acknowledgement.
func produceNumbered(t *testing.T, tn *testNode, topic string, first, n, size int, opts ...kgo.Opt) {
	t.Helper()
	ctx := testContext(t)
	cl := tn.client(append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)...)
	defer cl.Close()
	value := bytes.Repeat([]byte("t"), size)
	for i := first; i < first+n; i++ {
		cl.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value, Timestamp: recordTime(i)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// consumeTiered reads topic partition 0 from the start until n records came,
// checking every record's offset and key.
func consumeTiered(t *testing.T, tn *testNode, topic string, n int, opts ...kgo.Opt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	cl := tn.client(append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	defer cl.Close()
	next := int64(0)
	for next < int64(n) {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", next, n, err)
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			t.Fatalf("fetch %s-%d: %v", topic, partition, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != next || string(r.Key) != strconv.FormatInt(next, 10) {
				t.Fatalf("record at offset %d key %q, want offset %d", r.Offset, r.Key, next)
			}
			next++
		})
	}
}

// kcatConsumeTiered reads partition 0 from the beginning to its end with
// kcat (librdkafka), read_committed, and checks every offset and key, then
// asks kcat for the offset of the time of record 1 (ListOffsets by
// timestamp, found in the remote tier).
func kcatConsumeTiered(t *testing.T, tn *testNode, topic string, n int) {
	t.Helper()
	kcatConsumeTieredPartition(t, tn, topic, 0, n)
}

// kcatConsumeTieredPartition is kcatConsumeTiered for one partition.
func kcatConsumeTieredPartition(t *testing.T, tn *testNode, topic string, partition int32, n int) {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_KCAT") != "" {
			t.Fatal("kcat not installed and SAMSA_REQUIRE_KCAT is set")
		}
		t.Log("kcat not installed; skipping its part")
		return
	}
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", tn.addr(), "-t", topic, "-p", strconv.Itoa(int(partition)), "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%o %k\\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat consume: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != n {
		t.Fatalf("kcat read %d records, want %d", len(lines), n)
	}
	for i, line := range lines {
		if line != fmt.Sprintf("%d %d", i, i) {
			t.Fatalf("kcat record %d: %q", i, line)
		}
	}
	query := fmt.Sprintf("%s:%d:%d", topic, partition, recordTime(1).UnixMilli())
	out, err = exec.CommandContext(ctx, kcat, "-Q", "-b", tn.addr(), "-t", query).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "offset 1") {
		t.Fatalf("kcat -Q %s: %v\n%s", query, err, out)
	}
}

// listOffset asks ListOffsets v9 for one timestamp spec of partition 0.
func listOffset(t *testing.T, tn *testNode, topic string, timestamp int64) (offset int64, epoch int32) {
	t.Helper()
	cl := tn.client()
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 9
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, timestamp, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != 0 {
		t.Fatalf("ListOffsets %d: error %d", timestamp, sp.ErrorCode)
	}
	return sp.Offset, sp.LeaderEpoch
}

// TestTieredConsumeFromRemote offloads a topic whose local retention keeps
// about one segment, then consumes it from the start with franz-go: the
// oldest records come from the bucket, the rest from local segments, every
// offset once and in order, before and after a restart.
func TestTieredConsumeFromRemote(t *testing.T) {
	for name, url := range tieredBucketURLs(t, "consume") {
		t.Run(name, func(t *testing.T) {
			tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
				"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
			mustCreateTopic(t, tn.admin(), "remote", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
				"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
			const records = 1500
			produceNumbered(t, tn, "remote", 0, records, 3000)
			p := tn.node.partitions.Get("remote", 0)
			// 4.5 MB written, at most 2 MiB kept locally: several segments
			// are in the bucket only, however the producer batched.
			local := settleLocalRetention(t, p)
			if n := remoteOnlySegments(remoteView(t, tn, url, "remote"), local); n < 2 {
				t.Fatalf("%d segments only in the bucket (local start %d), want at least 2", n, local)
			}
			if start := p.Log.LogStartOffset(); start != 0 {
				t.Fatalf("log start offset %d after local retention, want 0", start)
			}
			if off, _ := listOffset(t, tn, "remote", -2); off != 0 {
				t.Fatalf("earliest = %d, want 0", off)
			}
			consumeTiered(t, tn, "remote", records)
			consumeTiered(t, tn, "remote", records, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			kcatConsumeTiered(t, tn, "remote", records)

			tn.restart()
			p = tn.node.partitions.Get("remote", 0)
			if start, local := p.Log.LogStartOffset(), p.Log.LocalLogStartOffset(); start != 0 || local == 0 {
				t.Fatalf("after restart: log start %d, local start %d", start, local)
			}
			consumeTiered(t, tn, "remote", records)
			if got := scrape(t, tn)["samsa_remote_fetch_bytes_total"]; got <= 0 {
				t.Fatalf("samsa_remote_fetch_bytes_total = %v after remote reads", got)
			}
		})
	}
}

// TestTieredListOffsets answers every ListOffsets spec on a partition
// whose oldest segments are in the bucket only: -2 the remote start, -4
// the local start, -5 the highest copied offset, -6 the one after, -1 and
// -3 locally, and timestamps in both tiers, the remote ones looked up in
// the remote time indexes.
func TestTieredListOffsets(t *testing.T) {
	for name, url := range tieredBucketURLs(t, "offsets") {
		t.Run(name, func(t *testing.T) {
			tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
				"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
			mustCreateTopic(t, tn.admin(), "offsets", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
				"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
			const records = 1500
			produceNumbered(t, tn, "offsets", 0, records, 3000)
			p := tn.node.partitions.Get("offsets", 0)
			// Once every closed segment is copied and local retention has
			// run, nothing moves any more.
			local := settleLocalRetention(t, p)
			if local <= 17 {
				t.Fatalf("local start %d: the records looked up in the remote tier are local", local)
			}
			copied := p.Log.RemoteCopiedOffset()
			if copied < local-1 {
				t.Fatalf("copied offset %d below the local start %d", copied, local)
			}
			for _, c := range []struct {
				spec int64
				want int64
			}{{-2, 0}, {-4, local}, {-5, copied}, {-6, copied + 1}, {-1, records}, {-3, records - 1}} {
				if got, epoch := listOffset(t, tn, "offsets", c.spec); got != c.want || epoch < 0 {
					t.Fatalf("ListOffsets %d = %d epoch %d, want %d", c.spec, got, epoch, c.want)
				}
			}
			// Timestamps in the remote tier, at the boundary and locally.
			for _, i := range []int{0, 1, 17, 300, int(local) - 1, int(local), int(local) + 1, records - 1} {
				ts := recordTime(i).UnixMilli()
				if got, _ := listOffset(t, tn, "offsets", ts-5); got != int64(i) {
					t.Fatalf("ListOffsets for the time of record %d - 5ms = %d", i, got)
				}
				if got, _ := listOffset(t, tn, "offsets", ts); got != int64(i) {
					t.Fatalf("ListOffsets for the time of record %d = %d", i, got)
				}
			}
			if got, _ := listOffset(t, tn, "offsets", recordTime(records).UnixMilli()); got != -1 {
				t.Fatalf("ListOffsets past the last record = %d, want -1", got)
			}
		})
	}
}

// TestTieredReadCommittedFromRemote: transactions, half of them aborted,
// are offloaded and deleted locally; a read_committed consumer from the
// start gets every committed record and none of the aborted ones, the
// aborted transactions coming from the remote transaction indexes, and a
// read_uncommitted one gets them all.
func TestTieredReadCommittedFromRemote(t *testing.T) {
	url := "file://" + t.TempDir()
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	mustCreateTopic(t, tn.admin(), "txn-remote", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
		"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
	cl := txnProducer(t, tn, "tiered-txn", kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
	ctx := testContext(t)
	// About 4.5 MB in 1 MiB segments, so that with 1 MiB kept locally the
	// local start passes offset 600 however the producer batches.
	const transactions, perTxn = 60, 25
	pad := string(bytes.Repeat([]byte("x"), 3000))
	for i := range transactions {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		commit := i%2 == 0
		for j := range perTxn {
			kind := "a"
			if commit {
				kind = "c"
			}
			cl.Produce(ctx, &kgo.Record{Topic: "txn-remote", Value: []byte(kind + strconv.Itoa(i*perTxn+j) + pad)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	p := tn.node.partitions.Get("txn-remote", 0)
	settleLocalRetention(t, p)
	indexed := 0
	for _, seg := range remoteView(t, tn, url, "txn-remote").Segments {
		for _, f := range seg.Files {
			if f.Kind == tier.FileTransactionIndex && seg.EndOffset < p.Log.LocalLogStartOffset() {
				indexed++
			}
		}
	}
	if indexed == 0 {
		t.Fatal("no remote-only segment has a transaction index")
	}
	committed := pollUntil(t, tn, "txn-remote", true, 60*time.Second, func(values []string) bool { return len(values) >= transactions/2*perTxn })
	if len(committed) != transactions/2*perTxn {
		t.Fatalf("read_committed got %d records, want %d", len(committed), transactions/2*perTxn)
	}
	for i, v := range committed {
		if v[0] != 'c' {
			t.Fatalf("read_committed record %d is from an aborted transaction: %.10s", i, v)
		}
	}
	all := pollUntil(t, tn, "txn-remote", false, 60*time.Second, func(values []string) bool { return len(values) >= transactions*perTxn })
	if len(all) != transactions*perTxn {
		t.Fatalf("read_uncommitted got %d records, want %d", len(all), transactions*perTxn)
	}
}

// TestTieredFetchSeveralRemotePartitions: one Fetch of three partitions,
// each at an offset only in the bucket, is answered with records of all
// three; with the store paused, the fetch is answered within about
// remote.fetch.max.wait.ms with no records and no error.
func TestTieredFetchSeveralRemotePartitions(t *testing.T) {
	for _, server := range blobtest.StartS3Servers(t) {
		t.Run(server.Name(), func(t *testing.T) { testTieredFetchSeveralRemotePartitions(t, server) })
	}
}

func testTieredFetchSeveralRemotePartitions(t *testing.T, server blobtest.S3Server) {
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+server.CreateBucket("several"),
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100", "remote.fetch.max.wait.ms=300")
	mustCreateTopic(t, tn.admin(), "multi", 3, map[string]*string{"remote.storage.enable": ptrTo("true"),
		"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
	for partition := range int32(3) {
		produceNumbered(t, tn, "multi", 0, 1500, 3000, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("multi"),
			kgo.WithHooks(partitionHook(partition)))
	}
	for partition := range int32(3) {
		if local := settleLocalRetention(t, tn.node.partitions.Get("multi", partition)); local == 0 {
			t.Fatalf("partition %d: offset 0 is still local", partition)
		}
	}
	fetch := func(topic string, partitions int32, offset int64) (*kmsg.FetchResponse, time.Duration) {
		cl := tn.client()
		defer cl.Close()
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.MinBytes = -1, 5000, 50<<20, 1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		topics, err := tn.admin().ListTopics(testContext(t), topic)
		if err != nil {
			t.Fatal(err)
		}
		rt.TopicID = topics[topic].ID
		for partition := range partitions {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = partition, offset, 1<<20, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		start := time.Now()
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp, time.Since(start)
	}
	// A read slower than remote.fetch.max.wait.ms (a loaded machine) is
	// answered empty and the consumer fetches again, as here.
	waitFor(t, 30*time.Second, "one fetch with records of all three partitions", func() bool {
		resp, _ := fetch("multi", 3, 0)
		for _, sp := range resp.Topics[0].Partitions {
			if sp.ErrorCode != 0 || sp.LogStartOffset != 0 {
				t.Fatalf("partition %d: code %d, log start %d", sp.Partition, sp.ErrorCode, sp.LogStartOffset)
			}
			if len(sp.RecordBatches) == 0 {
				return false
			}
		}
		return true
	})
	// A partition never read, so not cached, with the store paused.
	mustCreateTopic(t, tn.admin(), "paused", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
		"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
	produceNumbered(t, tn, "paused", 0, 900, 3000)
	if local := settleLocalRetention(t, tn.node.partitions.Get("paused", 0)); local == 0 {
		t.Fatal("offset 0 of the paused partition is still local")
	}
	server.Pause()
	resp, took := fetch("paused", 1, 0)
	server.Resume()
	for _, sp := range resp.Topics[0].Partitions {
		if sp.ErrorCode != 0 || len(sp.RecordBatches) != 0 {
			t.Fatalf("partition %d with the store paused: code %d, %d bytes", sp.Partition, sp.ErrorCode, len(sp.RecordBatches))
		}
	}
	t.Logf("fetch with the store paused answered after %v (remote.fetch.max.wait.ms=300, max_wait_ms=5000)", took)
	if took >= 5*time.Second {
		t.Fatalf("fetch with the store paused waited %v, the consumer's max wait, not remote.fetch.max.wait.ms", took)
	}
}

// partitionHook routes every record of a client to one partition.
type partitionHook int32

func (h partitionHook) OnProduceRecordBuffered(r *kgo.Record) { r.Partition = int32(h) }

// TestTieredRestartWithoutCheckpoints offloads a partition, stops the node,
// deletes its high-watermark, recovery-point and log-start checkpoints and
// starts it again: the log start is back in the remote tier (a missing
// checkpoint is 0, as in Kafka, then moved up to the remote start) and a
// consumer reads every record from offset 0.
func TestTieredRestartWithoutCheckpoints(t *testing.T) {
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url=file://"+t.TempDir(),
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	mustCreateTopic(t, tn.admin(), "checkpoints", 1, map[string]*string{"remote.storage.enable": ptrTo("true"),
		"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
	const records = 1200
	produceNumbered(t, tn, "checkpoints", 0, records, 3000)
	p := tn.node.partitions.Get("checkpoints", 0)
	if local := settleLocalRetention(t, p); local == 0 {
		t.Fatal("local retention deleted nothing")
	}
	tn.stop()
	for _, name := range []string{log.ReplicationCheckpointFile, log.RecoveryPointCheckpointFile, log.LogStartOffsetCheckpointFile} {
		if err := os.Remove(filepath.Join(tn.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tn.start()
	p = tn.node.partitions.Get("checkpoints", 0)
	if start, local := p.Log.LogStartOffset(), p.Log.LocalLogStartOffset(); start != 0 || local == 0 {
		t.Fatalf("after a restart without checkpoints: log start %d, local start %d", start, local)
	}
	consumeTiered(t, tn, "checkpoints", records)
}

// TestTieredEnableOnExistingTopic turns remote.storage.enable on for a
// topic that already holds data: its closed segments are copied, local
// retention then deletes them locally, and every record stays readable
// from offset 0.
func TestTieredEnableOnExistingTopic(t *testing.T) {
	tn := startTestNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url=file://"+t.TempDir(),
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	mustCreateTopic(t, tn.admin(), "later", 1, map[string]*string{"segment.bytes": ptrTo("1048576"), "local.retention.bytes": ptrTo("1048576")})
	const records = 1200
	produceNumbered(t, tn, "later", 0, records, 3000)
	p := tn.node.partitions.Get("later", 0)
	if p.Log.LocalLogStartOffset() != 0 {
		t.Fatalf("an untiered topic deleted by local.retention.bytes: local start %d", p.Log.LocalLogStartOffset())
	}
	alterTopic(t, tn, "later", "remote.storage.enable", "true")
	waitFor(t, 10*time.Second, "remote.storage.enable to reach the partition", func() bool { return p.Log.Config().RemoteStorage })
	if local := settleLocalRetention(t, p); local == 0 {
		t.Fatal("local retention deleted nothing after tiering was enabled")
	}
	if start := p.Log.LogStartOffset(); start != 0 {
		t.Fatalf("log start %d after enabling tiering, want 0", start)
	}
	consumeTiered(t, tn, "later", records)
}
