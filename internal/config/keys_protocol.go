package config

import "strconv"

// protocolBrokerKeys are the broker keys that bound what one request of a
// Kafka API may ask for.
var protocolBrokerKeys = []Key{
	{Name: "max.request.partition.size.limit", Type: typeInt, Default: "2000", Check: atLeast(1),
		Doc:         "The maximum number of partitions that can be served in one request (DescribeTopicPartitions); a request asking for more is answered with a cursor to continue from.",
		brokerField: func(b *Broker) any { return &b.MaxRequestPartitionSizeLimit }},
}

// telemetryBrokerKeys are the broker keys of client telemetry (KIP-714).
var telemetryBrokerKeys = []Key{
	{Name: "telemetry.max.bytes", Type: typeInt, Default: "1048576", Check: atLeast(1),
		Doc: "The maximum size, in bytes, of the metrics a client may push in one PushTelemetry request, compressed or decompressed; a larger push answers TELEMETRY_TOO_LARGE."},
}

// TelemetryMaxBytes is telemetry.max.bytes.
func (b *Broker) TelemetryMaxBytes() int32 {
	v, _ := b.Get("telemetry.max.bytes")
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 1048576
	}
	return int32(n)
}
