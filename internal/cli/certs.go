package cli

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/samsa-streaming/samsa/internal/security"
)

// certsOptions are the flags of samsa certs.
type certsOptions struct {
	dir      string
	nodes    []string
	clients  []string
	password string
	validFor time.Duration
}

// newCertsCommand is samsa certs: a CA and per-node certificates for a
// development or test cluster. Beyond Kafka, which leaves this to keytool
// and openssl.
func newCertsCommand(*globalOptions) *cobra.Command {
	o := certsOptions{}
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Create a CA and node and client certificates for a dev or test cluster",
		Long: `Create a certificate authority (or reuse the one in --dir) and sign a
certificate for every --node, with the DNS names and IP addresses given as
its subject alternative names, and for every --client (CN=<name>, for mTLS
principals). Each certificate is written as PEM (<name>.crt, <name>.key)
and as a PKCS12 keystore (<name>.p12); the CA as ca.crt and as a PKCS12
truststore (truststore.p12). The broker and client properties to use them
are printed.

These certificates are for development and tests: the CA key sits beside
them, unencrypted.`,
		Example: `  samsa certs --dir ./certs --node broker1=localhost,127.0.0.1 --node broker2=broker2.internal,10.0.0.2
  samsa certs --dir ./certs --client alice`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCerts(cmd.OutOrStdout(), o)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&o.dir, "dir", "samsa-certs", "directory for the CA, certificates and stores")
	flags.StringArrayVar(&o.nodes, "node", nil, "a node certificate: NAME=SAN,SAN,... (DNS names or IP addresses); repeatable")
	flags.StringArrayVar(&o.clients, "client", nil, "a client certificate with subject CN=NAME; repeatable")
	flags.StringVar(&o.password, "password", "", "password of the PKCS12 stores (default: a random one, printed with the properties)")
	flags.DurationVar(&o.validFor, "valid-for", 365*24*time.Hour, "lifetime of the certificates")
	return cmd
}

func runCerts(out io.Writer, o certsOptions) error {
	if len(o.nodes) == 0 && len(o.clients) == 0 {
		return errors.New("certs: give at least one --node or --client")
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if o.password == "" {
		random := make([]byte, 18)
		if _, err := rand.Read(random); err != nil {
			return err
		}
		o.password = base64.RawURLEncoding.EncodeToString(random)
	}
	authority, created, err := loadOrCreateAuthority(o.dir, o.validFor)
	if err != nil {
		return err
	}
	if created {
		truststore, err := security.TruststorePKCS12(o.password, authority.Certificate)
		if err != nil {
			return err
		}
		if err := writeSecret(filepath.Join(o.dir, "truststore.p12"), truststore); err != nil {
			return err
		}
	}
	var written []string
	for _, node := range o.nodes {
		name, sans, _ := strings.Cut(node, "=")
		if !validCertName(name) {
			return fmt.Errorf("certs: --node %q: expected NAME=SAN,SAN,... with a name of letters, digits, '.', '-' or '_'", node)
		}
		request := security.CertificateRequest{Subject: pkix.Name{CommonName: name}, ValidFor: o.validFor}
		for _, san := range strings.Split(sans, ",") {
			if san = strings.TrimSpace(san); san == "" {
				continue
			}
			if ip := net.ParseIP(san); ip != nil {
				request.IPAddresses = append(request.IPAddresses, ip)
			} else {
				request.DNSNames = append(request.DNSNames, san)
			}
		}
		if len(request.DNSNames)+len(request.IPAddresses) == 0 {
			request.DNSNames = []string{name}
		}
		if err := issueInto(o.dir, name, authority, request, o.password); err != nil {
			return err
		}
		written = append(written, name)
	}
	for _, client := range o.clients {
		if !validCertName(client) {
			return fmt.Errorf("certs: --client %q: use letters, digits, '.', '-' or '_'", client)
		}
		if err := issueInto(o.dir, client, authority, security.CertificateRequest{Subject: pkix.Name{CommonName: client}, ValidFor: o.validFor}, o.password); err != nil {
			return err
		}
		written = append(written, client)
	}
	printCertProperties(out, o, written, created)
	return nil
}

func validCertName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// loadOrCreateAuthority reuses ca.crt and ca.key in dir, or creates them.
func loadOrCreateAuthority(dir string, validFor time.Duration) (*security.Authority, bool, error) {
	certificatePath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	certificatePEM, certErr := os.ReadFile(certificatePath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	if certErr == nil && keyErr == nil {
		pair, err := tls.X509KeyPair(certificatePEM, keyPEM)
		if err != nil {
			return nil, false, fmt.Errorf("certs: the CA in %s: %w", dir, err)
		}
		certificate, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return nil, false, err
		}
		signer, ok := pair.PrivateKey.(crypto.Signer)
		if !ok || !certificate.IsCA {
			return nil, false, fmt.Errorf("certs: %s is not a CA certificate with its key", certificatePath)
		}
		return &security.Authority{Certificate: certificate, Key: signer}, false, nil
	}
	authority, err := security.NewAuthority("Samsa development CA", validFor)
	if err != nil {
		return nil, false, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(authority.Key)
	if err != nil {
		return nil, false, err
	}
	if err := writeSecret(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})); err != nil {
		return nil, false, err
	}
	if err := os.WriteFile(certificatePath, security.CertificatePEM(authority.Certificate), 0o644); err != nil {
		return nil, false, err
	}
	return authority, true, nil
}

