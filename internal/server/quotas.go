package server

import (
	"slices"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/quota"
)

// quotaWindows are the measurement windows of the node's quotas.
func quotaWindows(cfg *config.Broker) quota.Config {
	return quota.Config{
		Windows: quota.Windows{Samples: cfg.QuotaWindowNum(), WindowMs: int64(cfg.QuotaWindowSizeSeconds()) * 1000},
		ControllerWindows: quota.Windows{Samples: cfg.ControllerQuotaWindowNum(),
			WindowMs: int64(cfg.ControllerQuotaWindowSizeSeconds()) * 1000},
	}
}

// newQuotas builds the node's client quota manager and keeps it in step
// with the quotas of the metadata image, so every broker applies the
// ClientQuotaRecords it has replayed.
func newQuotas(cfg *config.Broker, ctrl *controller.Controller, connections *quota.ConnectionRates) *quota.Manager {
	m := quota.NewManager(quotaWindows(cfg))
	ctrl.Subscribe(func(old, next *metadata.Image) {
		if old.ClientQuotas() != next.ClientQuotas() || old.Offset < 0 {
			m.SetTable(next.ClientQuotas())
			connections.SetTable(next.ClientQuotas())
		}
	})
	return m
}

// connectionQuota adapts the connection rates to the network layer:
// per-IP connection_creation_rate from the image's quotas, per-listener
// max.connection.creation.rate from the effective broker config. The
// controller listener, which brokers use, is exempt.
type connectionQuota struct {
	rates      *quota.ConnectionRates
	config     func() *config.Broker
	controller []string
}

func (q connectionQuota) AdmitIP(ip string, nowMs int64) int64 {
	return q.rates.AdmitIP(ip, nowMs)
}

func (q connectionQuota) AdmitListener(listener string, nowMs int64) int64 {
	if slices.Contains(q.controller, listener) {
		return 0
	}
	return q.rates.AdmitListener(listener, float64(q.config().MaxConnectionCreationRate(listener)), nowMs)
}

// withConnectionLimits adds the connection limits of the quotas to the
// network config: max.connections.per.ip.overrides and the creation rates.
func (n *Node) withConnectionLimits(cfg network.Config) network.Config {
	cfg.MaxConnectionsPerIPOverrides = n.cfg.MaxConnectionsPerIPOverrides()
	cfg.ConnectionRates = connectionQuota{rates: n.connectionRates, config: n.broker.Config, controller: n.cfg.ControllerListenerNames}
	return cfg
}
