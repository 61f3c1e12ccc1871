package console

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Sample is one point of the overview's plots: rates and mean latencies
// over the interval that ends at TimeMs.
type Sample struct {
	TimeMs           int64   `json:"time_ms"`
	BytesInPerSec    float64 `json:"bytes_in_per_sec"`
	BytesOutPerSec   float64 `json:"bytes_out_per_sec"`
	RequestsPerSec   float64 `json:"requests_per_sec"`
	ProduceLatencyMs float64 `json:"produce_latency_ms"`
	FetchLatencyMs   float64 `json:"fetch_latency_ms"`
	MessagesInPerSec float64 `json:"messages_in_per_sec"`
}

// LagSample is one point of a group's lag-over-time plot.
type LagSample struct {
	TimeMs int64 `json:"time_ms"`
	Lag    int64 `json:"lag"`
}

// lagGroupsMax bounds the groups whose lag the sampler keeps an hour of;
// further groups get no plot until one of the kept ones disappears.
const lagGroupsMax = 200

// counters are the cumulative values a Sample is the difference of.
type counters struct {
	timeMs                        int64
	bytesIn, bytesOut, messagesIn float64
	requests                      float64
	produceSeconds, produceCount  float64
	fetchSeconds, fetchCount      float64
	// groupLag is the total lag of each group on the partitions this node
	// leads (samsa_group_lag_records).
	groupLag map[string]int64
}

// Ring is a bounded ring of samples, oldest first. It is not safe for
// concurrent use; Sampler guards it.
//
// Invariant: len(samples) <= capacity, and samples[(start+i)%capacity] is
// the i-th oldest sample.
type Ring struct {
	samples  []Sample
	start    int
	capacity int
}

// NewRing returns a ring that keeps the last capacity samples.
func NewRing(capacity int) *Ring {
	return &Ring{capacity: max(capacity, 1)}
}

// Add appends s, dropping the oldest sample when full.
func (r *Ring) Add(s Sample) {
	if len(r.samples) < r.capacity {
		r.samples = append(r.samples, s)
		return
	}
	r.samples[r.start] = s
	r.start = (r.start + 1) % r.capacity
}

// Samples returns a copy of the samples, oldest first.
func (r *Ring) Samples() []Sample {
	out := make([]Sample, 0, len(r.samples))
	out = append(out, r.samples[r.start:]...)
	return append(out, r.samples[:r.start]...)
}

// rate turns two cumulative readings into a Sample. A counter that went
// backwards (the node restarted its registry) reads as zero for the interval.
func rate(previous, current counters) Sample {
	seconds := float64(current.timeMs-previous.timeMs) / 1000
	if seconds <= 0 {
		seconds = 1
	}
	delta := func(a, b float64) float64 { return max(b-a, 0) }
	mean := func(secondsBefore, secondsNow, countBefore, countNow float64) float64 {
		count := delta(countBefore, countNow)
		if count == 0 {
			return 0
		}
		return delta(secondsBefore, secondsNow) / count * 1000
	}
	return Sample{
		TimeMs:           current.timeMs,
		BytesInPerSec:    delta(previous.bytesIn, current.bytesIn) / seconds,
		BytesOutPerSec:   delta(previous.bytesOut, current.bytesOut) / seconds,
		MessagesInPerSec: delta(previous.messagesIn, current.messagesIn) / seconds,
		RequestsPerSec:   delta(previous.requests, current.requests) / seconds,
		ProduceLatencyMs: mean(previous.produceSeconds, current.produceSeconds, previous.produceCount, current.produceCount),
		FetchLatencyMs:   mean(previous.fetchSeconds, current.fetchSeconds, previous.fetchCount, current.fetchCount),
	}
}

