package server

import (
	"context"
	"crypto/rand"
	"flag"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// quotaSoak runs the byte-rate acceptance over 30 s instead of 12.
var quotaSoak = flag.Bool("quota-soak", false, "measure quota acceptance over 30 s")

func quotaRunDuration() time.Duration {
	if *quotaSoak {
		return 30 * time.Second
	}
	return 12 * time.Second
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
// producer_byte_rate achieves 10 MB/s ± 10% and is told of throttles.
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
	if achieved < rate*0.9 || achieved > rate*1.1 {
		t.Fatalf("achieved %.0f B/s, want %d ± 10%%", achieved, rate)
	}
	if hook.throttles.Load() == 0 {
		t.Fatal("the client was never told of a throttle")
	}
}

func kadmName(s string) *string { return &s }

