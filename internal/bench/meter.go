package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// meter counts what a benchmark moved and reports it every interval. Its
// add and latency methods are safe for concurrent use.
type meter struct {
	// start and stop bound the measured phase; set by begin and end.
	start   time.Time
	stop    time.Time
	records atomic.Int64
	bytes   atomic.Int64
	errors  atomic.Int64

	firstErrorOnce sync.Once
	firstError     error

	latency atomic.Pointer[Histogram] // the current interval's
	total   Histogram                 // the whole run's
}

func newMeter() *meter {
	m := &meter{start: time.Now()}
	m.latency.Store(new(Histogram))
	return m
}

// begin starts the clock; call it before report.
func (m *meter) begin() { m.start = time.Now() }

// end stops the clock; a result without end runs to the moment it is taken.
func (m *meter) end() { m.endAt(time.Now()) }

func (m *meter) endAt(t time.Time) { m.stop = t }

func (m *meter) add(records, bytes int64) {
	m.records.Add(records)
	m.bytes.Add(bytes)
}

func (m *meter) fail(err error) {
	m.errors.Add(1)
	m.firstErrorOnce.Do(func() { m.firstError = err })
}

func (m *meter) observe(d time.Duration) {
	m.latency.Load().Record(d)
	m.total.Record(d)
}

// result digests the run up to now.
func (m *meter) result() Result {
	r := Result{
		Records: m.records.Load(),
		Bytes:   m.bytes.Load(),
		Errors:  m.errors.Load(),
		Elapsed: time.Since(m.start),
		Latency: m.total.Summary(),
	}
	if !m.stop.IsZero() {
		r.Elapsed = m.stop.Sub(m.start)
	}
	if r.Errors > 0 {
		m.firstErrorOnce.Do(func() {})
		r.FirstError = m.firstError
	}
	return r
}

// report calls progress every interval until ctx is done. It returns once
// its goroutine has stopped, through the returned wait function.
func (m *meter) report(ctx context.Context, interval time.Duration, progress func(Progress)) (wait func()) {
	if progress == nil || interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		last := time.Now()
		var lastRecords, lastBytes int64
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-ticker.C:
				records, bytes := m.records.Load(), m.bytes.Load()
				window := m.latency.Swap(new(Histogram))
				progress(Progress{
					Elapsed:         now.Sub(m.start),
					Records:         records,
					Bytes:           bytes,
					Errors:          m.errors.Load(),
					Interval:        now.Sub(last),
					IntervalRecords: records - lastRecords,
					IntervalBytes:   bytes - lastBytes,
					Latency:         window.Summary(),
				})
				last, lastRecords, lastBytes = now, records, bytes
			}
		}
	}()
	return func() { <-done }
}
