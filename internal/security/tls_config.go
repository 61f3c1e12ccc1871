package security

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// protocolVersions maps Java's protocol names to Go's TLS versions. SSLv3
// and older are not offered, as in every Java since 8u31.
var protocolVersions = map[string]uint16{
	"TLSV1":   tls.VersionTLS10,
	"TLSV1.1": tls.VersionTLS11,
	"TLSV1.2": tls.VersionTLS12,
	"TLSV1.3": tls.VersionTLS13,
}

// versionRange is the span of ssl.enabled.protocols, capped by ssl.protocol
// (an SSLContext of TLSv1.2 cannot speak TLSv1.3). Go configures a range, not
// a set: TLSv1.2 and TLSv1.3 together, the default, are exact.
func versionRange(s Settings) (minVersion, maxVersion uint16, err error) {
	for _, name := range s.EnabledProtocols {
		version, ok := protocolVersions[strings.ToUpper(name)]
		if !ok {
			return 0, 0, fmt.Errorf("%w: %s: unsupported protocol %q; supported are TLSv1.2 and TLSv1.3 (TLSv1 and TLSv1.1 are legacy)", ErrInvalidConfig, KeyEnabledProtocols, name)
		}
		if minVersion == 0 || version < minVersion {
			minVersion = version
		}
		maxVersion = max(maxVersion, version)
	}
	if minVersion == 0 {
		return 0, 0, fmt.Errorf("%w: %s is empty", ErrInvalidConfig, KeyEnabledProtocols)
	}
	if cap, ok := protocolVersions[strings.ToUpper(s.Protocol)]; ok && cap < maxVersion {
		maxVersion = cap
		if minVersion > maxVersion {
			return 0, 0, fmt.Errorf("%w: %s=%s does not allow any of %s", ErrInvalidConfig, KeyProtocol, s.Protocol, KeyEnabledProtocols)
		}
	}
	return minVersion, maxVersion, nil
}

// cipherSuiteIDs maps ssl.cipher.suites (the IANA names Java uses; an SSL_
// prefix is Java's alias of TLS_) to Go's TLS 1.0-1.2 suite ids. TLS 1.3
// suites are accepted by name but not configurable in Go, which always
// offers all three. An empty list means Go's defaults.
func cipherSuiteIDs(names []string) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	known := make(map[string]*tls.CipherSuite)
	for _, suite := range tls.CipherSuites() {
		known[suite.Name] = suite
	}
	for _, suite := range tls.InsecureCipherSuites() {
		known[suite.Name] = suite
	}
	var ids []uint16
	for _, name := range names {
		canonical := strings.ToUpper(name)
		if rest, ok := strings.CutPrefix(canonical, "SSL_"); ok {
			canonical = "TLS_" + rest
		}
		suite, ok := known[canonical]
		if !ok {
			return nil, fmt.Errorf("%w: %s: unsupported cipher suite %q", ErrInvalidConfig, KeyCipherSuites, name)
		}
		if len(suite.SupportedVersions) == 1 && suite.SupportedVersions[0] == tls.VersionTLS13 {
			continue
		}
		ids = append(ids, suite.ID)
	}
	return ids, nil
}

// baseConfig holds what servers and clients share: versions and suites.
func baseConfig(s Settings) (*tls.Config, error) {
	minVersion, maxVersion, err := versionRange(s)
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuiteIDs(s.CipherSuites)
	if err != nil {
		return nil, err
	}
	config := &tls.Config{MinVersion: minVersion, MaxVersion: maxVersion, CipherSuites: suites}
	if len(s.CipherSuites) > 0 && len(suites) == 0 && minVersion < tls.VersionTLS13 {
		// Only TLS 1.3 suites were named: as in Java, nothing older can be
		// negotiated.
		if maxVersion < tls.VersionTLS13 {
			return nil, fmt.Errorf("%w: %s names only TLS 1.3 suites but TLSv1.3 is not enabled", ErrInvalidConfig, KeyCipherSuites)
		}
		config.MinVersion = tls.VersionTLS13
	}
	return config, nil
}

// clientAuthType maps ssl.client.auth.
func clientAuthType(value string) tls.ClientAuthType {
	switch value {
	case ClientAuthRequired:
		return tls.RequireAndVerifyClientCert
	case ClientAuthRequested:
		return tls.VerifyClientCertIfGiven
	default:
		return tls.NoClientCert
	}
}

// buildServerConfig makes a listener's *tls.Config from material already loaded.
func buildServerConfig(s Settings, certificate *tls.Certificate, roots *x509.CertPool) (*tls.Config, error) {
	if certificate == nil {
		return nil, fmt.Errorf("%w: a TLS listener needs a keystore (%s, or %s and %s)", ErrInvalidConfig, KeyKeystoreLocation, KeyKeystoreKey, KeyKeystoreCertificateChain)
	}
	config, err := baseConfig(s)
	if err != nil {
		return nil, err
	}
	config.Certificates = []tls.Certificate{*certificate}
	config.ClientAuth = clientAuthType(s.ClientAuth)
	// A nil pool verifies client certificates against the system roots, as
	// Java's default trust manager does with cacerts.
	config.ClientCAs = roots
	return config, nil
}

// ClientConfig makes the *tls.Config of a client connecting with s: the
// truststore's roots (the system's when none is set), the keystore's
// certificate for mTLS, and host name verification unless
// ssl.endpoint.identification.algorithm is empty. serverName may be empty,
// for clients (such as franz-go) that fill it per broker.
func ClientConfig(fsys vfs.FS, s Settings, serverName string) (*tls.Config, error) {
	config, err := baseConfig(s)
	if err != nil {
		return nil, err
	}
	certificate, err := loadKeystore(fsys, s)
	if err != nil {
		return nil, err
	}
	roots, err := loadTruststore(fsys, s)
	if err != nil {
		return nil, err
	}
	if certificate != nil {
		config.Certificates = []tls.Certificate{*certificate}
	}
	config.RootCAs = roots
	config.ServerName = serverName
	switch strings.ToLower(s.EndpointIdentificationAlgorithm) {
	case "https":
	case "":
		// The chain is still verified; only the host name is not.
		config.InsecureSkipVerify = true
		config.VerifyConnection = func(state tls.ConnectionState) error {
			return verifyChainOnly(state, roots)
		}
	default:
		return nil, fmt.Errorf("%w: %s must be https or empty", ErrInvalidConfig, KeyEndpointIdentificationAlgorithm)
	}
	return config, nil
}

// verifyChainOnly verifies the peer's chain against roots without checking
// the host name.
func verifyChainOnly(state tls.ConnectionState, roots *x509.CertPool) error {
	if len(state.PeerCertificates) == 0 {
		return fmt.Errorf("security: the server sent no certificate")
	}
	intermediates := x509.NewCertPool()
	for _, certificate := range state.PeerCertificates[1:] {
		intermediates.AddCert(certificate)
	}
	_, err := state.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates})
	return err
}
