package server

import (
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
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
