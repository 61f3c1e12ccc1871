package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/security"
)

// securityWorkloads is (l): (h)'s produce and raw consume with the broker's
// one listener on SASL_SSL (TLS with the node's PKCS12 keystore, SCRAM-
// SHA-512), on Samsa only: its figures beside (h)'s, in the same round, are
// the cost of encryption and authentication on the data path (the security
// issue's target: produce at least 0.7× plaintext). Fetches over TLS take
// the copying read path, since Go has no kernel TLS for sendfile.
func securityWorkloads() []workload {
	return []workload{
		{id: "l", title: "as (h) over SASL_SSL (TLS, SCRAM-SHA-512), Samsa only",
			samsaOnly: true, security: benchSASLSSL,
			metrics: aclMetrics("SASL_SSL"), run: func(ctx context.Context, env *runEnv) (sample, error) { return runACLLoad(ctx, env, false) }},
	}
}

const (
	benchStorePassword = "bench-store"
	benchSCRAMPassword = "bench-scram-password"
)

// benchSASLSSL writes (once per process) a CA and a node keystore for
// 127.0.0.1 into a temporary directory, and returns the broker overrides
// that put its listener on SASL_SSL with a SCRAM-SHA-512 user, and the
// client options that trust the CA and log in as that user.
var benchSASLSSL = sync.OnceValues(func() (securitySetup, error) {
	dir, err := os.MkdirTemp("", "samsa-bench-tls-")
	if err != nil {
		return securitySetup{}, err
	}
	authority, err := security.NewAuthority("samsa bench CA", 24*time.Hour)
	if err != nil {
		return securitySetup{}, err
	}
	node, err := authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: "samsa-bench"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: 24 * time.Hour})
	if err != nil {
		return securitySetup{}, err
	}
	keystore, err := security.KeystorePKCS12(node, benchStorePassword)
	if err != nil {
		return securitySetup{}, err
	}
	for name, data := range map[string][]byte{"node.p12": keystore, "ca.pem": security.CertificatePEM(authority.Certificate)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return securitySetup{}, err
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(authority.Certificate)
	return securitySetup{
		overrides: []string{
			"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
			"ssl.keystore.type=PKCS12",
			"ssl.keystore.location=" + filepath.Join(dir, "node.p12"),
			"ssl.keystore.password=" + benchStorePassword,
			"ssl.truststore.type=PEM",
			"ssl.truststore.location=" + filepath.Join(dir, "ca.pem"),
			"sasl.enabled.mechanisms=SCRAM-SHA-512",
			"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
			"listener.name.plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"bench\" password=\"" + benchSCRAMPassword + "\";",
			"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=bench,password=" + benchSCRAMPassword + "]",
		},
		clientOpts: []kgo.Opt{
			kgo.DialTLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
			kgo.SASL(scram.Auth{User: "bench", Pass: benchSCRAMPassword}.AsSha512Mechanism()),
		},
	}, nil
})

// securitySetup is what a secured workload adds: broker overrides and the
// client options to reach it.
type securitySetup struct {
	overrides  []string
	clientOpts []kgo.Opt
}
