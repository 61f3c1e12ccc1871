package clustertest

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/security"
)

// sslStorePassword protects the test cluster's PKCS12 keystore.
const sslStorePassword = "cluster-test-store"

// StartSSLCluster is StartCluster with every listener, client, inter-broker
// and controller, on SSL with required client certificates: one CA, one
// node certificate for 127.0.0.1 shared by the nodes (keystore PKCS12,
// truststore PEM), so Raft, controller RPCs and replica fetchers all
// authenticate with it. The cluster's ClientOpts hold a client
// certificate of the same CA.
func StartSSLCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	c, ssl := sslSetup(t)
	return startClusterEach(t, c, n, nil, append(ssl, overrides...)...)
}

// StartSSLDedicatedCluster is StartDedicatedCluster with every listener on
// SSL as in StartSSLCluster: the brokers follow the metadata log, register
// and forward admin requests over the controllers' SSL listener.
func StartSSLDedicatedCluster(t testing.TB, controllers, brokers int, overrides ...string) *Cluster {
	t.Helper()
	c, ssl := sslSetup(t)
	return startDedicatedCluster(t, c, controllers, brokers, append(ssl, overrides...)...)
}

// sslSetup writes the stores of an SSL test cluster and returns a Cluster
// with the client options and the node overrides that use them.
func sslSetup(t testing.TB) (*Cluster, []string) {
	t.Helper()
	dir := t.TempDir()
	authority, err := security.NewAuthority("cluster test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	nodeCertificate, err := authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: "samsa-node"}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clientCertificate, err := authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: "test-client"}, ValidFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	keystore, err := security.KeystorePKCS12(nodeCertificate, sslStorePassword)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"node.p12": keystore, "ca.pem": security.CertificatePEM(authority.Certificate)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(authority.Certificate)
	clientTLS := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{*clientCertificate}}
	c := &Cluster{ClientOpts: []kgo.Opt{kgo.DialTLSConfig(clientTLS)}}
	ssl := []string{
		// The test cluster's listener names stay PLAINTEXT and CONTROLLER;
		// both now map to SSL.
		"listener.security.protocol.map=PLAINTEXT:SSL,CONTROLLER:SSL",
		"ssl.keystore.type=PKCS12",
		"ssl.keystore.location=" + filepath.Join(dir, "node.p12"),
		"ssl.keystore.password=" + sslStorePassword,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + filepath.Join(dir, "ca.pem"),
		"ssl.client.auth=required",
	}
	return c, ssl
}