// issueInto signs a certificate and writes name.crt, name.key and name.p12.
func issueInto(dir, name string, authority *security.Authority, request security.CertificateRequest, password string) error {
	certificate, err := authority.Issue(request)
	if err != nil {
		return err
	}
	pair, err := security.KeyPairPEM(certificate)
	if err != nil {
		return err
	}
	index := strings.Index(string(pair), "-----BEGIN PRIVATE KEY-----")
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pair[:index], 0o644); err != nil {
		return err
	}
	if err := writeSecret(filepath.Join(dir, name+".key"), pair[index:]); err != nil {
		return err
	}
	keystore, err := security.KeystorePKCS12(certificate, password)
	if err != nil {
		return err
	}
	return writeSecret(filepath.Join(dir, name+".p12"), keystore)
}

// writeSecret writes a file only its owner may read.
func writeSecret(path string, data []byte) error {
	return os.WriteFile(path, data, 0o600)
}

func printCertProperties(out io.Writer, o certsOptions, names []string, created bool) {
	dir, _ := filepath.Abs(o.dir)
	if created {
		fmt.Fprintf(out, "# CA created: %s (truststore %s)\n", filepath.Join(dir, "ca.crt"), filepath.Join(dir, "truststore.p12"))
	} else {
		fmt.Fprintf(out, "# CA reused: %s; truststore.p12 keeps the password it was created with\n", filepath.Join(dir, "ca.crt"))
	}
	for _, name := range names {
		fmt.Fprintf(out, "# %s: %s.crt, %s.key, %s.p12\n", name, name, name, name)
	}
	first := names[0]
	fmt.Fprintf(out, `
# Broker (server.properties), here for %[1]s; one SSL listener, also for
# inter-broker and controller traffic:
listener.security.protocol.map=SSL:SSL,CONTROLLER:SSL
ssl.keystore.type=PKCS12
ssl.keystore.location=%[2]s/%[1]s.p12
ssl.keystore.password=%[3]s
ssl.truststore.type=PKCS12
ssl.truststore.location=%[2]s/truststore.p12
ssl.truststore.password=%[3]s
ssl.client.auth=required

# Clients (--command-config, Kafka's tools, the Java client):
security.protocol=SSL
ssl.truststore.type=PKCS12
ssl.truststore.location=%[2]s/truststore.p12
ssl.truststore.password=%[3]s
ssl.keystore.type=PKCS12
ssl.keystore.location=%[2]s/%[1]s.p12
ssl.keystore.password=%[3]s

# librdkafka (kcat, confluent-kafka): security.protocol=ssl
#   ssl.ca.location=%[2]s/ca.crt ssl.certificate.location=%[2]s/%[1]s.crt ssl.key.location=%[2]s/%[1]s.key
`, first, dir, o.password)
}
