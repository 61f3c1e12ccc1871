package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// Share group (m): shareRecords 1 KiB records are written to a topic of
// sharePartitions partitions, then shareConsumers franz-go share consumers
// (KIP-932) on one share group read them, each poll's records marked
// ACCEPT and sent with the consumer's next ShareFetch. The run ends when
// every record was delivered and the group's share-partition start offsets
// (DescribeShareGroupOffsets) reach the log end offsets on every partition,
// or their lag is 0 (Kafka's persisted start offset lags the records
// acknowledged above it): every record acknowledged.
// The figures are the records/s from the first record delivered to then,
// the records delivered more than once (a lock that timed out, records
// released by the broker), the acknowledgements the broker refused (one
// per partition and response), and the broker's CPU per GB delivered.
// There is no produce-to-acknowledgement latency: with the records written
// first, it would measure a record's place in the backlog, not the broker.
// kfake has no share groups, so (m) runs on Samsa and Kafka only.
const (
	sharePartitions = 6
	shareConsumers  = 3
	shareGroup      = "bench-share"
	// shareIdleTimeout bounds a run that stops making progress: no new
	// record delivered and no start offset moved for this long fails it.
	shareIdleTimeout = 30 * time.Second
	// shareCheckInterval is the pause between share-offset checks.
	shareCheckInterval = 50 * time.Millisecond
)

const (
	keyShareRedelivered = "share_redelivered"
	keyShareAckRefused  = "share_ack_refused"
)

func shareWorkloads(o *options) []workload {
	return []workload{
		{id: "m", title: fmt.Sprintf("share group: %d records of 1 KiB on %d partitions, %d kgo share consumers on one group ACCEPT each, not on kfake",
			o.shareRecords, sharePartitions, shareConsumers),
			noKfake: true, metrics: shareMetrics(), run: runShareGroup},
	}
}

func shareMetrics() []metric {
	return []metric{
		{key: keyRecords, label: "share consume and ACCEPT (records/s)", digits: 0},
		{key: keyMBps, label: "share consume and ACCEPT (MB/s)", limit: limitLoopback, digits: 1},
		{key: keyShareRedelivered, label: "records delivered more than once", lowerIsBetter: true, digits: 0},
		{key: keyShareAckRefused, label: "acknowledgements refused (partition results)", lowerIsBetter: true, digits: 0},
		{key: keyCPUPerGB, label: "broker CPU, share consume (s/GB out)", lowerIsBetter: true, digits: 2},
	}
}

// shareTally counts deliveries and acknowledgement results across the
// consumers.
type shareTally struct {
	mu struct {
		sync.Mutex
		// deliveries is the number of times each record (by partition
		// and offset) was delivered to any consumer.
		deliveries map[sharedRecord]int
		// redelivered counts the records delivered more than once,
		// seen either here or in the broker's delivery count.
		redelivered int
		// bytes are the value bytes of the distinct records delivered.
		bytes int64
		// first is when the first record was delivered; progress when
		// a record was last delivered for the first time.
		first, progress time.Time
		// ackRefused counts partition results with an error; ackErr is
		// the first of them.
		ackRefused int
		ackErr     error
	}
}

type sharedRecord struct {
	partition int32
	offset    int64
}

func (t *shareTally) add(records []*kgo.Record, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.first.IsZero() && len(records) > 0 {
		t.mu.first = now
	}
	for _, r := range records {
		key := sharedRecord{r.Partition, r.Offset}
		n := t.mu.deliveries[key] + 1
		t.mu.deliveries[key] = n
		switch {
		case n == 1:
			t.mu.bytes += int64(len(r.Value))
			t.mu.progress = now
			if r.DeliveryCount() > 1 {
				t.mu.redelivered++
			}
		case n == 2 && r.DeliveryCount() <= 1:
			t.mu.redelivered++
		}
	}
}

func (t *shareTally) acknowledged(results kgo.ShareAckResults) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range results {
		if r.Err != nil {
			t.mu.ackRefused++
			if t.mu.ackErr == nil {
				t.mu.ackErr = r.Err
			}
		}
	}
}

