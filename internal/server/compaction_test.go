package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/log"
)

// eventually polls cond every 20 ms until it holds, failing the test after
// timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readCompacted reads partition 0 of topic from the start to its end offset
// with a fresh consumer, checking that offsets strictly increase. The last
// offset must hold a record (the tests end with a produce).
func readCompacted(t *testing.T, tn *testNode, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tn.addr()), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testContext(t)
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end := ends[topic][0].Offset
	var out []*kgo.Record
	next := int64(-1)
	for next+1 < end {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read to offset %d of %d: %v", next, end, err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		for _, r := range fetches.Records() {
			if r.Offset <= next {
				t.Fatalf("offset %d after %d", r.Offset, next)
			}
			next = r.Offset
			out = append(out, r)
		}
	}
	return out
}

// TestCompactionKeepsLatestValue: a compacted topic with segments rolling
// every round of updates is cleaned in the background; a fresh consumer then
// reads the latest value of every key, no older value below the cleaned
// offset, offsets strictly increasing, and deleted keys' tombstones, which
// disappear once delete.retention.ms has passed and the log is cleaned again.
func TestCompactionKeepsLatestValue(t *testing.T) {
	tn := startTestNode(t, "log.cleaner.backoff.ms=20")
	adm := tn.admin()
	topic := "compacted"
	mustCreateTopic(t, adm, topic, 1, map[string]*string{
		"cleanup.policy":      kadm.StringPtr("compact"),
		"segment.ms":          kadm.StringPtr("1000"),
		"delete.retention.ms": kadm.StringPtr("1000"),
		// Any closed segment of new data gets cleaned, so what the test
		// waits for does not depend on when passes happen to run.
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	})
	cl := tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.Now().Add(-30 * time.Minute)
	round := 0
	// produceRound writes one value of keys k0..k(keys-1), stamped 1.5 s
	// after the previous round so each round rolls a segment.
	produceRound := func(keys int, value func(key int) []byte) {
		t.Helper()
		var recs []*kgo.Record
		for k := 0; k < keys; k++ {
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", k)), Value: value(k),
				Timestamp: base.Add(time.Duration(round) * 1500 * time.Millisecond)})
		}
		if err := cl.ProduceSync(testContext(t), recs...).FirstErr(); err != nil {
			t.Fatalf("produce round %d: %v", round, err)
		}
		round++
	}
	latest := map[string]string{}
	for r := 0; r < 40; r++ {
		keys := 20
		if r > 0 {
			keys = 15 // k15..k19 are written once, in round 0
		}
		produceRound(keys, func(k int) []byte {
			v := fmt.Sprintf("r%d-k%d", round, k)
			latest[fmt.Sprintf("k%d", k)] = v
			return []byte(v)
		})
	}
	// Tombstones for k10..k14, then one more round of k0..k9.
	var tombs []*kgo.Record
	for k := 10; k < 15; k++ {
		tombs = append(tombs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", k)), Timestamp: base.Add(time.Duration(round) * 1500 * time.Millisecond)})
		delete(latest, fmt.Sprintf("k%d", k))
	}
	if err := cl.ProduceSync(testContext(t), tombs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	round++
	for r := 0; r < 3; r++ {
		produceRound(10, func(k int) []byte {
			v := fmt.Sprintf("r%d-k%d", round, k)
			latest[fmt.Sprintf("k%d", k)] = v
			return []byte(v)
		})
	}

	tp := log.TopicPartition{Topic: topic, Partition: 0}
	l := tn.node.logs.Get(tp)
	var cleanedTo int64
	eventually(t, 20*time.Second, "the cleaner to pass the tombstones", func() bool {
		off, ok := tn.node.logs.CleanerCheckpoint(tp)
		cleanedTo = off
		return ok && off >= int64(40*15+5+10)
	})
	recs := readCompacted(t, tn, topic)
	got := map[string]string{}
	tombstones := 0
	seenBelow := map[string]bool{}
	for _, r := range recs {
		key := string(r.Key)
		if r.Offset < cleanedTo {
			if seenBelow[key] {
				t.Fatalf("key %s appears twice below the cleaned offset %d", key, cleanedTo)
			}
			seenBelow[key] = true
		}
		if r.Value == nil {
			tombstones++
			delete(got, key)
			continue
		}
		got[key] = string(r.Value)
	}
	for k, v := range latest {
		if got[k] != v {
			t.Fatalf("key %s reads %q, latest is %q", k, got[k], v)
		}
	}
	if len(got) != len(latest) || tombstones != 5 {
		t.Fatalf("read %d live keys and %d tombstones, want %d and 5", len(got), tombstones, len(latest))
	}
	t.Logf("cleaned below offset %d: %d records read of %d produced; log %d bytes in %d segments",
		cleanedTo, len(recs), 40*15+5+5+30, l.Size(), l.NumSegments())

	// Past delete.retention.ms the next pass drops the tombstones; more
	// updates make the log dirty enough to be cleaned again.
	eventually(t, 30*time.Second, "the tombstones to go", func() bool {
		produceRound(10, func(k int) []byte {
			v := fmt.Sprintf("r%d-k%d", round, k)
			latest[fmt.Sprintf("k%d", k)] = v
			return []byte(v)
		})
		for _, r := range readCompacted(t, tn, topic) {
			if r.Value == nil {
				return false
			}
		}
		return true
	})
	// The cleaned log survives a restart, and producing continues after it.
	tn.restart()
	cl = tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceRound(5, func(k int) []byte {
		v := fmt.Sprintf("r%d-k%d", round, k)
		latest[fmt.Sprintf("k%d", k)] = v
		return []byte(v)
	})
	final := map[string]string{}
	for _, r := range readCompacted(t, tn, topic) {
		final[string(r.Key)] = string(r.Value)
	}
	if len(final) != len(latest) {
		t.Fatalf("after restart %d keys, want %d", len(final), len(latest))
	}
	for k, v := range latest {
		if final[k] != v {
			t.Fatalf("after tombstone expiry and restart key %s reads %q, latest is %q", k, final[k], v)
		}
	}
}

// TestConsumerOffsetsStayCompacted: a long run of offset commits keeps
// __consumer_offsets small, and the committed offsets survive a restart
// that replays the compacted log.
//
// Segments roll on time (log.roll.ms=100), and as in Kafka only when a batch
// is appended; the active segment is never cleaned. How much of the log can
// be compacted therefore depends on how many segments the run spans, not on
// how many commits it makes: a fixed number of commits may all land in one
// or two segments on a fast machine. So the run goes on until the cleaner
// has advanced over many rolled segments, and the wait at the end keeps
// committing, so that the segment holding the run's last commits rolls and
// is cleaned too.
func TestConsumerOffsetsStayCompacted(t *testing.T) {
	tn := startTestNode(t, "log.cleaner.backoff.ms=20", "offsets.topic.num.partitions=1", "log.roll.ms=100")
	adm := tn.admin()
	mustCreateTopic(t, adm, "work", 10, nil)
	ctx := testContext(t)
	// The run lasts at least minCommits commits and minCleanerAdvances
	// cleaner passes over __consumer_offsets-0 (each at least a roll, so
	// log.roll.ms, apart); maxCommits bounds it should the cleaner stall.
	const minCommits, minCleanerAdvances, maxCommits = 4000, 20, 200000
	tp := log.TopicPartition{Topic: controller.ConsumerOffsetsTopic, Partition: 0}
	offsetsLog := func() *log.Log { return tn.node.logs.Get(tp) }
	commit := func(at int64) {
		t.Helper()
		offsets := kadm.Offsets{}
		for p := int32(0); p < 10; p++ {
			offsets.Add(kadm.Offset{Topic: "work", Partition: p, At: at})
		}
		resp, err := adm.CommitOffsets(ctx, "g", offsets)
		if err != nil {
			t.Fatal(err)
		}
		if err := resp.Error(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	// Every commit appends one batch of the same ten records; the first
	// lands in the active segment, which nothing cleans.
	commits := int64(1)
	commit(commits)
	bytesPerCommit := float64(offsetsLog().Size())
	maxSize := int64(0)
	advances, lastCheckpoint := 0, int64(-1)
	for commits < minCommits || advances < minCleanerAdvances {
		if commits == maxCommits {
			t.Fatalf("%d commits, and the cleaner advanced over __consumer_offsets-0 only %d times", commits, advances)
		}
		commits++
		commit(commits)
		maxSize = max(maxSize, offsetsLog().Size())
		if off, ok := tn.node.logs.CleanerCheckpoint(tp); ok && off != lastCheckpoint {
			advances, lastCheckpoint = advances+1, off
		}
	}
	runCommits, runDuration := commits, time.Since(start)
	appended := bytesPerCommit * float64(runCommits)
	runEnd := offsetsLog().LogEndOffset()
	eventually(t, 20*time.Second, "the cleaner to pass the run's last commit", func() bool {
		commits++
		commit(commits)
		off, ok := tn.node.logs.CleanerCheckpoint(tp)
		return ok && off >= runEnd
	})
	if size := offsetsLog().Size(); float64(size) >= appended/10 {
		t.Fatalf("__consumer_offsets is %d bytes, cleaned past the last of %.0f bytes appended: not compacted", size, appended)
	}
	t.Logf("%d commits of 10 partitions in %v (%d cleaner advances): ~%.0f KB appended to __consumer_offsets-0; largest size during the run %d KB; "+
		"cleaned past the run's end to %d KB in %d segments after %d more commits",
		runCommits, runDuration, advances, appended/1024, maxSize/1024, offsetsLog().Size()/1024, offsetsLog().NumSegments(), commits-runCommits)
	if float64(maxSize) > appended/2 {
		t.Fatalf("__consumer_offsets grew to %d bytes of %.0f appended: not kept compacted", maxSize, appended)
	}
	tn.restart()
	fetched, err := tn.admin().FetchOffsets(testContext(t), "g")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 10; p++ {
		if o, ok := fetched.Lookup("work", p); !ok || o.At != commits {
			t.Fatalf("partition %d offset after restart %+v (found %v), want %d", p, o, ok, commits)
		}
	}
}
