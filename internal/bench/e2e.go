package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of an end-to-end run.
const (
	// DefaultDrainTimeout bounds the wait for records still in flight once
	// the producer has stopped.
	DefaultDrainTimeout = 10 * time.Second
	// warmUpTimeout bounds the wait for the consumer to see the producers'
	// warm-up records before the clock starts.
	warmUpTimeout = 30 * time.Second
	// e2eFetchMaxWait is the consumer's fetch.max.wait.ms: it only bounds
	// an idle long poll, since the broker answers as soon as a record
	// arrives (fetch.min.bytes 1).
	e2eFetchMaxWait = 500 * time.Millisecond
)

// EndToEndConfig describes an end-to-end latency run: a producer at a
// (usually fixed) rate and a consumer that starts at the topic's end, in
// one process. Latency runs from the moment a record is handed to the
// producer to the moment the consumer's poll returns it.
type EndToEndConfig struct {
	Produce ProduceConfig
	// DrainTimeout bounds the wait for the last records; default 10s.
	DrainTimeout time.Duration
}

// EndToEnd runs the producer and a consumer and returns the consumer's
// view: records and bytes received, and the produce-to-consume latency.
// Errors counts failed produces and fetch errors.
func EndToEnd(ctx context.Context, cfg EndToEndConfig) (Result, error) {
	pc := cfg.Produce
	pc.Timestamps = true
	progress, interval := pc.Progress, pc.ProgressInterval
	pc.Progress = nil
	if err := pc.validate(); err != nil {
		return Result{}, err
	}
	drain := cfg.DrainTimeout
	if drain <= 0 {
		drain = DefaultDrainTimeout
	}

	cl, err := newTailConsumer(ctx, &pc)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()

	consumed := newMeter()
	produced := newMeter()
	// measuredFromNs is the send time before which records are warm-up
	// records; the consumer counts only later ones.
	measuredFromNs := time.Now().Add(365 * 24 * time.Hour).UnixNano()
	warmSeen := make(chan struct{})
	measureStart := make(chan int64, 1)
	consumerDone := make(chan struct{})
	consumerCtx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	go func() {
		defer close(consumerDone)
		warm := 0
		for consumerCtx.Err() == nil {
			fetches := cl.PollFetches(consumerCtx)
			now := time.Now()
			select {
			case from := <-measureStart:
				measuredFromNs = from
			default:
			}
			fetches.EachError(func(_ string, _ int32, err error) {
				if !errors.Is(err, context.Canceled) {
					consumed.fail(err)
				}
			})
			fetches.EachRecord(func(r *kgo.Record) {
				if len(r.Value) < timestampBytes {
					return
				}
				sentNs := int64(binary.BigEndian.Uint64(r.Value))
				if sentNs < measuredFromNs {
					if warm++; warm == pc.Producers {
						close(warmSeen)
					}
					return
				}
				consumed.observe(now.Sub(time.Unix(0, sentNs)))
				consumed.add(1, int64(len(r.Key)+len(r.Value)))
			})
		}
	}()

	var waitReport func()
	reportCtx, stopReport := context.WithCancel(ctx)
	defer stopReport()
	started := func() {
		select {
		case <-warmSeen:
		case <-time.After(warmUpTimeout):
		case <-ctx.Done():
		}
		now := time.Now()
		measureStart <- now.UnixNano()
		consumed.begin()
		waitReport = consumed.report(reportCtx, interval, progress)
	}
	if err := produce(ctx, pc, produced, started); err != nil {
		return Result{}, err
	}
	deadline := time.Now().Add(drain)
	for ctx.Err() == nil && time.Now().Before(deadline) && consumed.records.Load() < produced.records.Load() {
		sleepContext(ctx, 5*time.Millisecond)
	}
	consumed.end()
	stopConsumer()
	<-consumerDone
	stopReport()
	if waitReport != nil {
		waitReport()
	}
	r := consumed.result()
	pr := produced.result()
	r.Errors += pr.Errors
	if r.FirstError == nil {
		r.FirstError = pr.FirstError
	}
	if missing := pr.Records - r.Records; missing > 0 && ctx.Err() == nil {
		r.Errors += missing
		if r.FirstError == nil {
			r.FirstError = fmt.Errorf("bench: %d acknowledged records not consumed within %s", missing, drain)
		}
	}
	return r, nil
}

// newTailConsumer returns a consumer positioned at the current end of every
// partition of the producer's topic.
func newTailConsumer(ctx context.Context, pc *ProduceConfig) (*kgo.Client, error) {
	admin, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(pc.Brokers...)}, pc.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("bench: create admin client: %w", err)
	}
	defer admin.Close()
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, pc.Topic)
	if err != nil {
		return nil, fmt.Errorf("bench: list end offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("bench: list end offsets: %w", err)
	}
	start := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		start[o.Partition] = kgo.NewOffset().At(o.Offset)
	})
	if len(start) == 0 {
		return nil, fmt.Errorf("bench: topic %q has no partitions", pc.Topic)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(pc.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{pc.Topic: start}),
		kgo.FetchMaxWait(e2eFetchMaxWait),
	}, pc.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("bench: create consumer: %w", err)
	}
	return cl, nil
}
