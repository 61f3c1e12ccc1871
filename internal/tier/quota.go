package tier

import (
	"math"
	"sync"
	"time"
)

// RateQuota is a bound on bytes per second measured as Kafka's
// RLMQuotaManager measures it (KIP-956): bytes are recorded into samples
// of quotaSampleSeconds, the last quotaSamples of them are kept, and the
// rate is their sum over the time they span, at least quotaSamples-1 whole
// samples, so one large record (a segment) keeps the quota exceeded until
// the rate over the window falls below the limit. Kafka's defaults:
// remote.log.manager.{copy,fetch}.quota.window.num 11 and
// .window.size.seconds 1.
type RateQuota struct {
	mu    sync.Mutex
	limit int64
	// samples is a ring of the last quotaSamples samples.
	// Invariant: len(samples) <= quotaSamples; samples ascend by start.
	samples []quotaSample
}

type quotaSample struct {
	startSeconds int64
	bytes        int64
}

const (
	quotaSamples       = 11
	quotaSampleSeconds = 1
)

// NewRateQuota returns a quota of limit bytes per second; limit <= 0 or
// math.MaxInt64 is unbounded.
func NewRateQuota(limit int64) *RateQuota {
	q := &RateQuota{}
	q.SetLimit(limit)
	return q
}

// SetLimit changes the bound (a dynamic config update).
func (q *RateQuota) SetLimit(limit int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if limit <= 0 {
		limit = math.MaxInt64
	}
	q.limit = limit
}

// Record adds n bytes at now.
func (q *RateQuota) Record(now time.Time, n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	start := now.Unix() / quotaSampleSeconds * quotaSampleSeconds
	if k := len(q.samples); k > 0 && q.samples[k-1].startSeconds == start {
		q.samples[k-1].bytes += n
		return
	}
	q.samples = append(q.samples, quotaSample{startSeconds: start, bytes: n})
	if len(q.samples) > quotaSamples {
		q.samples = append(q.samples[:0], q.samples[len(q.samples)-quotaSamples:]...)
	}
}

// Exceeded reports whether the rate over the window reached the limit.
func (q *RateQuota) Exceeded(now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit == math.MaxInt64 {
		return false
	}
	nowSeconds := float64(now.UnixMilli()) / 1000
	oldest := nowSeconds - quotaSamples*quotaSampleSeconds
	var sum int64
	first := nowSeconds
	for _, s := range q.samples {
		if float64(s.startSeconds+quotaSampleSeconds) <= oldest {
			continue // aged out of the window
		}
		sum += s.bytes
		first = min(first, float64(s.startSeconds))
	}
	if sum == 0 {
		return false
	}
	window := max(nowSeconds-first, (quotaSamples-1)*quotaSampleSeconds)
	return float64(sum)/window >= float64(q.limit)
}
