package telemetry

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
)

// MetricPrefix starts the name of every pushed client metric on /metrics.
const MetricPrefix = "samsa_client_metric_"

// maxExportedPoints bounds the client data points one scrape of /metrics
// shows, over all instances.
const maxExportedPoints = 50000

// clientLabels label every pushed point: the client's identity as the
// broker knows it, and the point's own attributes.
var clientLabels = []string{ClientInstanceID, ClientID, ClientSoftwareName, ClientSoftwareVersion, ClientSourceAddress, "attributes"}

var (
	descInstances = prometheus.NewDesc("samsa_client_telemetry_instances",
		"Client instances the broker tracks for client telemetry (KIP-714; Kafka's client-metrics instance-count).", nil, nil)
	descRequests = prometheus.NewDesc("samsa_client_telemetry_requests_total",
		"GetTelemetrySubscriptions and PushTelemetry requests answered, by error (none for success).", []string{"error"}, nil)
)

// Collector shows on /metrics the instances, the answers given, and the
// points of each instance's last push as untyped samples named
// samsa_client_metric_<metric name with every other character than [a-zA-Z0-9_]
// made _>, labelled with the client's identity and the point's attributes.
// Every point is untyped, so two clients pushing one name as a counter
// and as a gauge cannot make the metric family inconsistent.
func (m *Manager) Collector() prometheus.Collector { return collector{m} }

type collector struct{ m *Manager }

// Describe sends nothing: the pushed metrics are not known in advance, so
// the collector is unchecked.
func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	instances := c.m.Instances()
	ch <- prometheus.MustNewConstMetric(descInstances, prometheus.GaugeValue, float64(len(instances)))
	for code, n := range c.m.Answers() {
		name := "none"
		if code != 0 {
			name = kerr.ErrorForCode(code).(*kerr.Error).Message
		}
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), name)
	}
	descs := map[string]*prometheus.Desc{}
	exported := 0
	for _, inst := range instances {
		id := FormatID(inst.ID)
		seen := map[string]bool{}
		for _, p := range inst.Points {
			if exported >= maxExportedPoints {
				return
			}
			name := MetricPrefix + sanitizeName(p.Name)
			// One sample per name and attributes: a payload naming a point
			// twice shows the first.
			if key := name + "\x00" + p.Attributes; seen[key] {
				continue
			} else {
				seen[key] = true
			}
			desc := descs[name]
			if desc == nil {
				desc = prometheus.NewDesc(name, "Client metric pushed through KIP-714 client telemetry.", clientLabels, nil)
				descs[name] = desc
			}
			metric, err := prometheus.NewConstMetric(desc, prometheus.UntypedValue, p.Value,
				id, validLabel(inst.Client.ID), validLabel(inst.Client.SoftwareName), validLabel(inst.Client.SoftwareVersion),
				inst.Client.SourceAddress, validLabel(p.Attributes))
			if err != nil {
				continue
			}
			ch <- metric
			exported++
		}
	}
}

// sanitizeName maps a metric name (org.apache.kafka.producer.record.send.rate)
// to a Prometheus one (org_apache_kafka_producer_record_send_rate).
func sanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "unnamed"
	}
	return b.String()
}

// validLabel makes a client-supplied value a valid label value (UTF-8).
func validLabel(v string) string { return strings.ToValidUTF8(v, "?") }
