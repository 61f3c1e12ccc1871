package cli

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/security"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// isClientTLSProperty reports whether key is one of the Java client's
// ssl.* properties the CLI honours: ssl.truststore.*, ssl.keystore.*,
// ssl.key.password, ssl.endpoint.identification.algorithm,
// ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites.
func isClientTLSProperty(key string) bool {
	return slices.Contains(security.TLSKeys, key) && key != security.KeyClientAuth && key != security.KeyPrincipalMappingRules
}

// securityOpts are the kgo options for the file's security.protocol.
func (p clientProperties) securityOpts() ([]kgo.Opt, error) {
	saslOpts, err := p.sasl.options()
	if err != nil {
		return nil, err
	}
	if p.securityProtocol != "SSL" && p.securityProtocol != "SASL_SSL" {
		// As in Kafka, ssl.* settings apply only with security.protocol
		// SSL or SASL_SSL.
		return saslOpts, nil
	}
	settings, err := security.SettingsFromMap(p.ssl)
	if err != nil {
		return nil, fmt.Errorf("--command-config: %w", err)
	}
	config, err := security.ClientConfig(vfs.Default, settings, "")
	if err != nil {
		return nil, fmt.Errorf("--command-config: %w", err)
	}
	return append(saslOpts, kgo.DialTLSConfig(config)), nil
}
