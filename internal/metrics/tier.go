package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Tier holds the tiered-storage metrics, with Kafka's names in their help
// (kafka.server:type=BrokerTopicMetrics and RemoteLogManager).
type Tier struct {
	copyBytes    *prometheus.CounterVec
	copyRequests *prometheus.CounterVec
	copyErrors   *prometheus.CounterVec
	deleteReqs   *prometheus.CounterVec
	deleteErrors *prometheus.CounterVec
	logSizeBytes *prometheus.GaugeVec
	copyLagBytes *prometheus.GaugeVec
	copyLagCount *prometheus.GaugeVec
	logSegments  *prometheus.GaugeVec
}

// TierMetrics registers the tiered-storage metrics. Call it once per
// Metrics, and only when tiered storage is on.
func (m *Metrics) TierMetrics() *Tier {
	topic := []string{"topic"}
	partition := []string{"topic", "partition"}
	t := &Tier{
		copyBytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "samsa_remote_copy_bytes_total",
			Help: "Bytes of segments copied to the remote tier (RemoteCopyBytesPerSec)."}, topic),
		copyRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "samsa_remote_copy_requests_total",
			Help: "Segments copied to the remote tier (RemoteCopyRequestsPerSec)."}, topic),
		copyErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "samsa_remote_copy_errors_total",
			Help: "Remote log manager tasks that failed (RemoteCopyErrorsPerSec)."}, topic),
		deleteReqs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "samsa_remote_delete_requests_total",
			Help: "Remote segments deleted by retention, DeleteRecords, fencing or orphan collection (RemoteDeleteRequestsPerSec)."}, topic),
		deleteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "samsa_remote_delete_errors_total",
			Help: "Remote data deletions that failed (RemoteDeleteErrorsPerSec)."}, topic),
		logSizeBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "samsa_remote_log_size_bytes",
			Help: "Bytes of the partition's readable remote segments (RemoteLogSizeBytes)."}, partition),
		logSegments: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "samsa_remote_log_segments",
			Help: "The partition's readable remote segments (RemoteLogMetadataCount)."}, partition),
		copyLagBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "samsa_remote_copy_lag_bytes",
			Help: "Bytes of closed local segments not yet copied (RemoteCopyLagBytes)."}, partition),
		copyLagCount: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "samsa_remote_copy_lag_segments",
			Help: "Closed local segments not yet copied (RemoteCopyLagSegments)."}, partition),
	}
	m.Registry.MustRegister(t.copyBytes, t.copyRequests, t.copyErrors, t.deleteReqs, t.deleteErrors,
		t.logSizeBytes, t.logSegments, t.copyLagBytes, t.copyLagCount)
	return t
}

// TierTask records one remote log manager task of a partition.
type TierTask struct {
	Topic                         string
	Partition                     int32
	CopiedBytes, CopiedSegments   int64
	DeletedSegments               int64
	Failed                        bool
	RemoteSizeBytes, RemoteCount  int64
	CopyLagBytes, CopyLagSegments int64
}

// Observe records a task.
func (t *Tier) Observe(r TierTask) {
	p := strconv.Itoa(int(r.Partition))
	t.copyBytes.WithLabelValues(r.Topic).Add(float64(r.CopiedBytes))
	t.copyRequests.WithLabelValues(r.Topic).Add(float64(r.CopiedSegments))
	t.deleteReqs.WithLabelValues(r.Topic).Add(float64(r.DeletedSegments))
	if r.Failed {
		t.copyErrors.WithLabelValues(r.Topic).Inc()
	}
	t.logSizeBytes.WithLabelValues(r.Topic, p).Set(float64(r.RemoteSizeBytes))
	t.logSegments.WithLabelValues(r.Topic, p).Set(float64(r.RemoteCount))
	t.copyLagBytes.WithLabelValues(r.Topic, p).Set(float64(r.CopyLagBytes))
	t.copyLagCount.WithLabelValues(r.Topic, p).Set(float64(r.CopyLagSegments))
}

// DeleteFailed counts a failed deletion of a topic's remote data.
func (t *Tier) DeleteFailed(topic string) { t.deleteErrors.WithLabelValues(topic).Inc() }

// Forget drops the gauges of a partition no longer led here or deleted.
func (t *Tier) Forget(topic string, partition int32) {
	p := strconv.Itoa(int(partition))
	for _, g := range []*prometheus.GaugeVec{t.logSizeBytes, t.logSegments, t.copyLagBytes, t.copyLagCount} {
		g.DeleteLabelValues(topic, p)
	}
}