// readCounters sums the node's metric families the plots draw.
func readCounters(families []*dto.MetricFamily, timeMs int64) counters {
	c := counters{timeMs: timeMs, groupLag: map[string]int64{}}
	for _, family := range families {
		for _, m := range family.GetMetric() {
			switch family.GetName() {
			case "samsa_group_lag_records":
				for _, label := range m.GetLabel() {
					if label.GetName() == "group" {
						c.groupLag[label.GetValue()] += int64(m.GetGauge().GetValue())
					}
				}
			case "samsa_topic_bytes_in_total":
				c.bytesIn += m.GetCounter().GetValue()
			case "samsa_topic_bytes_out_total":
				c.bytesOut += m.GetCounter().GetValue()
			case "samsa_topic_messages_in_total":
				c.messagesIn += m.GetCounter().GetValue()
			case "samsa_requests_total":
				c.requests += m.GetCounter().GetValue()
			case "samsa_request_total_seconds":
				api := ""
				for _, label := range m.GetLabel() {
					if label.GetName() == "api" {
						api = label.GetValue()
					}
				}
				h := m.GetHistogram()
				switch api {
				case "Produce":
					c.produceSeconds += h.GetSampleSum()
					c.produceCount += float64(h.GetSampleCount())
				case "Fetch":
					c.fetchSeconds += h.GetSampleSum()
					c.fetchCount += float64(h.GetSampleCount())
				}
			}
		}
	}
	return c
}

// Sampler reads the node's metrics every interval into a Ring.
type Sampler struct {
	gatherer prometheus.Gatherer
	interval time.Duration
	mu       struct {
		sync.Mutex
		ring     *Ring
		previous counters
		primed   bool
		// Invariant: len(lags) <= lagGroupsMax; each ring holds at most
		// an hour of samples.
		lags map[string]*lagRing
	}
	lagCapacity int
}

// lagRing is a bounded ring of one group's lag samples, oldest first.
type lagRing struct {
	samples []LagSample
	start   int
}

func (r *lagRing) add(s LagSample, capacity int) {
	if len(r.samples) < capacity {
		r.samples = append(r.samples, s)
		return
	}
	r.samples[r.start] = s
	r.start = (r.start + 1) % capacity
}

// NewSampler keeps windowMs of samples taken every intervalMs.
func NewSampler(gatherer prometheus.Gatherer, intervalMs, windowMs int64) *Sampler {
	s := &Sampler{gatherer: gatherer, interval: time.Duration(intervalMs) * time.Millisecond}
	s.lagCapacity = max(int(windowMs/max(intervalMs, 1)), 1)
	s.mu.ring = NewRing(s.lagCapacity)
	s.mu.lags = map[string]*lagRing{}
	return s
}

// Run samples until ctx ends.
func (s *Sampler) Run(ctx context.Context) {
	if s.gatherer == nil {
		return
	}
	s.sample(time.Now())
	ticker := time.NewTicker(s.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			s.sample(now)
		}
	}
}

func (s *Sampler) sample(now time.Time) {
	families, err := s.gatherer.Gather()
	if err != nil && len(families) == 0 {
		return
	}
	s.observe(readCounters(families, now.UnixMilli()))
}

// observe adds the sample between the last reading and c.
func (s *Sampler) observe(c counters) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.primed {
		s.mu.ring.Add(rate(s.mu.previous, c))
	}
	s.mu.previous, s.mu.primed = c, true
	for group := range s.mu.lags {
		if _, ok := c.groupLag[group]; !ok {
			delete(s.mu.lags, group)
		}
	}
	for group, lag := range c.groupLag {
		ring, ok := s.mu.lags[group]
		if !ok {
			if len(s.mu.lags) >= lagGroupsMax {
				continue
			}
			ring = &lagRing{}
			s.mu.lags[group] = ring
		}
		ring.add(LagSample{TimeMs: c.timeMs, Lag: lag}, s.lagCapacity)
	}
}

// GroupLag returns a group's kept lag samples, oldest first.
func (s *Sampler) GroupLag(group string) []LagSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, ok := s.mu.lags[group]
	if !ok {
		return []LagSample{}
	}
	out := make([]LagSample, 0, len(ring.samples))
	out = append(out, ring.samples[ring.start:]...)
	return append(out, ring.samples[:ring.start]...)
}

// Samples returns the kept samples, oldest first.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.ring.Samples()
}
