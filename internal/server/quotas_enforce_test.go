package server

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// quotaSoak runs the byte-rate acceptance over 30 s instead of 12.
var quotaSoak = flag.Bool("quota-soak", false, "measure quota acceptance over 30 s")

func quotaRunDuration() time.Duration {
	if *quotaSoak {
		return 30 * time.Second
	}
	return 12 * time.Second
}

// quotaTolerance is how far a measured rate may be from its quota: the
// issue's 10% over the 30 s of -quota-soak, 20% over the default run's
// 12 s, in which Kafka's young-rate allowance (a stat younger than its
// windows counts as spanning them, so a client's first burst may carry
// most of a span's worth before the first throttle) weighs more.
func quotaTolerance() float64 {
	if *quotaSoak {
		return 0.10
	}
	return 0.20
}

// throttleHook counts the throttles franz-go is told of.
type throttleHook struct {
	throttles atomic.Int64
	maxMs     atomic.Int64
}

func (h *throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, interval time.Duration, _ bool) {
	h.throttles.Add(1)
	for {
		old := h.maxMs.Load()
		if interval.Milliseconds() <= old || h.maxMs.CompareAndSwap(old, interval.Milliseconds()) {
			return
		}
	}
}

// produceFor produces records of recordBytes as fast as the client will
// for d and returns the bytes acknowledged.
func produceFor(t *testing.T, cl *kgo.Client, topic string, recordBytes int, d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	// Random bytes: the quota counts request bytes on the wire, which
	// compression would shrink.
	value := make([]byte, recordBytes)
	rand.Read(value)
	var acked atomic.Int64
	for ctx.Err() == nil {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
			if err == nil {
				acked.Add(int64(len(r.Value)))
			}
		})
	}
	// Records still buffered when the deadline passed fail with ctx's
	// error and are not counted.
	flushCtx, flushCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer flushCancel()
	cl.Flush(flushCtx)
	return acked.Load()
}

// TestProducerByteRateFranzGo: a franz-go producer under a 10 MB/s
// producer_byte_rate achieves 10 MB/s within quotaTolerance and is told of
// throttles.
func TestProducerByteRateFranzGo(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a rate for 12 s")
	}
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "quota-produce", 1, nil)
	const rate = 10 << 20
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: kadmName("limited")}}, "producer_byte_rate", rate)

	hook := &throttleHook{}
	cl := tn.client(kgo.ClientID("limited"), kgo.WithHooks(hook), kgo.DefaultProduceTopic("quota-produce"),
		kgo.MaxBufferedBytes(8<<20), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	d := quotaRunDuration()
	start := time.Now()
	acked := produceFor(t, cl, "quota-produce", 16<<10, d)
	elapsed := time.Since(start)
	achieved := float64(acked) / elapsed.Seconds()
	t.Logf("producer_byte_rate %d B/s: achieved %.0f B/s (%.3f of the quota) over %v, %d throttles (max %d ms)",
		rate, achieved, achieved/rate, elapsed.Round(time.Millisecond), hook.throttles.Load(), hook.maxMs.Load())
	if tol := quotaTolerance(); achieved < rate*(1-tol) || achieved > rate*(1+tol) {
		t.Fatalf("achieved %.0f B/s, want %d ± %.0f%%", achieved, rate, tol*100)
	}
	if hook.throttles.Load() == 0 {
		t.Fatal("the client was never told of a throttle")
	}
}

func kadmName(s string) *string { return &s }

// TestControllerMutationQuota creates 100 single-partition topics one
// request each under a 10/s controller_mutation_rate (a 2-window bucket:
// a burst of 20; with -quota-soak, 1,000 topics under the default 11
// windows, about 90 s): requests over the quota answer
// THROTTLING_QUOTA_EXCEEDED with a throttle time, the script waits it out
// and retries, and every topic is created. An old CreateTopics version is
// throttled instead.
func TestControllerMutationQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a mutation quota for about 8 s")
	}
	topics := 100
	overrides := []string{"controller.quota.window.num=2"}
	if *quotaSoak {
		topics, overrides = 1000, nil
	}
	tn := startTestNode(t, overrides...)
	cl := tn.client(kgo.ClientID("creator"))
	adm := kadm.NewClient(cl)
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user"}}, "controller_mutation_rate", 10)

	var throttled, created int
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := 0; i < topics; i++ {
		name := fmt.Sprintf("mutation-%04d", i)
		for attempt := 0; ; attempt++ {
			if attempt > 200 {
				t.Fatalf("topic %s: still throttled after %d attempts", name, attempt)
			}
			req := kmsg.NewPtrCreateTopicsRequest()
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
			req.Topics = append(req.Topics, rt)
			req.TimeoutMillis = 10000
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			code := resp.Topics[0].ErrorCode
			if code == kerr.ThrottlingQuotaExceeded.Code {
				if resp.ThrottleMillis <= 0 {
					t.Fatalf("THROTTLING_QUOTA_EXCEEDED without a throttle time")
				}
				throttled++
				select {
				case <-time.After(time.Duration(resp.ThrottleMillis) * time.Millisecond):
				case <-ctx.Done():
					t.Fatal(ctx.Err())
				}
				continue
			}
			if code != 0 {
				t.Fatalf("topic %s: %v", name, kerr.ErrorForCode(code))
			}
			created++
			break
		}
	}
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for name := range listed {
		if strings.HasPrefix(name, "mutation-") {
			count++
		}
	}
	t.Logf("%d topics created under 10/s, %d requests refused with THROTTLING_QUOTA_EXCEEDED", created, throttled)
	if count != topics || throttled == 0 {
		t.Fatalf("%d topics listed, %d throttled; want %d and some", count, throttled, topics)
	}

	// CreateTopics v5 does not know THROTTLING_QUOTA_EXCEEDED: the topic
	// is created and the response throttled.
	oldClient := tn.client(kgo.ClientID("creator"), kgo.MaxVersions(kversion.V2_6_0()))
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "mutation-old-version", 50, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := oldClient.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	old := resp.(*kmsg.CreateTopicsResponse)
	if old.Topics[0].ErrorCode != 0 || old.ThrottleMillis <= 0 {
		t.Fatalf("v5 create: %v, throttle %d; want created and throttled", kerr.ErrorForCode(old.Topics[0].ErrorCode), old.ThrottleMillis)
	}
}

