package security

import (
	"fmt"
	"strings"
)

// Kafka's ssl.* keys and defaults.
const (
	KeyProtocol                        = "ssl.protocol"
	KeyEnabledProtocols                = "ssl.enabled.protocols"
	KeyCipherSuites                    = "ssl.cipher.suites"
	KeyClientAuth                      = "ssl.client.auth"
	KeyEndpointIdentificationAlgorithm = "ssl.endpoint.identification.algorithm"
	KeyKeystoreType                    = "ssl.keystore.type"
	KeyKeystoreLocation                = "ssl.keystore.location"
	KeyKeystorePassword                = "ssl.keystore.password"
	KeyKeyPassword                     = "ssl.key.password"
	KeyKeystoreKey                     = "ssl.keystore.key"
	KeyKeystoreCertificateChain        = "ssl.keystore.certificate.chain"
	KeyTruststoreType                  = "ssl.truststore.type"
	KeyTruststoreLocation              = "ssl.truststore.location"
	KeyTruststorePassword              = "ssl.truststore.password"
	KeyTruststoreCertificates          = "ssl.truststore.certificates"
	KeyPrincipalMappingRules           = "ssl.principal.mapping.rules"
	KeyAllowDNChanges                  = "ssl.allow.dn.changes"
	KeyAllowSANChanges                 = "ssl.allow.san.changes"

	DefaultProtocol         = "TLSv1.3"
	DefaultEnabledProtocols = "TLSv1.2,TLSv1.3"
	DefaultClientAuth       = ClientAuthNone
	DefaultEndpointIDAlgo   = "https"
	DefaultStoreType        = StoreTypeJKS
	DefaultMappingRules     = "DEFAULT"
)

// Store types of ssl.keystore.type and ssl.truststore.type.
const (
	StoreTypeJKS    = "JKS"
	StoreTypePKCS12 = "PKCS12"
	StoreTypePEM    = "PEM"
)

// ssl.client.auth values.
const (
	ClientAuthNone      = "none"
	ClientAuthRequested = "requested"
	ClientAuthRequired  = "required"
)

// TLSKeys lists every ssl.* key Settings reads, for callers that resolve
// listener prefixes or copy properties.
var TLSKeys = []string{
	KeyProtocol, KeyEnabledProtocols, KeyCipherSuites, KeyClientAuth,
	KeyEndpointIdentificationAlgorithm, KeyKeystoreType, KeyKeystoreLocation,
	KeyKeystorePassword, KeyKeyPassword, KeyKeystoreKey, KeyKeystoreCertificateChain,
	KeyTruststoreType, KeyTruststoreLocation, KeyTruststorePassword,
	KeyTruststoreCertificates, KeyPrincipalMappingRules, KeyAllowDNChanges, KeyAllowSANChanges,
}

// Settings are the ssl.* settings of one listener or one client. Passwords
// and keys are secrets: Settings has no String method that prints them, and
// errors built from it name keys, never values.
type Settings struct {
	Protocol                        string
	EnabledProtocols                []string
	CipherSuites                    []string
	ClientAuth                      string
	EndpointIdentificationAlgorithm string

	KeystoreType             string
	KeystoreLocation         string
	KeystorePassword         string
	KeyPassword              string
	KeystoreKey              string
	KeystoreCertificateChain string

	TruststoreType         string
	TruststoreLocation     string
	TruststorePassword     string
	TruststoreCertificates string

	PrincipalMappingRules string
	// AllowDNChanges and AllowSANChanges let a reloaded keystore change the
	// certificate's subject or subject alternative names.
	AllowDNChanges  bool
	AllowSANChanges bool
}

// SettingsFrom reads Settings through lookup, which returns a key's value
// and whether it is set; unset keys take Kafka's defaults.
func SettingsFrom(lookup func(key string) (string, bool)) (Settings, error) {
	get := func(key, fallback string) string {
		if value, ok := lookup(key); ok {
			return strings.TrimSpace(value)
		}
		return fallback
	}
	s := Settings{
		Protocol:                        get(KeyProtocol, DefaultProtocol),
		EnabledProtocols:                splitList(get(KeyEnabledProtocols, DefaultEnabledProtocols)),
		CipherSuites:                    splitList(get(KeyCipherSuites, "")),
		ClientAuth:                      strings.ToLower(get(KeyClientAuth, DefaultClientAuth)),
		EndpointIdentificationAlgorithm: get(KeyEndpointIdentificationAlgorithm, DefaultEndpointIDAlgo),
		KeystoreType:                    strings.ToUpper(get(KeyKeystoreType, DefaultStoreType)),
		KeystoreLocation:                get(KeyKeystoreLocation, ""),
		KeystorePassword:                get(KeyKeystorePassword, ""),
		KeyPassword:                     get(KeyKeyPassword, ""),
		KeystoreKey:                     get(KeyKeystoreKey, ""),
		KeystoreCertificateChain:        get(KeyKeystoreCertificateChain, ""),
		TruststoreType:                  strings.ToUpper(get(KeyTruststoreType, DefaultStoreType)),
		TruststoreLocation:              get(KeyTruststoreLocation, ""),
		TruststorePassword:              get(KeyTruststorePassword, ""),
		TruststoreCertificates:          get(KeyTruststoreCertificates, ""),
		PrincipalMappingRules:           get(KeyPrincipalMappingRules, DefaultMappingRules),
		AllowDNChanges:                  strings.EqualFold(get(KeyAllowDNChanges, "false"), "true"),
		AllowSANChanges:                 strings.EqualFold(get(KeyAllowSANChanges, "false"), "true"),
	}
	switch s.ClientAuth {
	case ClientAuthNone, ClientAuthRequested, ClientAuthRequired:
	default:
		return Settings{}, fmt.Errorf("%w: %s must be one of none, requested, required", ErrInvalidConfig, KeyClientAuth)
	}
	for _, storeType := range []struct{ key, value string }{{KeyKeystoreType, s.KeystoreType}, {KeyTruststoreType, s.TruststoreType}} {
		switch storeType.value {
		case StoreTypeJKS, StoreTypePKCS12, StoreTypePEM:
		default:
			return Settings{}, fmt.Errorf("%w: %s must be JKS, PKCS12 or PEM", ErrInvalidConfig, storeType.key)
		}
	}
	return s, nil
}

// SettingsFromMap is SettingsFrom over a map of properties.
func SettingsFromMap(properties map[string]string) (Settings, error) {
	return SettingsFrom(func(key string) (string, bool) {
		value, ok := properties[key]
		return value, ok
	})
}

// HasKeystore reports whether a keystore is configured, by file or inline.
func (s Settings) HasKeystore() bool {
	return s.KeystoreLocation != "" || s.KeystoreKey != "" || s.KeystoreCertificateChain != ""
}

// HasTruststore reports whether a truststore is configured, by file or inline.
func (s Settings) HasTruststore() bool {
	return s.TruststoreLocation != "" || s.TruststoreCertificates != ""
}

func splitList(value string) []string {
	var items []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
