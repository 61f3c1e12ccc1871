package server

import (
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-streaming/samsa/internal/quota"
)

// quotaMetricEntitiesMax bounds the quota metrics: per quota type, the
// busiest buckets only, so label cardinality stays bounded however many
// users and client ids connect.
const quotaMetricEntitiesMax = 50

// Quota metrics, per quota type and bucket (the user and client id whose
// quota is measured together, as Kafka's user and client-id tags).
var (
	labelsQuota       = []string{"quota_type", "user", "client_id"}
	descQuotaRate     = prometheus.NewDesc("samsa_quota_rate", "Measured rate per quota bucket: bytes per second (produce, fetch), percent of a handler (request), mutations per second (controller_mutation).", labelsQuota, nil)
	descQuotaThrottle = prometheus.NewDesc("samsa_quota_throttle_time_ms_per_second", "Throttle time handed out per second, per quota bucket.", labelsQuota, nil)
	descQuotaThrottls = prometheus.NewDesc("samsa_quota_throttles_total", "Throttled requests per quota bucket since it was created.", labelsQuota, nil)
	descQuotaBound    = prometheus.NewDesc("samsa_quota_limit", "The quota that applies to the bucket.", labelsQuota, nil)
)

// quotaCollector reports the quota manager's busiest buckets.
type quotaCollector struct{ m *quota.Manager }

func (c quotaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descQuotaRate
	ch <- descQuotaThrottle
	ch <- descQuotaThrottls
	ch <- descQuotaBound
}

func (c quotaCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.m.Stats(time.Now().UnixMilli(), quotaMetricEntitiesMax) {
		labels := []string{quotaTypeLabel(s.Kind), s.Bucket.User, s.Bucket.ClientID}
		ch <- prometheus.MustNewConstMetric(descQuotaRate, prometheus.GaugeValue, s.Rate, labels...)
		ch <- prometheus.MustNewConstMetric(descQuotaThrottle, prometheus.GaugeValue, s.ThrottleMsPerSecond, labels...)
		ch <- prometheus.MustNewConstMetric(descQuotaThrottls, prometheus.CounterValue, float64(s.Throttles), labels...)
		if !math.IsInf(s.Bound, 1) {
			ch <- prometheus.MustNewConstMetric(descQuotaBound, prometheus.GaugeValue, s.Bound, labels...)
		}
	}
}

// quotaTypeLabel is a kind's label: produce, fetch, request,
// controller_mutation.
func quotaTypeLabel(k quota.Kind) string {
	if k == quota.ControllerMutation {
		return "controller_mutation"
	}
	return strings.ToLower(k.String())
}
