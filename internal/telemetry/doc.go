// Package telemetry is the broker side of client metrics (KIP-714): the
// client-metrics subscriptions operators set as CLIENT_METRICS config
// resources, the client instances that ask which metrics to push
// (GetTelemetrySubscriptions) and push them (PushTelemetry), and the
// pushed metrics, which /metrics shows with the client's labels.
//
// # Subscriptions
//
// A CLIENT_METRICS resource is named by its subscription and holds up to
// three configs: metrics (a comma-separated list of metric name prefixes;
// * for all), interval.ms (100 to 3600000, default 300000) and match
// (comma-separated attribute=pattern pairs over client_instance_id,
// client_id, client_software_name, client_software_version,
// client_source_address and client_source_port; each RE2 pattern must
// match the attribute's whole value; none matches every client). A client
// instance gets the union of the metrics of every subscription it matches
// and the shortest of their intervals, under a subscription id that
// changes when they do.
//
// # Payload
//
// A PushTelemetry request carries an OpenTelemetry MetricsData message in
// protobuf (opentelemetry/proto/metrics/v1/metrics.proto), compressed with
// the codec compression_type names, a record batch codec id:
//
//	0 none   1 gzip   2 snappy (raw block or xerial framing)   3 lz4 (frame)   4 zstd
//
// Both the payload and what it decompresses to are bounded by
// telemetry.max.bytes. Gauge and sum points are kept as they are;
// histograms, exponential histograms and summaries as a _count and a _sum
// point.
//
// Manager is a deterministic core: time comes in as an argument and it
// runs nothing in the background.
package telemetry
