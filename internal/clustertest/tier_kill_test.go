package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/blob/blobtest"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// ackedRecords collects what the brokers acknowledged: offset by key.
type ackedRecords struct {
	mu    sync.Mutex
	byKey map[string]int64
	err   error
}

func (a *ackedRecords) promise(r *kgo.Record, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if a.err == nil {
			a.err = err
		}
		return
	}
	a.byKey[string(r.Key)] = r.Offset
}

func (a *ackedRecords) firstErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *ackedRecords) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byKey)
}

// inProgressUploads lists the upload directories under prefix with a
// copy-started marker and no copy-finished one.
func inProgressUploads(ctx context.Context, bucket blob.Bucket, prefix string) (map[string]bool, error) {
	started, finished := map[string]bool{}, map[string]bool{}
	err := bucket.List(ctx, prefix, func(o blob.ObjectInfo) error {
		dir, name := o.Key[:strings.LastIndexByte(o.Key, '/')+1], o.Key[strings.LastIndexByte(o.Key, '/')+1:]
		switch name {
		case "copy-started.meta":
			started[dir] = true
		case "copy-finished.meta":
			finished[dir] = true
		}
		return nil
	})
	for dir := range finished {
		delete(started, dir)
	}
	return started, err
}

// TestTieredLeaderKilledMidUpload SIGKILLs the leader of a tiered partition
// (replication factor 3, on moto) while it uploads a segment, caught
// between the upload's copy-started marker and its copy-finished one, as
// a producer keeps writing. The leader's successor copies on, the killed
// node comes back, and once copying caught up: the cut upload is never
// served and is collected, no segment is copied twice, the served
// segments are contiguous from offset 0 with every object of the size
// their metadata says, and with local retention made small a consumer from
// offset 0 reads every acknowledged record exactly once at its offset.
func TestTieredLeaderKilledMidUpload(t *testing.T) {
	moto := blobtest.StartMoto(t)
	url := moto.CreateBucket("killed")
	c := StartCluster(t, 3, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+url,
		"remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200",
		"broker.session.timeout.ms=1000", "broker.heartbeat.interval.ms=100")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const topic = "killed"
	admCl := newClient(t, c.Addrs())
	adm := kadm.NewClient(admCl)
	// 8 MiB segments, so an upload takes long enough to be caught.
	configs := map[string]*string{"remote.storage.enable": kadm.StringPtr("true"), "segment.bytes": kadm.StringPtr("8388608"),
		"min.insync.replicas": kadm.StringPtr("2")}
	WaitFor(t, 30*time.Second, func() error {
		resp, err := adm.CreateTopic(ctx, 1, 3, configs, topic)
		if err != nil {
			return err
		}
		return resp.Err
	})
	waitFullISR(t, c, topic, 30*time.Second)
	topicID, err := topicIDOf(ctx, admCl, topic)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	store := tier.NewStore(tier.StoreConfig{Bucket: bucket})
	part := tier.Partition{TopicID: topicID, Partition: 0}
	prefix := store.PartitionPrefix(part)

	// An idempotent acks=all producer writes until told to stop; what the
	// brokers acknowledge is what must survive.
	acked := &ackedRecords{byKey: map[string]int64{}}
	producer := newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(2000))
	stop := make(chan struct{})
	produced := make(chan struct{})
	value := bytes.Repeat([]byte("k"), 4000)
	go func() {
		defer close(produced)
		// About 4 MB/s: a segment every two seconds or so.
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for range 50 {
				producer.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}, acked.promise)
				i++
			}
		}
	}()
	stopProducing := func() {
		select {
		case <-stop:
			return
		default:
		}
		close(stop)
		<-produced
		if err := producer.Flush(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
	}
	defer stopProducing()

	leaderOf := func() (int32, error) {
		for _, n := range c.Nodes {
			st, err := replicaStateOf(ctx, n.Addr(), topic, 0)
			if err == nil && st.leader > 0 {
				return st.leader, nil
			}
		}
		return -1, fmt.Errorf("no leader of %s-0", topic)
	}
	// The leader's successor is to go on from the killed leader's
	// uploads: one is finished first.
	WaitFor(t, 60*time.Second, func() error {
		uploads, err := store.ListUploads(ctx, part)
		if err != nil {
			return err
		}
		if view := tier.BuildView(uploads, nil); len(view.Segments) == 0 {
			return fmt.Errorf("no finished upload")
		}
		return nil
	})
	// Catch an upload in progress and SIGKILL the leader making it; when
	// the upload finished before the kill landed, bring the node back
	// and try the next segment.
	var killed *Node
	var cut string
	known := map[string]bool{}
	const attempts = 4
	for attempt := 1; attempt <= attempts && cut == ""; attempt++ {
		var leader int32
		WaitFor(t, 30*time.Second, func() error {
			var err error
			leader, err = leaderOf()
			return err
		})
		var dir string
		WaitFor(t, 60*time.Second, func() error {
			if err := acked.firstErr(); err != nil {
				return errStopWaiting{fmt.Errorf("produce: %w", err)}
			}
			open, err := inProgressUploads(ctx, bucket, prefix)
			if err != nil {
				return err
			}
			for d := range open {
				if !known[d] {
					dir = d
					return nil
				}
			}
			return fmt.Errorf("no upload in progress by leader %d", leader)
		})
		known[dir] = true
		node := c.Nodes[leader-1]
		node.Kill()
		WaitFor(t, 30*time.Second, func() error {
			l, err := leaderOf()
			if err == nil && l == leader {
				err = fmt.Errorf("node %d still leads", l)
			}
			return err
		})
		// The dead node wrote nothing more; a request it had fully sent is
		// answered by now.
		open, err := inProgressUploads(ctx, bucket, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if open[dir] {
			cut, killed = dir, node
			t.Logf("attempt %d: node %d killed mid-upload of %s", attempt, leader, strings.TrimPrefix(dir, prefix))
			break
		}
		t.Logf("attempt %d: the upload of %s finished before node %d was killed", attempt, strings.TrimPrefix(dir, prefix), leader)
		node.Start()
		waitFullISR(t, c, topic, 60*time.Second)
	}
	if cut == "" {
		t.Fatalf("no leader killed mid-upload in %d attempts", attempts)
	}

	// Writing goes on through the new leader, then the killed node is back.
	ackedAtKill := acked.count()
	WaitFor(t, 60*time.Second, func() error {
		if err := acked.firstErr(); err != nil {
			return errStopWaiting{fmt.Errorf("produce after the kill: %w", err)}
		}
		if n := acked.count(); n < ackedAtKill+1000 {
			return fmt.Errorf("%d records acknowledged since the kill", n-ackedAtKill)
		}
		return nil
	})
	killed.Start()
	waitFullISR(t, c, topic, 60*time.Second)
	stopProducing()
	if err := acked.firstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	total := acked.count()

	// Copying catches up with the leader's closed segments, and the cut
	// upload is collected as an orphan.
	leader, err := leaderOf()
	if err != nil {
		t.Fatal(err)
	}
	var view tier.RemoteView
	WaitFor(t, 60*time.Second, func() error {
		bases, err := localSegmentBases(filepath.Join(c.Nodes[leader-1].Dir, "data", topic+"-0"))
		if err != nil {
			return err
		}
		uploads, err := store.ListUploads(ctx, part)
		if err != nil {
			return err
		}
		view = tier.BuildView(uploads, nil)
		if len(bases) < 2 || view.EndOffset() < bases[len(bases)-1]-1 {
			return fmt.Errorf("remote end %d, leader %d's local segments start at %v", view.EndOffset(), leader, bases)
		}
		for _, u := range uploads {
			if u.Dir == cut {
				return fmt.Errorf("the cut upload %s is not collected yet", strings.TrimPrefix(cut, prefix))
			}
		}
		return nil
	})

	// No segment is copied twice and every finished upload serves some
	// offsets (a new leader whose segments rolled elsewhere may copy one
	// that starts inside an older upload, which keeps serving the offsets
	// before it), and the served segments follow each other from offset 0
	// with their objects whole.
	WaitFor(t, 30*time.Second, func() error {
		uploads, err := store.ListUploads(ctx, part)
		if err != nil {
			return err
		}
		var finished []tier.SegmentMetadata
		for _, u := range uploads {
			if u.Finished && !u.DeleteStarted {
				finished = append(finished, u.Metadata)
			}
		}
		for i := 1; i < len(finished); i++ {
			if a, b := finished[i-1], finished[i]; b.BaseOffset == a.BaseOffset {
				return fmt.Errorf("finished uploads [%d, %d] (epoch %d) and [%d, %d] (epoch %d) copy one segment twice",
					a.BaseOffset, a.EndOffset, a.LeaderEpoch, b.BaseOffset, b.EndOffset, b.LeaderEpoch)
			}
		}
		if unreferenced := tier.BuildView(uploads, nil).Unreferenced; len(unreferenced) != 0 {
			return fmt.Errorf("%d finished uploads serve no offset and are not collected yet", len(unreferenced))
		}
		return nil
	})
	uploads, err := store.ListUploads(ctx, part)
	if err != nil {
		t.Fatal(err)
	}
	view = tier.BuildView(uploads, nil)
	next := int64(0)
	for _, m := range view.Segments {
		if m.BaseOffset != next {
			t.Fatalf("remote segments %v: offsets %d to %d are in no served segment", segmentRanges(view), next, m.BaseOffset-1)
		}
		next = m.EndOffset + 1
		sizes := map[string]int64{}
		if err := bucket.List(ctx, store.SegmentDir(&m), func(o blob.ObjectInfo) error {
			sizes[o.Key[strings.LastIndexByte(o.Key, '/')+1:]] = o.Size
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got := sizes[tier.FileSegment.ObjectName()]; got != m.SegmentSizeBytes || got == 0 {
			t.Fatalf("segment [%d, %d]: %s is %d bytes, its metadata says %d", m.BaseOffset, m.EndOffset, tier.FileSegment.ObjectName(), got, m.SegmentSizeBytes)
		}
		for _, f := range m.Files {
			if got, ok := sizes[f.Kind.ObjectName()]; !ok || got != f.Size {
				t.Fatalf("segment [%d, %d]: %s is %d bytes (present %v), its metadata says %d", m.BaseOffset, m.EndOffset, f.Kind.ObjectName(), got, ok, f.Size)
			}
		}
	}

	// With local retention small, every replica keeps its active segment
	// only, and the old records come from the bucket.
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "local.retention.bytes", Value: kadm.StringPtr("1")}}, topic)
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter local.retention.bytes: %v %v", err, resp)
	}
	WaitFor(t, 60*time.Second, func() error {
		localStart, err := listOffsetAt(ctx, c.Nodes[leader-1].Addr(), topic, -4)
		if err != nil {
			return err
		}
		if localStart <= view.EndOffset() {
			return fmt.Errorf("leader %d's local start %d", leader, localStart)
		}
		return nil
	})
	end, err := listOffsetAt(ctx, c.Nodes[leader-1].Addr(), topic, -1)
	if err != nil {
		t.Fatal(err)
	}

	consumer := newClient(t, c.Addrs(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	readCtx, cancelRead := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRead()
	seen := map[string]int64{}
	for offset := int64(0); offset < end; {
		fetches := consumer.PollFetches(readCtx)
		if readCtx.Err() != nil {
			t.Fatalf("consumed up to offset %d of %d", offset, end)
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			t.Fatalf("fetch %s-%d at %d: %v", topic, partition, offset, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != offset {
				t.Fatalf("record at offset %d, want %d", r.Offset, offset)
			}
			if at, dup := seen[string(r.Key)]; dup {
				t.Fatalf("key %s at offsets %d and %d", r.Key, at, r.Offset)
			}
			seen[string(r.Key)] = r.Offset
			offset++
		})
	}
	acked.mu.Lock()
	defer acked.mu.Unlock()
	for key, offset := range acked.byKey {
		if got, ok := seen[key]; !ok || got != offset {
			t.Fatalf("acknowledged record %s at offset %d: read at %d (read %v)", key, offset, got, ok)
		}
	}
	t.Logf("%d records acknowledged, %d read up to offset %d, remote segments %s", total, len(seen), end, segmentRanges(view))
}

// localSegmentBases returns the base offsets of the segments in a
// partition directory, ascending.
func localSegmentBases(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bases []int64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		base, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			continue
		}
		bases = append(bases, base)
	}
	slices.Sort(bases)
	return bases, nil
}

// segmentRanges renders a view's segments' offsets.
func segmentRanges(view tier.RemoteView) string {
	var parts []string
	for _, m := range view.Segments {
		parts = append(parts, fmt.Sprintf("[%d, %d] epoch %d", m.BaseOffset, m.EndOffset, m.LeaderEpoch))
	}
	return strings.Join(parts, " ")
}
