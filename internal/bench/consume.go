package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultIdleTimeout ends a consume run that has received nothing for this
// long, like kafka-consumer-perf-test's --timeout.
const DefaultIdleTimeout = 10 * time.Second

// ConsumeConfig describes a consumer load: read a topic from its log start.
// The run stops after Records records, after Duration, or after IdleTimeout
// with nothing received, whichever comes first.
type ConsumeConfig struct {
	Brokers    []string
	ClientOpts []kgo.Opt
	Topic      string

	Records     int64
	Duration    time.Duration
	IdleTimeout time.Duration

	FetchMaxBytes     int32
	PartitionMaxBytes int32
	FetchMaxWait      time.Duration

	// RawFetch issues Fetch requests directly and walks record batch
	// headers without decoding records, one request in flight per broker:
	// it measures what the broker serves rather than what the client can
	// decode. Bytes then count whole record batches.
	RawFetch bool

	ProgressInterval time.Duration
	Progress         func(Progress)
}

func (c *ConsumeConfig) validate() error {
	switch {
	case len(c.Brokers) == 0:
		return errors.New("bench: no brokers")
	case c.Topic == "":
		return errors.New("bench: no topic")
	case c.Records < 0 || c.Duration < 0 || c.IdleTimeout < 0:
		return errors.New("bench: record count, duration and idle timeout cannot be negative")
	case c.FetchMaxBytes < 0 || c.PartitionMaxBytes < 0 || c.FetchMaxWait < 0:
		return errors.New("bench: fetch limits cannot be negative")
	}
	return nil
}

func (c *ConsumeConfig) withDefaults() ConsumeConfig {
	out := *c
	if out.IdleTimeout == 0 {
		out.IdleTimeout = DefaultIdleTimeout
	}
	if out.FetchMaxBytes == 0 {
		out.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if out.PartitionMaxBytes == 0 {
		out.PartitionMaxBytes = DefaultPartitionMaxBytes
	}
	if out.FetchMaxWait == 0 {
		out.FetchMaxWait = DefaultFetchMaxWait
	}
	return out
}

// Consume reads the topic from the start and returns what it achieved. The
// clock runs from the first fetch to the last record received, so the idle
// wait at the end does not dilute the rate.
func Consume(ctx context.Context, cfg ConsumeConfig) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	if cfg.RawFetch {
		return consumeRaw(ctx, cfg)
	}
	return consumeClient(ctx, cfg)
}

func consumeClient(ctx context.Context, cfg ConsumeConfig) (Result, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(cfg.FetchMaxBytes),
		kgo.FetchMaxPartitionBytes(cfg.PartitionMaxBytes),
		kgo.FetchMaxWait(cfg.FetchMaxWait),
	}, cfg.ClientOpts...)...)
	if err != nil {
		return Result{}, fmt.Errorf("bench: create consumer: %w", err)
	}
	defer cl.Close()
	if err := warmUp(ctx, cl, cfg.Topic); err != nil {
		return Result{}, err
	}

	m := newMeter()
	m.begin()
	reportCtx, stopReport := context.WithCancel(ctx)
	defer stopReport()
	waitReport := m.report(reportCtx, cfg.ProgressInterval, cfg.Progress)
	lastRecord := time.Now()
	for ctx.Err() == nil && (cfg.Records == 0 || m.records.Load() < cfg.Records) {
		pollCtx, cancel := context.WithDeadline(ctx, lastRecord.Add(cfg.IdleTimeout))
		fetches := cl.PollFetches(pollCtx)
		cancel()
		var records, bytes int64
		fetches.EachRecord(func(r *kgo.Record) {
			records++
			bytes += int64(len(r.Key) + len(r.Value))
		})
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				m.fail(err)
			}
		})
		if records > 0 {
			lastRecord = time.Now()
			m.add(records, bytes)
		} else if time.Since(lastRecord) >= cfg.IdleTimeout {
			break
		}
	}
	m.endAt(lastRecord)
	stopReport()
	waitReport()
	return m.result(), nil
}

// warmUp makes the client fetch the topic's metadata and connect, and
// checks that the topic exists.
func warmUp(ctx context.Context, cl *kgo.Client, topic string) error {
	_, err := topicPartitions(ctx, cl, topic)
	return err
}

// partitionLeader is one partition of a topic and its leader.
type partitionLeader struct {
	partition int32
	leader    int32
}

// topicLayout is a topic's id and partitions.
type topicLayout struct {
	id         [16]byte
	partitions []partitionLeader
}

func topicPartitions(ctx context.Context, cl *kgo.Client, topic string) (topicLayout, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return topicLayout{}, fmt.Errorf("bench: metadata: %w", err)
	}
	if len(resp.Topics) != 1 {
		return topicLayout{}, fmt.Errorf("bench: metadata for %q returned %d topics", topic, len(resp.Topics))
	}
	t := resp.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		return topicLayout{}, fmt.Errorf("bench: topic %q: %w", topic, err)
	}
	layout := topicLayout{id: t.TopicID}
	for _, p := range t.Partitions {
		layout.partitions = append(layout.partitions, partitionLeader{partition: p.Partition, leader: p.Leader})
	}
	return layout, nil
}

