package quota

import "math"

// Windows configures measurement: Samples windows of WindowMs each
// (quota.window.num, default 11; quota.window.size.seconds, default 1).
type Windows struct {
	Samples  int
	WindowMs int64
}

// DefaultWindows is Kafka's default measurement.
var DefaultWindows = Windows{Samples: 11, WindowMs: 1000}

func (w Windows) valid() Windows {
	if w.Samples < 2 {
		w.Samples = 2
	}
	if w.WindowMs <= 0 {
		w.WindowMs = 1000
	}
	return w
}

// sample is one window of a Rate.
type sample struct {
	value float64
	// startMs is when the window began (Kafka's lastWindowMs).
	startMs int64
}

// Rate is Kafka's Rate over a SampledStat of windowed sums: values recorded
// go into the current window; a window older than the whole span
// (Samples * WindowMs) is reset before it is read.
//
// Invariant: len(samples) <= Samples and current < len(samples) once
// anything was recorded.
type Rate struct {
	samples []sample
	current int
}

// Record adds value at nowMs.
func (r *Rate) Record(w Windows, value float64, nowMs int64) {
	s := r.currentSample(nowMs)
	if nowMs-s.startMs >= w.WindowMs {
		s = r.advance(w, nowMs)
	}
	s.value += value
}

func (r *Rate) currentSample(nowMs int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{startMs: nowMs})
		r.current = 0
	}
	return &r.samples[r.current]
}

// advance moves to the next window, reusing the oldest slot once all exist.
func (r *Rate) advance(w Windows, nowMs int64) *sample {
	r.current = (r.current + 1) % w.Samples
	if r.current >= len(r.samples) {
		r.samples = append(r.samples, sample{startMs: nowMs})
	} else {
		r.samples[r.current] = sample{startMs: nowMs}
	}
	return &r.samples[r.current]
}

// purge resets the windows that have fallen out of the span.
func (r *Rate) purge(w Windows, nowMs int64) {
	expireMs := int64(w.Samples) * w.WindowMs
	for i := range r.samples {
		if nowMs-r.samples[i].startMs >= expireMs {
			r.samples[i] = sample{startMs: nowMs}
		}
	}
}

// Total is the sum of the retained windows at nowMs.
func (r *Rate) Total(w Windows, nowMs int64) float64 {
	r.purge(w, nowMs)
	total := 0.0
	for _, s := range r.samples {
		total += s.value
	}
	return total
}

// SpanMs is the time the retained windows cover at nowMs, as Kafka's
// Rate.windowSize computes it: from the oldest window's start, but never
// less than Samples-1 whole windows, and at least 1 ms.
func (r *Rate) SpanMs(w Windows, nowMs int64) int64 {
	r.purge(w, nowMs)
	oldest := nowMs
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{startMs: nowMs})
	}
	for _, s := range r.samples {
		oldest = min(oldest, s.startMs)
	}
	elapsed := nowMs - oldest
	fullWindows := elapsed / w.WindowMs
	if minimum := int64(w.Samples - 1); fullWindows < minimum {
		elapsed += (minimum - fullWindows) * w.WindowMs
	}
	return max(elapsed, 1)
}

// PerSecond is the measured rate at nowMs, per second.
func (r *Rate) PerSecond(w Windows, nowMs int64) float64 {
	total := r.Total(w, nowMs)
	return total / (float64(r.SpanMs(w, nowMs)) / 1000)
}

// throttleMs is Kafka's QuotaUtils.throttleTime: how long, with no more
// traffic, until a rate measured at nowMs falls back to bound.
func (r *Rate) throttleMs(w Windows, rate, bound float64, nowMs int64) int64 {
	if bound <= 0 || rate <= bound {
		return 0
	}
	throttle := (rate - bound) / bound * float64(r.SpanMs(w, nowMs))
	if throttle >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int64(math.Round(throttle))
}

// TokenBucket is Kafka's TokenBucket (KIP-599): it refills at the quota's
// rate per second up to a burst of rate * Samples * window seconds, and a
// recorded value takes that many tokens, possibly going below zero.
//
// Invariant: tokens <= burst of the quota last applied.
type TokenBucket struct {
	tokens  float64
	lastMs  int64
	started bool
}

func burst(w Windows, rate float64) float64 {
	return rate * float64(w.Samples) * float64(w.WindowMs) / 1000
}

// refill brings the bucket up to nowMs at rate.
func (t *TokenBucket) refill(w Windows, rate float64, nowMs int64) {
	limit := burst(w, rate)
	if !t.started {
		t.tokens, t.lastMs, t.started = limit, nowMs, true
		return
	}
	elapsedMs := max(nowMs-t.lastMs, 0)
	t.tokens = min(limit, t.tokens+rate*float64(elapsedMs)/1000)
	t.lastMs = max(t.lastMs, nowMs)
}

// Tokens is what the bucket holds at nowMs.
func (t *TokenBucket) Tokens(w Windows, rate float64, nowMs int64) float64 {
	t.refill(w, rate, nowMs)
	return t.tokens
}

// Take removes value tokens at nowMs.
func (t *TokenBucket) Take(w Windows, rate, value float64, nowMs int64) {
	t.refill(w, rate, nowMs)
	t.tokens -= value
}

// throttleMs is the time until the bucket is back at zero. Kafka rounds it
// to the nearest millisecond, which answers a bucket a hair below zero
// with a throttle of 0; this rounds up, so a refused request is always
// told to wait.
func (t *TokenBucket) throttleMs(rate float64) int64 {
	if t.tokens >= 0 || rate <= 0 {
		return 0
	}
	throttle := -t.tokens / rate * 1000
	if throttle >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int64(math.Ceil(throttle))
}
