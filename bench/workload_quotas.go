package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// Noisy neighbour (k): a steady tenant produces 1 KiB records at
// noisySteadyMBps while a noisy tenant, four producers, produces as fast as
// it can. The steady tenant's ack latency p99 is measured alone, beside
// the noisy tenant unthrottled, and beside it under a producer_byte_rate
// of noisyQuotaMBps, in one run on one broker. In each shared phase the
// noisy tenant runs for noisyWarmUp first: a fresh quota bucket lets a
// client take a whole quota span's allowance (quota.window.num - 1
// windows) at once, as in Kafka, and the figure wanted is the quota's
// steady state. The request
// flood (workload_request_quota.go) follows in the same run.
//
// The broker's peak RSS is reported for every phase, and on Samsa, which
// runs (k) with queued.max.request.bytes set, a phase whose peak RSS passes
// noisyRSSMaxMB fails the run: the "the node's RSS stays bounded"
// is checked, not only shown.
const (
	noisySteadyMBps = 5
	noisyQuotaMBps  = 10
	noisyWarmUp     = 11 * time.Second
	// noisyBufferBytes bounds each noisy producer's buffer, so its backlog
	// drains soon after its run under the quota.
	noisyBufferBytes = 4 << 20
	// noisyQueuedMaxRequestBytes is Samsa's queued.max.request.bytes in
	// (k): the least Kafka accepts with the default socket.request.max.bytes.
	noisyQueuedMaxRequestBytes = 104857600
	// noisyRSSMaxMB bounds Samsa's peak RSS in every phase of (k): several
	// times what it takes (about 140 MB), far below what an unbounded
	// backlog of noisy requests would reach.
	noisyRSSMaxMB = 1024
)

func quotaWorkloads() []workload {
	return []workload{{
		id: "k", title: fmt.Sprintf("noisy neighbour: a tenant at %d MB/s beside one producing as fast as it can, without and with a %d MB/s producer_byte_rate; then a client's Metadata round trips beside a Metadata and ListOffsets flood, without and with request_percentage=%d", noisySteadyMBps, noisyQuotaMBps, requestQuotaPercent),
		samsaOverrides: []string{fmt.Sprintf("queued.max.request.bytes=%d", noisyQueuedMaxRequestBytes)},
		metrics: append([]metric{
			{key: "nn_alone_p99_ms", label: "steady tenant ack p99, alone (ms)", lowerIsBetter: true, digits: 2},
			{key: "nn_noisy_p99_ms", label: "steady tenant ack p99, noisy tenant unthrottled (ms)", lowerIsBetter: true, digits: 2},
			{key: "nn_quota_p99_ms", label: "steady tenant ack p99, noisy tenant under quota (ms)", lowerIsBetter: true, digits: 2},
			{key: "nn_noisy_mbps", label: "noisy tenant over its run, warm-up included, unthrottled (MB/s)", digits: 1},
			{key: "nn_quota_mbps", label: "noisy tenant over its run, warm-up included, under quota (MB/s)", digits: 1},
			{key: "nn_alone_rss_mb", label: "broker peak RSS, steady tenant alone (MB)", lowerIsBetter: true, digits: 0},
			{key: "nn_noisy_rss_mb", label: "broker peak RSS, noisy tenant unthrottled (MB)", lowerIsBetter: true, digits: 0},
			{key: "nn_quota_rss_mb", label: "broker peak RSS, noisy tenant under quota (MB)", lowerIsBetter: true, digits: 0},
		}, requestFloodMetrics()...),
		run: runNoisyNeighbour,
	}}
}

func runNoisyNeighbour(ctx context.Context, env *runEnv) (sample, error) {
	for _, topic := range []string{"steady", "noisy"} {
		if err := createTopic(ctx, env, topic, 12); err != nil {
			return nil, err
		}
	}
	spec := produceSpec{recordBytes: 1024, acks: 1, producers: 1}
	steady := spec.config(env, "steady")
	steady.ClientOpts = []kgo.Opt{kgo.ClientID("steady")}
	steady.RecordsPerSecond = noisySteadyMBps * 1e6 / 1024
	noisy := spec.config(env, "noisy")
	noisy.ClientOpts = []kgo.Opt{kgo.ClientID("noisy")}
	noisy.Producers = 4
	noisy.Progress = nil
	noisy.Duration = env.opts.duration + noisyWarmUp
	noisy.BufferBytes = noisyBufferBytes

	// checkRSS fails a phase whose peak RSS shows Samsa's memory unbounded.
	checkRSS := func(phase string, rssMB float64) error {
		if env.broker.role == roleSamsa && rssMB > noisyRSSMaxMB {
			return fmt.Errorf("%s: broker peak RSS %.0f MB, over the %d MB bound", phase, rssMB, noisyRSSMaxMB)
		}
		return nil
	}
	s := sample{}
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	alone, err := bench.Produce(ctx, steady)
	if err == nil {
		err = resultError(alone)
	}
	if err != nil {
		return nil, fmt.Errorf("steady tenant alone: %w", err)
	}
	_, aloneRSS, err := p.end()
	if err != nil {
		return nil, err
	}
	s[recordsKey] = float64(alone.Records)
	s["nn_alone_p99_ms"] = ms(alone.Latency.P99)
	s["nn_alone_rss_mb"] = aloneRSS
	if err := checkRSS("steady tenant alone", aloneRSS); err != nil {
		return nil, err
	}
	shared := func(phase string) error {
		p, err := beginPhase(env)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		var noisyResult bench.Result
		var noisyErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			noisyResult, noisyErr = bench.Produce(ctx, noisy)
		}()
		select {
		case <-time.After(noisyWarmUp):
		case <-ctx.Done():
		}
		steadyResult, err := bench.Produce(ctx, steady)
		wg.Wait()
		if err == nil {
			err = resultError(steadyResult)
		}
		if err == nil {
			err = noisyErr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", phase, err)
		}
		_, rss, err := p.end()
		if err != nil {
			return err
		}
		s["nn_"+phase+"_p99_ms"] = ms(steadyResult.Latency.P99)
		s["nn_"+phase+"_mbps"] = noisyResult.MBPerSecond()
		s["nn_"+phase+"_rss_mb"] = rss
		return checkRSS("noisy tenant "+phase, rss)
	}
	if err := shared("noisy"); err != nil {
		return nil, err
	}
	if err := setProducerQuota(ctx, env.broker.addr, "noisy", noisyQuotaMBps*1e6); err != nil {
		// A target without quotas leaves the quota phases out.
		if env.log != nil {
			fmt.Fprintf(env.log, "  no quota phase: %v\n", err)
		}
	} else if err := shared("quota"); err != nil {
		return nil, err
	}
	if err := runRequestFlood(ctx, env, s, checkRSS); err != nil {
		return nil, err
	}
	return s, nil
}

// setProducerQuota sets producer_byte_rate for a client id.
func setProducerQuota(ctx context.Context, addr, clientID string, bytesPerSecond float64) error {
	return setClientQuota(ctx, addr, clientID, "producer_byte_rate", bytesPerSecond)
}