func runShareGroup(ctx context.Context, env *runEnv) (sample, error) {
	const topic = "bench-share"
	if err := createTopic(ctx, env, topic, sharePartitions); err != nil {
		return nil, err
	}
	spec := produceSpec{recordBytes: 1024, acks: 1, partitions: sharePartitions, producers: 1}
	pc := spec.config(env, topic)
	pc.Duration = 0
	pc.Records = max(int64(env.opts.shareRecords)-1, 1)
	pc.Progress = nil
	written, err := bench.Produce(ctx, pc)
	if err != nil {
		return nil, err
	}
	if err := resultError(written); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	admin, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(env.broker.addr)}, env.clientOpts...)...)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	// The warm-up record is in the log too.
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if err := setShareEarliest(ctx, admin); err != nil {
		return nil, fmt.Errorf("set share.auto.offset.reset: %w", err)
	}

	tally := &shareTally{}
	tally.mu.deliveries = make(map[sharedRecord]int, total)
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	clients := make([]*kgo.Client, 0, shareConsumers)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for range shareConsumers {
		c, err := kgo.NewClient(append([]kgo.Opt{
			kgo.SeedBrokers(env.broker.addr), kgo.ShareGroup(shareGroup), kgo.ConsumeTopics(topic),
			kgo.FetchMaxWait(500 * time.Millisecond),
			kgo.ShareAckCallback(func(_ *kgo.Client, results kgo.ShareAckResults) { tally.acknowledged(results) }),
		}, env.clientOpts...)...)
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				fetches := c.PollRecords(runCtx, 1000)
				tally.add(fetches.Records(), time.Now())
				// ACCEPT everything this poll returned; the acknowledgements
				// ride on the next ShareFetch.
				c.MarkAcks(kgo.AckAccept)
			}
		}()
	}
	acknowledged, err := waitShareAcknowledged(ctx, adm, tally, topic, ends, total)
	if err != nil {
		return nil, err
	}
	tally.mu.Lock()
	first, bytes, redelivered, refused := tally.mu.first, tally.mu.bytes, tally.mu.redelivered, tally.mu.ackRefused
	tally.mu.Unlock()
	elapsed := acknowledged.Sub(first).Seconds()
	if elapsed <= 0 {
		return nil, errors.New("no time elapsed")
	}
	s := sample{
		recordsKey: float64(total), keyRecords: float64(total) / elapsed, keyMBps: float64(bytes) / 1e6 / elapsed,
		keyShareRedelivered: float64(redelivered), keyShareAckRefused: float64(refused),
	}
	cpu, _, err := p.end()
	if err != nil {
		return nil, err
	}
	s[keyCPUPerGB] = cpuPerGB(cpu, bytes)
	return s, nil
}

// shareOffsetLookup is the group's start offset of topic's partition, if
// described has it.
func shareOffsetLookup(described kadm.DescribedShareGroupsOffsets, topic string, partition int32) (kadm.ShareOffset, bool) {
	group, ok := described[shareGroup]
	if !ok || group.Err != nil {
		return kadm.ShareOffset{}, false
	}
	return group.Offsets.Lookup(topic, partition)
}

// shareWaitable reports whether err, from DescribeShareGroupOffsets, only
// means "not yet".
func shareWaitable(err error) bool {
	for _, wait := range []error{kerr.GroupIDNotFound, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress, kerr.NotCoordinator} {
		if errors.Is(err, wait) {
			return true
		}
	}
	return false
}

// waitShareAcknowledged polls the group's share-partition start offsets
// until every one of the total records was delivered and each start
// offset reaches its partition's end offset (or, as Kafka reports it, the
// share-partition lag is 0), and returns when it saw that. It fails when neither a new record is delivered nor a start offset
// moves for shareIdleTimeout.
func waitShareAcknowledged(ctx context.Context, adm *kadm.Client, tally *shareTally, topic string, ends kadm.ListedOffsets, total int64) (time.Time, error) {
	var lastSum int64 = -1
	moved := time.Now()
	for {
		described, err := adm.DescribeShareGroupOffsets(ctx, shareGroup)
		if err == nil {
			err = described.Error()
		}
		// The group exists once the first consumer's heartbeat joined it,
		// and a coordinator may still be loading its state.
		if err != nil && !shareWaitable(err) {
			return time.Time{}, fmt.Errorf("describe share offsets: %w", err)
		}
		now := time.Now()
		tally.mu.Lock()
		progress, delivered, ackErr := tally.mu.progress, int64(len(tally.mu.deliveries)), tally.mu.ackErr
		tally.mu.Unlock()
		done, sum := delivered >= total, int64(0)
		ends.Each(func(end kadm.ListedOffset) {
			// Kafka keeps the start offset it persisted below records
			// acknowledged since, and reports their lag (KIP-1226) as 0.
			o, ok := shareOffsetLookup(described, topic, end.Partition)
			if !ok || o.Err != nil || (o.StartOffset < end.Offset && o.Lag != 0) {
				done = false
			}
			if ok && o.Err == nil {
				sum += o.StartOffset
			}
		})
		if done {
			return now, nil
		}
		if sum != lastSum {
			lastSum, moved = sum, now
		}
		if progress.After(moved) {
			moved = progress
		}
		if now.Sub(moved) > shareIdleTimeout {
			return time.Time{}, fmt.Errorf("%d distinct records delivered, share-partition start offsets at %d in all, nothing moved for %s (first refused acknowledgement: %v)",
				delivered, sum, shareIdleTimeout, ackErr)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(shareCheckInterval):
		}
	}
}

// setShareEarliest sets the group config share.auto.offset.reset=earliest
// on shareGroup: its default, latest, would start the share-partitions
// after the records already written.
func setShareEarliest(ctx context.Context, client *kgo.Client) error {
	value := "earliest"
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	resource := kmsg.NewIncrementalAlterConfigsRequestResource()
	resource.ResourceType, resource.ResourceName = kmsg.ConfigResourceTypeGroupConfig, shareGroup
	resource.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "share.auto.offset.reset", Op: kmsg.IncrementalAlterConfigOpSet, Value: &value}}
	req.Resources = append(req.Resources, resource)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}
