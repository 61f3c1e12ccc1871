package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/httpserve"
	"github.com/samsa-streaming/samsa/internal/security"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// The https listeners of the HTTP services (schema.registry.listeners,
// http.proxy.listeners) use the broker-wide ssl.* keys, as SSL Kafka
// listeners without listener.name overrides do: ssl.keystore.* names the
// certificate, ssl.client.auth=required asks clients for one signed by
// ssl.truststore.*, and changed store files are reloaded. The node's own
// HTTP clients (registry forwarding, the REST proxy's registry client)
// trust ssl.truststore.*.

// brokerTLSSettings reads the broker-wide ssl.* keys.
func brokerTLSSettings(cfg *config.Broker) (security.Settings, error) {
	return security.SettingsFrom(cfg.Get)
}

// httpServerTLS is the TLS of service's https listeners, nil when it has
// none.
func httpServerTLS(cfg *config.Broker, service string, listeners []httpserve.Listener, logger *slog.Logger) (*tls.Config, error) {
	if !httpserve.AnyHTTPS(listeners) {
		return nil, nil
	}
	settings, err := brokerTLSSettings(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s https: %w", service, err)
	}
	serverTLS, err := security.NewServerTLS(vfs.Default, settings, func(err error) {
		if err != nil {
			logger.Warn("keystore or truststore changed but was not reloaded; the old one stays in use", "service", service, "error", err)
			return
		}
		logger.Info("keystore or truststore reloaded", "service", service)
	})
	if err != nil {
		return nil, fmt.Errorf("%s https: %w", service, err)
	}
	return serverTLS.Config(), nil
}

// httpClientTLS is the TLS the node's own HTTP clients use towards its
// https services.
func httpClientTLS(cfg *config.Broker) (*tls.Config, error) {
	settings, err := brokerTLSSettings(cfg)
	if err != nil {
		return nil, err
	}
	return security.ClientConfig(vfs.Default, settings, "")
}