// consumeRaw fetches every partition from its log start with one request in
// flight per leader, counting records from batch headers.
func consumeRaw(ctx context.Context, cfg ConsumeConfig) (Result, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)...)
	if err != nil {
		return Result{}, fmt.Errorf("bench: create consumer: %w", err)
	}
	defer cl.Close()
	layout, err := topicPartitions(ctx, cl, cfg.Topic)
	if err != nil {
		return Result{}, err
	}
	byLeader := map[int32][]int32{}
	for _, p := range layout.partitions {
		byLeader[p.leader] = append(byLeader[p.leader], p.partition)
	}

	m := newMeter()
	m.begin()
	reportCtx, stopReport := context.WithCancel(ctx)
	defer stopReport()
	waitReport := m.report(reportCtx, cfg.ProgressInterval, cfg.Progress)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var lastRecordNs atomic.Int64
	lastRecordNs.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	for leader, partitions := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := &rawFetcher{cfg: &cfg, broker: cl.Broker(int(leader)), layout: layout, meter: m, lastRecordNs: &lastRecordNs}
			f.run(runCtx, partitions)
			if cfg.Records > 0 && m.records.Load() >= cfg.Records {
				stopRun()
			}
		}()
	}
	wg.Wait()
	m.endAt(time.Unix(0, lastRecordNs.Load()))
	stopReport()
	waitReport()
	return m.result(), nil
}

// rawFetcher fetches one leader's partitions.
type rawFetcher struct {
	cfg          *ConsumeConfig
	broker       *kgo.Broker
	layout       topicLayout
	meter        *meter
	lastRecordNs *atomic.Int64
}

func (f *rawFetcher) run(ctx context.Context, partitions []int32) {
	offsets := make(map[int32]int64, len(partitions))
	for _, p := range partitions {
		offsets[p] = 0
	}
	for ctx.Err() == nil {
		if f.cfg.Records > 0 && f.meter.records.Load() >= f.cfg.Records {
			return
		}
		if time.Since(time.Unix(0, f.lastRecordNs.Load())) >= f.cfg.IdleTimeout {
			return
		}
		req := f.request(partitions, offsets)
		resp, err := req.RequestWith(ctx, f.broker)
		if err != nil {
			if ctx.Err() == nil {
				f.meter.fail(err)
				sleepContext(ctx, 100*time.Millisecond)
			}
			continue
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			f.meter.fail(err)
			sleepContext(ctx, 100*time.Millisecond)
			continue
		}
		f.absorb(resp, offsets)
	}
}

// request is a sessionless full fetch of every partition.
func (f *rawFetcher) request(partitions []int32, offsets map[int32]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(f.cfg.FetchMaxWait.Milliseconds())
	req.MinBytes = 1
	req.MaxBytes = f.cfg.FetchMaxBytes
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = f.cfg.Topic
	rt.TopicID = f.layout.id
	for _, p := range partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p
		rp.FetchOffset = offsets[p]
		rp.PartitionMaxBytes = f.cfg.PartitionMaxBytes
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func (f *rawFetcher) absorb(resp *kmsg.FetchResponse, offsets map[int32]int64) {
	var records, bytes int64
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			switch {
			case p.ErrorCode == kerr.OffsetOutOfRange.Code && p.LogStartOffset > offsets[p.Partition]:
				offsets[p.Partition] = p.LogStartOffset
				continue
			case p.ErrorCode != 0:
				f.meter.fail(kerr.ErrorForCode(p.ErrorCode))
				continue
			}
			next, n, size := walkBatches(p.RecordBatches)
			if n > 0 {
				offsets[p.Partition] = next
				records += n
				bytes += size
			}
		}
	}
	if records > 0 {
		f.lastRecordNs.Store(time.Now().UnixNano())
		f.meter.add(records, bytes)
	}
}

// Record batch v2 header fields used by walkBatches, as byte offsets.
const (
	batchLengthOffset     = 8  // int32: bytes after this field
	batchLastDeltaOffset  = 23 // int32: last offset delta
	batchRecordsOffset    = 57 // int32: number of records
	batchHeaderBytes      = 61
	batchLengthFieldBytes = 12 // base offset and length
)

// walkBatches reads the headers of the whole record batches in b and
// returns the offset after the last one, the records they hold and their
// size; a truncated batch at the end is ignored, as consumers do.
func walkBatches(b []byte) (next, records, size int64) {
	for len(b) >= batchHeaderBytes {
		total := batchLengthFieldBytes + int64(binary.BigEndian.Uint32(b[batchLengthOffset:]))
		if total > int64(len(b)) || total < batchHeaderBytes {
			break
		}
		base := int64(binary.BigEndian.Uint64(b))
		next = base + int64(int32(binary.BigEndian.Uint32(b[batchLastDeltaOffset:]))) + 1
		records += int64(int32(binary.BigEndian.Uint32(b[batchRecordsOffset:])))
		size += total
		b = b[total:]
	}
	return next, records, size
}
