package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/security"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// isTLSProtocol reports whether a security protocol runs over TLS.
func isTLSProtocol(protocol string) bool {
	return protocol == "SSL" || protocol == "SASL_SSL"
}

// listenerTLSSettings reads a listener's ssl.* settings: each key's
// listener.name.<listener>. override, else the broker-wide value.
func listenerTLSSettings(cfg *config.Broker, listener string) (security.Settings, error) {
	return security.SettingsFrom(func(key string) (string, bool) {
		return cfg.ListenerValue(listener, key)
	})
}

// serverTLS builds the TLS side of an SSL or SASL_SSL listener; it returns
// nil for plaintext listeners. Reloads of changed keystore and truststore
// files are logged.
func serverTLS(cfg *config.Broker, listener string, logger *slog.Logger) (*security.ServerTLS, error) {
	if !isTLSProtocol(cfg.ListenerSecurityProtocolMap[listener]) {
		return nil, nil
	}
	settings, err := listenerTLSSettings(cfg, listener)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	onReload := func(err error) {
		if err != nil {
			logger.Warn("keystore or truststore changed but was not reloaded; the old one stays in use", "listener", listener, "error", err)
			return
		}
		logger.Info("keystore or truststore reloaded", "listener", listener)
	}
	serverTLS, err := security.NewServerTLS(vfs.Default, settings, onReload)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	return serverTLS, nil
}

// secureListenerSpec makes spec an SSL or SASL_SSL listener when its
// protocol says so. On SSL the client certificate names the principal; on
// SASL_SSL the SASL exchange does. The listener follows its ssl.* keys as
// dynamic returns them (IncrementalAlterConfigs).
func secureListenerSpec(cfg *config.Broker, spec network.ListenerSpec, dynamic func() *config.Broker, logger *slog.Logger) (network.ListenerSpec, error) {
	spec.SecurityProtocol = cfg.ListenerSecurityProtocolMap[spec.Name]
	serverTLS, err := serverTLS(cfg, spec.Name, logger)
	if err != nil || serverTLS == nil {
		return spec, err
	}
	followDynamicConfig(serverTLS, spec.Name, dynamic)
	spec.TLS = serverTLS.Config()
	if spec.SecurityProtocol == "SSL" {
		spec.TLSPrincipal = serverTLS.Principal
	}
	return spec, nil
}

// followDynamicConfig makes a listener's TLS follow its dynamic ssl.* keys.
func followDynamicConfig(serverTLS *security.ServerTLS, listener string, dynamic func() *config.Broker) {
	if serverTLS == nil || dynamic == nil {
		return
	}
	serverTLS.SetSource(func() (security.Settings, error) {
		return listenerTLSSettings(dynamic(), listener)
	})
}

// clientTLS is the *tls.Config this node dials a listener with, as a
// client of that listener: its truststore verifies the peer and its keystore
// is this node's certificate for peers that require one. nil for plaintext
// listeners.
func clientTLS(cfg *config.Broker, listener string) (*tls.Config, error) {
	if !isTLSProtocol(cfg.ListenerSecurityProtocolMap[listener]) {
		return nil, nil
	}
	settings, err := listenerTLSSettings(cfg, listener)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	config, err := security.ClientConfig(vfs.Default, settings, "")
	if err != nil {
		return nil, fmt.Errorf("listener %s as a client: %w", listener, err)
	}
	return config, nil
}

// clientOpts are the kgo options of every client this node opens to
// another node's listener (replica fetchers, transaction peers, controller
// RPCs, the metadata follower): the listener's security protocol and
// credentials. SASL adds its mechanism here too.
func clientOpts(cfg *config.Broker, listener string) ([]kgo.Opt, error) {
	config, err := clientTLS(cfg, listener)
	if err != nil {
		return nil, err
	}
	opts, err := clientSASLOptions(cfg, listener, saslMechanismFor(cfg, listener))
	if err != nil {
		return nil, err
	}
	if config != nil {
		opts = append(opts, kgo.DialTLSConfig(config))
	}
	return opts, nil
}

// clientOpts is clientOpts for this node's configuration.
func (n *Node) clientOpts(listener string) ([]kgo.Opt, error) {
	return clientOpts(n.cfg, listener)
}

// controllerListenerName is the listener controllers speak on.
func controllerListenerName(cfg *config.Broker) string {
	if len(cfg.ControllerListenerNames) == 0 {
		return ""
	}
	return cfg.ControllerListenerNames[0]
}

// endpointOf picks a broker's endpoint on listener, or its first endpoint
// when it registered none by that name.
func endpointOf(endpoints []metadata.Endpoint, listener string) metadata.Endpoint {
	for _, endpoint := range endpoints {
		if endpoint.Name == listener {
			return endpoint
		}
	}
	return endpoints[0]
}

// checkClientSecurity builds every client security configuration once at
// start, so a broken keystore fails the start instead of the first fetch.
func checkClientSecurity(cfg *config.Broker) error {
	for _, listener := range []string{cfg.InterBrokerListenerName, controllerListenerName(cfg)} {
		if listener == "" {
			continue
		}
		if _, err := clientOpts(cfg, listener); err != nil {
			return err
		}
	}
	return nil
}
