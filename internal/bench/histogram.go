package bench

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// The latency histogram is log-linear, like HdrHistogram: values below
// histogramSubBuckets nanoseconds have a bucket each; above that, every
// power of two is split into histogramSubBuckets/2 equal buckets, so any
// recorded value is off by less than 1/64 (1.6%) of itself. Values above
// histogramValueMax are clamped to it; the exact maximum is kept apart.
const (
	histogramSubBucketBits = 7
	histogramSubBuckets    = 1 << histogramSubBucketBits // 128
	histogramHalfBuckets   = histogramSubBuckets / 2     // 64
	// histogramShiftMax bounds the bucket array: values up to
	// 2^(histogramSubBucketBits+histogramShiftMax) ns (about 36 minutes).
	histogramShiftMax = 34
	histogramBuckets  = histogramSubBuckets + histogramShiftMax*histogramHalfBuckets
	histogramValueMax = int64(1)<<(histogramSubBucketBits+histogramShiftMax) - 1
)

// Histogram counts durations. Record is safe for concurrent use and does
// not allocate or lock; readers get a consistent-enough view for progress
// lines and an exact one once recording has stopped.
type Histogram struct {
	counts [histogramBuckets]atomic.Int64
	total  atomic.Int64
	sumNs  atomic.Int64
	maxNs  atomic.Int64
}

// Record adds one observation; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	ns := max(int64(d), 0)
	h.counts[bucketOf(min(ns, histogramValueMax))].Add(1)
	h.total.Add(1)
	h.sumNs.Add(ns)
	for {
		seen := h.maxNs.Load()
		if ns <= seen || h.maxNs.CompareAndSwap(seen, ns) {
			break
		}
	}
}

// Merge adds every observation of other into h.
func (h *Histogram) Merge(other *Histogram) {
	for i := range other.counts {
		if n := other.counts[i].Load(); n != 0 {
			h.counts[i].Add(n)
		}
	}
	h.total.Add(other.total.Load())
	h.sumNs.Add(other.sumNs.Load())
	for {
		seen, theirs := h.maxNs.Load(), other.maxNs.Load()
		if theirs <= seen || h.maxNs.CompareAndSwap(seen, theirs) {
			break
		}
	}
}

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.total.Load() }

// Quantile returns the value below which a fraction q (0..1) of the
// observations fall, as the upper edge of its bucket (capped at the
// maximum seen), or 0 with no observations.
func (h *Histogram) Quantile(q float64) time.Duration {
	total := h.total.Load()
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.5)
	rank = min(max(rank, 1), total)
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return time.Duration(min(bucketUpper(i), h.maxNs.Load()))
		}
	}
	return time.Duration(h.maxNs.Load())
}

// Summary is the usual percentile digest of a histogram.
func (h *Histogram) Summary() LatencySummary {
	count := h.total.Load()
	s := LatencySummary{Count: count}
	if count == 0 {
		return s
	}
	s.Mean = time.Duration(h.sumNs.Load() / count)
	s.P50 = h.Quantile(0.50)
	s.P99 = h.Quantile(0.99)
	s.P999 = h.Quantile(0.999)
	s.Max = time.Duration(h.maxNs.Load())
	return s
}

// LatencySummary digests a latency distribution.
type LatencySummary struct {
	Count int64
	Mean  time.Duration
	P50   time.Duration
	P99   time.Duration
	P999  time.Duration
	Max   time.Duration
}

// bucketOf maps a value in [0, histogramValueMax] to its bucket index.
func bucketOf(ns int64) int {
	if ns < histogramSubBuckets {
		return int(ns)
	}
	// For ns in [2^(k-1), 2^k), shift = k-7 >= 1 puts ns>>shift in [64, 127].
	shift := bits.Len64(uint64(ns)) - histogramSubBucketBits
	mantissa := int(ns>>shift) - histogramHalfBuckets
	return histogramSubBuckets + (shift-1)*histogramHalfBuckets + mantissa
}

// bucketUpper is the largest value that falls in bucket i.
func bucketUpper(i int) int64 {
	if i < histogramSubBuckets {
		return int64(i)
	}
	shift := (i-histogramSubBuckets)/histogramHalfBuckets + 1
	mantissa := int64((i-histogramSubBuckets)%histogramHalfBuckets + histogramHalfBuckets)
	return (mantissa+1)<<shift - 1
}
