package metrics

import "github.com/prometheus/client_golang/prometheus"

// RemoteReadStats are the remote reader's counters, read at each scrape.
type RemoteReadStats struct {
	QueueSize    int64
	FetchedBytes int64
	ServedBytes  int64
	Requests     int64
	Failures     int64
	CacheBytes   int64
	CacheEntries int64
	CacheHits    int64
	CacheMisses  int64
}

// RegisterRemoteReader registers the remote-read metrics, broker-wide,
// with Kafka's names in their help (BrokerTopicMetrics' RemoteFetch*,
// RemoteLogManager's RemoteLogReader* and RemoteLogIndexCache*). Call it
// once per Metrics, and only when tiered storage is on.
func (m *Metrics) RegisterRemoteReader(stats func() RemoteReadStats) {
	counter := func(name, help string, value func(RemoteReadStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(value(stats())) })
	}
	gauge := func(name, help string, value func(RemoteReadStats) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(value(stats())) })
	}
	m.Registry.MustRegister(
		counter("samsa_remote_fetch_bytes_total", "Bytes read from the remote tier, index and chunk cache misses (RemoteFetchBytesPerSec).",
			func(s RemoteReadStats) int64 { return s.FetchedBytes }),
		counter("samsa_remote_fetch_served_bytes_total", "Bytes of batches served to fetches from the remote tier.",
			func(s RemoteReadStats) int64 { return s.ServedBytes }),
		counter("samsa_remote_fetch_requests_total", "Remote reads performed (RemoteFetchRequestsPerSec).",
			func(s RemoteReadStats) int64 { return s.Requests }),
		counter("samsa_remote_fetch_errors_total", "Remote reads that failed (RemoteFetchErrorsPerSec).",
			func(s RemoteReadStats) int64 { return s.Failures }),
		gauge("samsa_remote_log_reader_task_queue_size", "Remote reads waiting for a reader thread (RemoteLogReaderTaskQueueSize).",
			func(s RemoteReadStats) int64 { return s.QueueSize }),
		gauge("samsa_remote_log_index_cache_bytes", "Bytes held by the remote index and chunk cache.",
			func(s RemoteReadStats) int64 { return s.CacheBytes }),
		gauge("samsa_remote_log_index_cache_entries", "Files held by the remote index and chunk cache (RemoteLogIndexCacheEntries).",
			func(s RemoteReadStats) int64 { return s.CacheEntries }),
		counter("samsa_remote_log_index_cache_hits_total", "Remote index and chunk cache hits (RemoteLogIndexCacheHitCount).",
			func(s RemoteReadStats) int64 { return s.CacheHits }),
		counter("samsa_remote_log_index_cache_misses_total", "Remote index and chunk cache misses (RemoteLogIndexCacheMissCount).",
			func(s RemoteReadStats) int64 { return s.CacheMisses }),
	)
}
