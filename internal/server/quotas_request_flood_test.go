package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestFloodQuota is the flooder's request_percentage in
// TestRequestPercentageHoldsAMetadataAndListOffsetsFlood: 0.5% of one handler
// thread, a small share of what four goroutines of back-to-back requests
// take unthrottled.
const requestFloodQuota = 0.5

// TestRequestPercentageHoldsAMetadataAndListOffsetsFlood: four goroutines
// of one franz-go client send Metadata and ListOffsets requests back to
// back, every error fatal, under a request_percentage of 0.5. Their responses
// carry throttle_time_ms, franz-go waits the throttles out and the broker
// mutes the connection meanwhile, and the share of a handler the broker
// measures for the client stays near its quota; a second client's Metadata
// requests meanwhile are never throttled.
func TestRequestPercentageHoldsAMetadataAndListOffsetsFlood(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "flood", 1, nil)
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: kadmName("flooder")}}, "request_percentage", requestFloodQuota)
	hook := &throttleHook{}
	flooder := tn.client(kgo.ClientID("flooder"), kgo.WithHooks(hook))
	polite := tn.client(kgo.ClientID("polite"))

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	var requests, throttledResponses atomic.Int64
	var wg sync.WaitGroup
	fail := func(err error) {
		if ctx.Err() == nil {
			t.Errorf("flood request: %v", err)
			cancel()
		}
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var throttleMs int32
				if i%2 == 0 {
					req := kmsg.NewPtrMetadataRequest()
					resp, err := req.RequestWith(ctx, flooder)
					if err != nil {
						fail(err)
						return
					}
					throttleMs = resp.ThrottleMillis
				} else {
					req := kmsg.NewPtrListOffsetsRequest()
					topic := kmsg.NewListOffsetsRequestTopic()
					topic.Topic = "flood"
					partition := kmsg.NewListOffsetsRequestTopicPartition()
					partition.Timestamp = -1
					topic.Partitions = append(topic.Partitions, partition)
					req.Topics = append(req.Topics, topic)
					resp, err := req.RequestWith(ctx, flooder)
					if err != nil {
						fail(err)
						return
					}
					for _, rt := range resp.Topics {
						for _, rp := range rt.Partitions {
							if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
								fail(err)
								return
							}
						}
					}
					throttleMs = resp.ThrottleMillis
				}
				requests.Add(1)
				if throttleMs > 0 {
					throttledResponses.Add(1)
				}
			}
		}()
	}
	var politeRequests, politeThrottled int
	for ctx.Err() == nil {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, polite)
		if err != nil {
			if ctx.Err() == nil {
				t.Fatalf("polite client: %v", err)
			}
			break
		}
		politeRequests++
		if resp.ThrottleMillis > 0 {
			politeThrottled++
		}
	}
	wg.Wait()
	series := scrape(t, tn)
	measured := series[`samsa_quota_rate{client_id="flooder",quota_type="request",user=""}`]
	t.Logf("flooder: %d requests, %d answered with a throttle, %d throttles seen by franz-go (max %d ms), broker-measured %.2f%% of a handler under a %.1f%% quota; polite client: %d requests, %d throttled",
		requests.Load(), throttledResponses.Load(), hook.throttles.Load(), hook.maxMs.Load(), measured, requestFloodQuota, politeRequests, politeThrottled)
	if throttledResponses.Load() == 0 {
		t.Fatal("no response to the flooder carried throttle_time_ms")
	}
	if hook.throttles.Load() == 0 {
		t.Fatal("franz-go was never told to wait out a throttle")
	}
	if politeThrottled != 0 {
		t.Fatalf("%d of the polite client's responses were throttled", politeThrottled)
	}
	if measured <= 0 {
		t.Fatal("the broker measured no request time for the flooder")
	}
	// The quota holds the measured share near the bound: a throttle
	// follows any excess at once, so the average over the windows stays
	// within a request or two of it. Twice the quota leaves room for
	// requests already on their way when the throttle is answered.
	if measured > 2*requestFloodQuota {
		t.Fatalf("the broker measured %.2f%% of a handler for the flooder, over twice its %.1f%% quota", measured, requestFloodQuota)
	}
}
