package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// syncBuckets span 10µs (a sync of nothing on a fast SSD) to ~40s (a
// stalled disk).
var syncBuckets = prometheus.ExponentialBuckets(0.00001, 2.5, 17)

// LogFlushObserver registers samsa_log_flush_seconds and returns the observer
// that feeds it, for vfs.ObserveSyncs around the node's filesystem. Call it
// once per Metrics.
func (m *Metrics) LogFlushObserver() vfs.SyncObserver {
	flush := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "samsa_log_flush_seconds",
		Help:    "Time the storage layer waited for one sync to reach the disk, by kind: file (fdatasync of a segment, index or checkpoint), dir (fsync of a partition directory), mapping (msync of an index) (LogFlushRateAndTimeMs).",
		Buckets: syncBuckets,
	}, []string{"kind"})
	m.Registry.MustRegister(flush)
	observers := map[vfs.SyncKind]prometheus.Observer{}
	for _, kind := range []vfs.SyncKind{vfs.SyncFile, vfs.SyncDir, vfs.SyncMapping} {
		observers[kind] = flush.WithLabelValues(kind.String())
	}
	return func(kind vfs.SyncKind, took time.Duration) {
		if o := observers[kind]; o != nil {
			o.Observe(took.Seconds())
		}
	}
}
