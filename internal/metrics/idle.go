package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-streaming/samsa/internal/network"
)

// idleWindowMin is the shortest interval the idle ratios are computed over.
// A scrape sooner than this after the last one reports the last ratios again,
// so two scrapers a few milliseconds apart do not see a ratio of nothing.
const idleWindowMin = time.Second

var (
	descHandlerIdle = prometheus.NewDesc("samsa_request_handler_avg_idle_ratio",
		"Fraction of handler (num.io.threads) time spent waiting for a request since the previous scrape, 0 to 1 (RequestHandlerAvgIdlePercent).",
		nil, nil)
	descNetworkIdle = prometheus.NewDesc("samsa_network_processor_avg_idle_ratio",
		"1 minus the time spent framing requests and writing responses over num.network.threads of wall time since the previous scrape, 0 to 1 (NetworkProcessorAvgIdlePercent).",
		nil, nil)
)

// idleRatios reports Kafka's two idle gauges, computed from the network
// server's running totals between one scrape and the next. With several
// scrapers the window is the time since any of them last scraped; for an
// exact window use the counters instead:
//
//	rate(samsa_network_handler_idle_seconds_total[1m]) / samsa_network_handler_threads
//	1 - rate(samsa_network_network_busy_seconds_total[1m]) / samsa_network_network_threads
type idleRatios struct {
	stats func() network.Stats

	mu struct {
		sync.Mutex
		// previous is the snapshot the next ratios are computed from; its
		// zero value means "since the server started".
		previous       network.Stats
		handler, netio float64
		computed       bool
	}
}

// NewIdleRatios returns a collector of samsa_request_handler_avg_idle_ratio
// and samsa_network_processor_avg_idle_ratio over stats (network.Server's
// Stats).
func NewIdleRatios(stats func() network.Stats) prometheus.Collector {
	return &idleRatios{stats: stats}
}

// Describe implements prometheus.Collector.
func (r *idleRatios) Describe(ch chan<- *prometheus.Desc) {
	ch <- descHandlerIdle
	ch <- descNetworkIdle
}

// Collect implements prometheus.Collector.
func (r *idleRatios) Collect(ch chan<- prometheus.Metric) {
	handler, netio := r.ratios(r.stats())
	ch <- prometheus.MustNewConstMetric(descHandlerIdle, prometheus.GaugeValue, handler)
	ch <- prometheus.MustNewConstMetric(descNetworkIdle, prometheus.GaugeValue, netio)
}

// ratios returns the idle ratios between the previous snapshot and now, and
// makes now the previous snapshot, unless less than idleWindowMin has passed.
func (r *idleRatios) ratios(now network.Stats) (handler, netio float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.computed && now.Uptime-r.mu.previous.Uptime < idleWindowMin {
		return r.mu.handler, r.mu.netio
	}
	r.mu.handler = now.HandlerIdleRatioSince(r.mu.previous)
	r.mu.netio = now.NetworkIdleRatioSince(r.mu.previous)
	r.mu.previous = now
	r.mu.computed = true
	return r.mu.handler, r.mu.netio
}
