package server

import (
	"context"
	"maps"
	"time"

	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/telemetry"
)

// telemetryExpiryIntervalMs is how often idle client telemetry instances
// are forgotten.
const telemetryExpiryIntervalMs = 10000

// setupTelemetry gives the broker its client telemetry manager (KIP-714),
// fed the client-metrics subscriptions of every metadata image, and shows
// the pushed metrics on /metrics.
func (n *Node) setupTelemetry() {
	m := telemetry.NewManager(telemetry.Config{MaxBytes: n.cfg.TelemetryMaxBytes()})
	n.broker.Telemetry = m
	n.metrics.Registry.MustRegister(m.Collector())
	n.controller.Subscribe(func(old, next *metadata.Image) {
		if !clientMetricsChanged(old, next) {
			return
		}
		var subs []telemetry.Subscription
		for _, name := range next.ConfigResourceNames(metadata.ResourceClientMetrics) {
			s, err := telemetry.ParseSubscription(name, next.Configs(metadata.ResourceClientMetrics, name))
			if err != nil {
				// Validated before it was stored; a record from a newer
				// version may still not parse here.
				n.logger.Warn("ignoring client metrics subscription", "name", name, "err", err)
				continue
			}
			subs = append(subs, s)
		}
		m.SetSubscriptions(subs)
	})
}

// clientMetricsChanged reports whether the subscriptions differ.
func clientMetricsChanged(old, next *metadata.Image) bool {
	a, b := old.ConfigResourceNames(metadata.ResourceClientMetrics), next.ConfigResourceNames(metadata.ResourceClientMetrics)
	if len(a) != len(b) {
		return true
	}
	for i, name := range a {
		if name != b[i] || !maps.Equal(old.Configs(metadata.ResourceClientMetrics, name), next.Configs(metadata.ResourceClientMetrics, name)) {
			return true
		}
	}
	return false
}

// runTelemetryExpiry forgets idle client instances until ctx ends.
func (n *Node) runTelemetryExpiry(ctx context.Context) {
	ticker := time.NewTicker(telemetryExpiryIntervalMs * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			n.broker.Telemetry.Expire(now.UnixMilli())
		}
	}
}
