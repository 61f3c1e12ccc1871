package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// Request flood (the second half of k): a flooding tenant,
// requestFloodClients franz-go clients of client id "flooder" with
// requestFloodPerClient goroutines each, sends Metadata and ListOffsets
// requests back to back; any error ends the run. A polite client sends a
// Metadata request every requestProbeInterval, and its round-trip latency
// is measured alone, beside the unthrottled flood, and beside the flood
// under a request_percentage of requestQuotaPercent (percent of one
// handler thread), in the same run as the producers' phases. The flood
// warms up for noisyWarmUp in each shared phase, as the noisy producers
// do: a fresh quota bucket first allows a whole span's share at once.
const (
	requestFloodClients   = 8
	requestFloodPerClient = 2
	requestQuotaPercent   = 2
	// requestProbeInterval paces the polite client: 200 requests a second,
	// each timed from when it was due, so a request held up behind a slow
	// one counts its wait too.
	requestProbeInterval = 5 * time.Millisecond
	// requestFloodTopic is the topic the ListOffsets requests ask about.
	requestFloodTopic = "steady"
)

func requestFloodMetrics() []metric {
	return []metric{
		{key: "rq_alone_p50_ms", label: "polite client Metadata round trip p50, alone (ms)", lowerIsBetter: true, digits: 2},
		{key: "rq_alone_p99_ms", label: "polite client Metadata round trip p99, alone (ms)", lowerIsBetter: true, digits: 2},
		{key: "rq_flood_p50_ms", label: "polite client Metadata round trip p50, request flood unthrottled (ms)", lowerIsBetter: true, digits: 2},
		{key: "rq_flood_p99_ms", label: "polite client Metadata round trip p99, request flood unthrottled (ms)", lowerIsBetter: true, digits: 2},
		{key: "rq_quota_p50_ms", label: fmt.Sprintf("polite client Metadata round trip p50, request flood under request_percentage=%d (ms)", requestQuotaPercent), lowerIsBetter: true, digits: 2},
		{key: "rq_quota_p99_ms", label: fmt.Sprintf("polite client Metadata round trip p99, request flood under request_percentage=%d (ms)", requestQuotaPercent), lowerIsBetter: true, digits: 2},
		{key: "rq_flood_rps", label: "flooding tenant, unthrottled (requests/s)", digits: 0},
		{key: "rq_quota_rps", label: fmt.Sprintf("flooding tenant under request_percentage=%d (requests/s)", requestQuotaPercent), digits: 0},
		{key: "rq_flood_rss_mb", label: "broker peak RSS, request flood unthrottled (MB)", lowerIsBetter: true, digits: 0},
		{key: "rq_quota_rss_mb", label: "broker peak RSS, request flood under quota (MB)", lowerIsBetter: true, digits: 0},
	}
}

// runRequestFlood adds the request flood's figures to s; a target that
// refuses the quota leaves the quota phase out. check is told each phase's
// peak RSS and may fail it.
func runRequestFlood(ctx context.Context, env *runEnv, s sample, check func(phase string, rssMB float64) error) error {
	probe, err := newRequestProber(ctx, env)
	if err != nil {
		return err
	}
	defer probe.close()
	alone, err := probe.run(ctx, env.opts.duration)
	if err != nil {
		return fmt.Errorf("polite client alone: %w", err)
	}
	s["rq_alone_p50_ms"] = ms(alone.P50)
	s["rq_alone_p99_ms"] = ms(alone.P99)
	shared := func(phase string) error {
		p, err := beginPhase(env)
		if err != nil {
			return err
		}
		floodCtx, stopFlood := context.WithCancel(ctx)
		defer stopFlood()
		flooder, err := startFlood(floodCtx, env)
		if err != nil {
			return fmt.Errorf("%s: %w", phase, err)
		}
		select {
		case <-time.After(noisyWarmUp):
		case <-ctx.Done():
		}
		before := flooder.requests.Load()
		start := time.Now()
		latency, err := probe.run(ctx, env.opts.duration)
		flooded := flooder.requests.Load() - before
		elapsed := time.Since(start)
		stopFlood()
		if floodErr := flooder.wait(); err == nil {
			err = floodErr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", phase, err)
		}
		_, rss, err := p.end()
		if err != nil {
			return err
		}
		s["rq_"+phase+"_p50_ms"] = ms(latency.P50)
		s["rq_"+phase+"_p99_ms"] = ms(latency.P99)
		s["rq_"+phase+"_rps"] = float64(flooded) / elapsed.Seconds()
		s["rq_"+phase+"_rss_mb"] = rss
		return check("request flood "+phase, rss)
	}
	if err := shared("flood"); err != nil {
		return err
	}
	if err := setClientQuota(ctx, env.broker.addr, "flooder", "request_percentage", requestQuotaPercent); err != nil {
		if env.log != nil {
			fmt.Fprintf(env.log, "  no request quota phase: %v\n", err)
		}
		return nil
	}
	return shared("quota")
}