// TestConsumerByteRateFranzGo: a franz-go consumer under a 5 MB/s
// consumer_byte_rate asking for 64 MB fetches reads at the quota, ± 15%,
// over one quota span (quota.window.num windows of
// quota.window.size.seconds, 11 s), and is told of throttles. Kafka's
// measurement lets a client that has been quiet take the whole span's
// allowance at once, then holds it until the oldest window expires, so a
// consumer catching up reads in one burst per span: the measurement starts
// at its first record and covers one span.
func TestConsumerByteRateFranzGo(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a rate for 11 s")
	}
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "quota-fetch", 4, nil)
	const rate = 5 << 20
	const span = 11 * time.Second
	// Enough data that the consumer never catches up.
	producer := tn.client(kgo.DefaultProduceTopic("quota-fetch"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedBytes(16<<20))
	value := make([]byte, 64<<10)
	rand.Read(value)
	need := int(float64(rate)*span.Seconds()*2) / len(value)
	for i := 0; i < need; i++ {
		producer.Produce(context.Background(), &kgo.Record{Value: value}, nil)
	}
	if err := producer.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: kadmName("reader")}}, "consumer_byte_rate", rate)

	hook := &throttleHook{}
	consumer := tn.client(kgo.ClientID("reader"), kgo.WithHooks(hook), kgo.ConsumeTopics("quota-fetch"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
	var read int64
	var first time.Time
	ctx := testContext(t)
	for first.IsZero() || time.Since(first) < span {
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fetches := consumer.PollFetches(pollCtx)
		cancel()
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if first.IsZero() {
				first = time.Now()
			}
			if time.Since(first) < span {
				read += int64(len(r.Value))
			}
		})
	}
	achieved := float64(read) / span.Seconds()
	t.Logf("consumer_byte_rate %d B/s: achieved %.0f B/s (%.3f of the quota) over %v, %d throttles (max %d ms)",
		rate, achieved, achieved/rate, span, hook.throttles.Load(), hook.maxMs.Load())
	if achieved < rate*0.85 || achieved > rate*1.15 {
		t.Fatalf("achieved %.0f B/s, want %d ± 15%%", achieved, rate)
	}
	if hook.throttles.Load() == 0 {
		t.Fatal("the consumer was never told of a throttle")
	}
}

// TestRequestPercentageQuota: a client flooding cheap DescribeCluster
// requests (franz-go answers Metadata from its cache), each about a
// microsecond of handler time,
// under a request_percentage of 0.1 (0.1% of one handler thread) is
// throttled:
// its responses carry throttle times, franz-go waits them out, and the
// node's request quota metric names it. A client without the quota is
// not throttled meanwhile.
func TestRequestPercentageQuota(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: kadmName("flooder")}}, "request_percentage", 0.1)
	hook := &throttleHook{}
	flooder := tn.client(kgo.ClientID("flooder"), kgo.WithHooks(hook))
	other := &throttleHook{}
	polite := tn.client(kgo.ClientID("polite"), kgo.WithHooks(other))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var requests int
	for ctx.Err() == nil {
		req := kmsg.NewPtrDescribeClusterRequest()
		if _, err := req.RequestWith(ctx, flooder); err == nil {
			requests++
		}
		if requests%50 == 0 {
			kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, polite)
		}
	}
	t.Logf("%d DescribeCluster requests in 3 s under request_percentage=0.1: %d throttles (max %d ms); the other client %d throttles",
		requests, hook.throttles.Load(), hook.maxMs.Load(), other.throttles.Load())
	if hook.throttles.Load() == 0 {
		t.Fatal("the flooding client was never throttled")
	}
	if other.throttles.Load() != 0 {
		t.Fatal("the client without a quota was throttled")
	}
	if hook.maxMs.Load() > 1000 {
		t.Fatalf("a request-time throttle of %d ms: Kafka bounds it by one window (1000 ms)", hook.maxMs.Load())
	}
	series := scrape(t, tn)
	if series[`samsa_quota_throttles_total{client_id="flooder",quota_type="request",user=""}`] == 0 {
		t.Fatal("no request quota metric for the flooding client")
	}
}
