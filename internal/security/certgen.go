package security

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Authority is a certificate authority that issues certificates for a
// development or test cluster (samsa certs, and tests).
type Authority struct {
	Certificate *x509.Certificate
	Key         crypto.Signer
}

// CertificateRequest describes a certificate to issue.
type CertificateRequest struct {
	// Subject is the certificate's subject; its RDNs appear in the principal
	// last first (CN first for a pkix.Name).
	Subject pkix.Name
	// DNSNames and IPAddresses are the subject alternative names a client
	// verifies the host against.
	DNSNames    []string
	IPAddresses []net.IP
	// ValidFor is the lifetime from now.
	ValidFor time.Duration
}

// NewAuthority creates a self-signed CA with an ECDSA P-256 key.
func NewAuthority(commonName string, validFor time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, err
	}
	certificate, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Certificate: certificate, Key: key}, nil
}

// Issue creates a key and a certificate signed by the authority, usable by
// both servers and clients (so brokers can verify each other with it).
func (a *Authority) Issue(request CertificateRequest) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      request.Subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(request.ValidFor),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     request.DNSNames,
		IPAddresses:  request.IPAddresses,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, a.Certificate, key.Public(), a.Key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, a.Certificate.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// CertificatePEM encodes certificates as PEM CERTIFICATE blocks.
func CertificatePEM(certificates ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certificates {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

// KeyPairPEM encodes a certificate's chain and its private key (PKCS#8,
// unencrypted) as one PEM keystore.
func KeyPairPEM(certificate *tls.Certificate) ([]byte, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(certificate.PrivateKey)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, der := range certificate.Certificate {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return append(out, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})...), nil
}

// KeystorePKCS12 encodes a certificate's key and chain as a PKCS#12
// keystore protected by password (modern AES/SHA-256 encryption, which
// Java 8u301 and later, OpenSSL 1.1.1 and later read).
func KeystorePKCS12(certificate *tls.Certificate, password string) ([]byte, error) {
	leaf, chain, err := parseChain(certificate)
	if err != nil {
		return nil, err
	}
	return pkcs12.Modern.Encode(certificate.PrivateKey, leaf, chain, password)
}

// TruststorePKCS12 encodes trusted certificates as a PKCS#12 truststore in
// the form Java's keytool writes.
func TruststorePKCS12(password string, certificates ...*x509.Certificate) ([]byte, error) {
	return pkcs12.Modern.EncodeTrustStore(certificates, password)
}

// KeystoreJKS encodes a certificate's key and chain as a Java KeyStore whose
// store and key passwords are both password.
func KeystoreJKS(certificate *tls.Certificate, password string) ([]byte, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(certificate.PrivateKey)
	if err != nil {
		return nil, err
	}
	store := keystore.New(keystore.WithMinPasswordLen(0))
	entry := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: keyDER}
	for _, der := range certificate.Certificate {
		entry.CertificateChain = append(entry.CertificateChain, keystore.Certificate{Type: "X509", Content: der})
	}
	if err := store.SetPrivateKeyEntry("key", entry, []byte(password)); err != nil {
		return nil, err
	}
	return storeBytes(store, password)
}

// TruststoreJKS encodes trusted certificates as a Java KeyStore.
func TruststoreJKS(password string, certificates ...*x509.Certificate) ([]byte, error) {
	store := keystore.New(keystore.WithMinPasswordLen(0))
	for i, c := range certificates {
		entry := keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: c.Raw}}
		if err := store.SetTrustedCertificateEntry(fmt.Sprintf("ca%d", i), entry); err != nil {
			return nil, err
		}
	}
	return storeBytes(store, password)
}

func storeBytes(store keystore.KeyStore, password string) ([]byte, error) {
	var buffer bytes.Buffer
	if err := store.Store(&buffer, []byte(password)); err != nil {
		return nil, err
	}
	return buffer.Bytes(), nil
}

func parseChain(certificate *tls.Certificate) (*x509.Certificate, []*x509.Certificate, error) {
	var parsed []*x509.Certificate
	for _, der := range certificate.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, nil, err
		}
		parsed = append(parsed, c)
	}
	if len(parsed) == 0 {
		return nil, nil, fmt.Errorf("security: certificate has no chain")
	}
	return parsed[0], parsed[1:], nil
}
