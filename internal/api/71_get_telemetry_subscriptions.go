package api

// GetTelemetrySubscriptions (key 71), version 0 (KIP-714).
//
// Behavior:
//   - Any client may ask; Kafka authorizes nothing here.
//   - A zero client_instance_id gets a new one. The answer is the union of
//     the metrics of every client-metrics subscription the client matches
//     (by its instance id, client id, the software name and version of its
//     ApiVersions request, its address and port), the shortest of their
//     push intervals, telemetry.max.bytes, delta temporality, and the
//     accepted codecs zstd, lz4, gzip, snappy (package telemetry).
//   - Asking again sooner than the push interval answers
//     THROTTLING_QUOTA_EXCEEDED, unless the subscriptions changed or the
//     last push failed with UNKNOWN_SUBSCRIPTION_ID or
//     UNSUPPORTED_COMPRESSION_TYPE.

import (
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/telemetry"
)

func init() { register(71, 0, 0, handleGetTelemetrySubscriptions) }

func handleGetTelemetrySubscriptions(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	if b.Telemetry == nil {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		c.reply(resp)
		return
	}
	res := b.Telemetry.GetSubscriptions(req.ClientInstanceID, telemetryClient(c), b.Now().UnixMilli())
	resp.ErrorCode = res.ErrorCode
	if res.ErrorCode == 0 {
		resp.ClientInstanceID = res.ClientInstanceID
		resp.SubscriptionID = res.SubscriptionID
		resp.AcceptedCompressionTypes = telemetry.AcceptedCompressionTypes
		resp.PushIntervalMillis = res.PushIntervalMs
		resp.TelemetryMaxBytes = res.TelemetryMaxBytes
		resp.DeltaTemporality = true
		resp.RequestedMetrics = res.RequestedMetrics
		if resp.RequestedMetrics == nil {
			resp.RequestedMetrics = []string{}
		}
	}
	c.reply(resp)
}

// telemetryClient is what the request tells of its client.
func telemetryClient(c *call) telemetry.Client {
	var client telemetry.Client
	if c.req.ClientID != nil {
		client.ID = *c.req.ClientID
	}
	if conn := c.req.Conn; conn != nil {
		client.SoftwareName, client.SoftwareVersion = conn.Software.Get()
		if tcp, ok := conn.RemoteAddr.(*net.TCPAddr); ok {
			client.SourceAddress = tcp.IP.String()
			client.SourcePort = strconv.Itoa(tcp.Port)
		}
	}
	return client
}