// flood is the flooding tenant at work.
type flood struct {
	clients  []*kgo.Client
	requests atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
}

// startFlood starts the flooding tenant; it runs until ctx ends or a
// request fails.
func startFlood(ctx context.Context, env *runEnv) (*flood, error) {
	f := &flood{}
	for range requestFloodClients {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(env.broker.addr), kgo.ClientID("flooder")}, env.clientOpts...)...)
		if err != nil {
			f.wait() // nothing runs yet: it closes the clients made
			return nil, err
		}
		f.clients = append(f.clients, cl)
	}
	for _, cl := range f.clients {
		for range requestFloodPerClient {
			f.wg.Add(1)
			go f.run(ctx, cl)
		}
	}
	return f, nil
}

func (f *flood) run(ctx context.Context, cl *kgo.Client) {
	defer f.wg.Done()
	for i := 0; ctx.Err() == nil; i++ {
		var err error
		if i%2 == 0 {
			_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		} else {
			err = listLatestOffset(ctx, cl)
		}
		if err != nil {
			if ctx.Err() == nil {
				f.mu.Lock()
				f.err = errors.Join(f.err, err)
				f.mu.Unlock()
			}
			return
		}
		f.requests.Add(1)
	}
}

// wait waits for the flood to stop and returns its first failures.
func (f *flood) wait() error {
	f.wg.Wait()
	for _, cl := range f.clients {
		cl.Close()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return fmt.Errorf("flooding tenant: %w", f.err)
	}
	return nil
}

// listLatestOffset asks for the end offset of requestFloodTopic's
// partition 0.
func listLatestOffset(ctx context.Context, cl *kgo.Client) error {
	req := kmsg.NewPtrListOffsetsRequest()
	topic := kmsg.NewListOffsetsRequestTopic()
	topic.Topic = requestFloodTopic
	partition := kmsg.NewListOffsetsRequestTopicPartition()
	partition.Timestamp = -1
	topic.Partitions = append(topic.Partitions, partition)
	req.Topics = append(req.Topics, topic)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("ListOffsets %s[%d]: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// requestProber is the polite client.
type requestProber struct {
	cl     *kgo.Client
	broker *kgo.Broker
}

func newRequestProber(ctx context.Context, env *runEnv) (*requestProber, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(env.broker.addr), kgo.ClientID("polite")}, env.clientOpts...)...)
	if err != nil {
		return nil, err
	}
	// Round trips to the broker itself, not through franz-go's metadata
	// handling.
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err == nil && len(meta.Brokers) == 0 {
		err = errors.New("metadata names no broker")
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	return &requestProber{cl: cl, broker: cl.Broker(int(meta.Brokers[0].NodeID))}, nil
}

func (p *requestProber) close() { p.cl.Close() }

// run sends a Metadata request every requestProbeInterval for d and
// digests their latencies, each from when it was due. A prober that has
// fallen 2d behind stops sending; the requests it did not send count with
// the latency they already had, a lower bound.
func (p *requestProber) run(ctx context.Context, d time.Duration) (bench.LatencySummary, error) {
	var h bench.Histogram
	start := time.Now()
	for due := start; due.Sub(start) < d; due = due.Add(requestProbeInterval) {
		if time.Since(start) > 3*d {
			h.Record(time.Since(due))
			continue
		}
		if wait := time.Until(due); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return h.Summary(), ctx.Err()
			}
		}
		if _, err := p.broker.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil {
			return h.Summary(), fmt.Errorf("polite client: %w", err)
		}
		h.Record(time.Since(due))
	}
	if h.Count() == 0 {
		return h.Summary(), errors.New("polite client: no request answered")
	}
	return h.Summary(), nil
}

// setClientQuota sets one quota for a client id.
func setClientQuota(ctx context.Context, addr, clientID, key string, value float64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	altered, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &clientID}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: key, Value: value}},
	}})
	if err != nil {
		return err
	}
	for _, a := range altered {
		if a.Err != nil {
			return fmt.Errorf("%w: %s", a.Err, a.ErrMessage)
		}
	}
	return nil
}
