package api

// PushTelemetry (key 72), version 0 (KIP-714).
//
// Behavior:
//   - Any client may push; Kafka authorizes nothing here.
//   - The metrics, an OTLP MetricsData message compressed with
//     compression_type, are decoded and shown on /metrics labelled with
//     the client (package telemetry), replacing the client's last push.
//   - Errors, checked in Kafka's order: a zero or reserved client instance
//     id, or a push after a terminating one, INVALID_REQUEST; sooner than
//     the push interval (a terminating push and the first push after
//     GetTelemetrySubscriptions excepted) THROTTLING_QUOTA_EXCEEDED; a
//     subscription id that is not the client's current one
//     UNKNOWN_SUBSCRIPTION_ID; an unknown codec
//     UNSUPPORTED_COMPRESSION_TYPE; more than telemetry.max.bytes,
//     compressed or decompressed, TELEMETRY_TOO_LARGE; a payload that does
//     not decompress or decode INVALID_RECORD.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/telemetry"
)

func init() { register(72, 0, 0, handlePushTelemetry) }

func handlePushTelemetry(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.PushTelemetryRequest)
	resp := kmsg.NewPtrPushTelemetryResponse()
	if b.Telemetry == nil {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		c.reply(resp)
		return
	}
	code, message := b.Telemetry.Push(telemetry.PushRequest{
		ClientInstanceID: req.ClientInstanceID, SubscriptionID: req.SubscriptionID, Terminating: req.Terminating,
		CompressionType: req.CompressionType, Metrics: req.Metrics,
	}, telemetryClient(c), b.Now().UnixMilli())
	if code != 0 {
		b.Logger.Debug("push telemetry refused", "client_instance_id", telemetry.FormatID(req.ClientInstanceID), "error_code", code, "reason", message)
	}
	resp.ErrorCode = code
	c.reply(resp)
}
