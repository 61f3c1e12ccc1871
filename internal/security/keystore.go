package security

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// storeFileBytesMax bounds a keystore or truststore file; real ones are a few
// kilobytes, a CA bundle a few hundred.
const storeFileBytesMax = 16 << 20

// readStoreFile reads a keystore or truststore file through fsys.
func readStoreFile(fsys vfs.FS, key, name string) ([]byte, error) {
	file, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, key, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, key, err)
	}
	if info.Size() > storeFileBytesMax {
		return nil, fmt.Errorf("%w: %s: file %s is larger than %d bytes", ErrInvalidConfig, key, name, storeFileBytesMax)
	}
	data := make([]byte, info.Size())
	n, err := file.ReadAt(data, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, key, err)
	}
	return data[:n], nil
}

// loadKeystore loads the certificate chain and private key of s's keystore.
// It returns nil when no keystore is configured.
func loadKeystore(fsys vfs.FS, s Settings) (*tls.Certificate, error) {
	if !s.HasKeystore() {
		return nil, nil
	}
	if s.KeystoreKey != "" || s.KeystoreCertificateChain != "" {
		if s.KeystoreType != StoreTypePEM {
			return nil, fmt.Errorf("%w: %s and %s need %s=PEM", ErrInvalidConfig, KeyKeystoreKey, KeyKeystoreCertificateChain, KeyKeystoreType)
		}
		if s.KeystoreLocation != "" {
			return nil, fmt.Errorf("%w: %s and an inline %s cannot both be set", ErrInvalidConfig, KeyKeystoreLocation, KeyKeystoreKey)
		}
		if s.KeystoreKey == "" || s.KeystoreCertificateChain == "" {
			return nil, fmt.Errorf("%w: both %s and %s must be set", ErrInvalidConfig, KeyKeystoreKey, KeyKeystoreCertificateChain)
		}
		return pemKeyPair([]byte(s.KeystoreCertificateChain+"\n"+s.KeystoreKey), s.KeyPassword)
	}
	data, err := readStoreFile(fsys, KeyKeystoreLocation, s.KeystoreLocation)
	if err != nil {
		return nil, err
	}
	switch s.KeystoreType {
	case StoreTypePEM:
		return pemKeyPair(data, s.KeyPassword)
	case StoreTypePKCS12:
		key, leaf, chain, err := pkcs12.DecodeChain(data, s.KeystorePassword)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: PKCS12 keystore: %w", ErrInvalidConfig, KeyKeystoreLocation, err)
		}
		return certificateOf(key, append([]*x509.Certificate{leaf}, chain...))
	default:
		return jksKeyPair(data, s)
	}
}

// jksKeyPair reads the first private key entry of a Java KeyStore.
func jksKeyPair(data []byte, s Settings) (*tls.Certificate, error) {
	store := keystore.New(keystore.WithMinPasswordLen(0), keystore.WithOrderedAliases())
	if err := store.Load(bytes.NewReader(data), []byte(s.KeystorePassword)); err != nil {
		return nil, fmt.Errorf("%w: %s: JKS keystore: %w", ErrInvalidConfig, KeyKeystoreLocation, err)
	}
	keyPassword := s.KeyPassword
	if keyPassword == "" {
		keyPassword = s.KeystorePassword
	}
	for _, alias := range store.Aliases() {
		if !store.IsPrivateKeyEntry(alias) {
			continue
		}
		entry, err := store.GetPrivateKeyEntry(alias, []byte(keyPassword))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: JKS key entry %q (check %s): %w", ErrInvalidConfig, KeyKeystoreLocation, alias, KeyKeyPassword, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(entry.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: JKS key entry %q: %w", ErrInvalidConfig, KeyKeystoreLocation, alias, err)
		}
		var chain []*x509.Certificate
		for _, certificate := range entry.CertificateChain {
			parsed, err := x509.ParseCertificate(certificate.Content)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: JKS certificate of %q: %w", ErrInvalidConfig, KeyKeystoreLocation, alias, err)
			}
			chain = append(chain, parsed)
		}
		return certificateOf(key, chain)
	}
	return nil, fmt.Errorf("%w: %s: JKS keystore holds no private key entry", ErrInvalidConfig, KeyKeystoreLocation)
}

// pemKeyPair reads a private key and a certificate chain (leaf first) from
// PEM blocks; an ENCRYPTED PRIVATE KEY is decrypted with keyPassword.
func pemKeyPair(data []byte, keyPassword string) (*tls.Certificate, error) {
	var chain []*x509.Certificate
	var key crypto.PrivateKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		switch block.Type {
		case "CERTIFICATE":
			certificate, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: PEM keystore certificate: %w", ErrInvalidConfig, err)
			}
			chain = append(chain, certificate)
		case "ENCRYPTED PRIVATE KEY":
			if keyPassword == "" {
				return nil, fmt.Errorf("%w: the PEM private key is encrypted and %s is not set", ErrInvalidConfig, KeyKeyPassword)
			}
			parsed, _, err := pkcs8.ParsePrivateKey(block.Bytes, []byte(keyPassword))
			if err != nil {
				return nil, fmt.Errorf("%w: decrypting the PEM private key (check %s) failed", ErrInvalidConfig, KeyKeyPassword)
			}
			key = parsed
		case "PRIVATE KEY":
			parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: PEM private key: %w", ErrInvalidConfig, err)
			}
			key = parsed
		case "RSA PRIVATE KEY":
			parsed, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: PEM RSA private key: %w", ErrInvalidConfig, err)
			}
			key = parsed
		case "EC PRIVATE KEY":
			parsed, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: PEM EC private key: %w", ErrInvalidConfig, err)
			}
			key = parsed
		}
	}
	if key == nil {
		return nil, fmt.Errorf("%w: the PEM keystore holds no private key", ErrInvalidConfig)
	}
	return certificateOf(key, chain)
}

// certificateOf pairs key with chain, checking that the leaf's public key is
// key's.
func certificateOf(key crypto.PrivateKey, chain []*x509.Certificate) (*tls.Certificate, error) {
	if len(chain) == 0 || chain[0] == nil {
		return nil, fmt.Errorf("%w: the keystore holds no certificate for its private key", ErrInvalidConfig)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: unsupported private key type %T", ErrInvalidConfig, key)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	public, ok := signer.Public().(equaler)
	if !ok || !public.Equal(chain[0].PublicKey) {
		return nil, fmt.Errorf("%w: the keystore's private key does not match its certificate %s", ErrInvalidConfig, chain[0].Subject)
	}
	switch key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
	default:
		return nil, fmt.Errorf("%w: unsupported private key type %T", ErrInvalidConfig, key)
	}
	certificate := &tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		certificate.Certificate = append(certificate.Certificate, c.Raw)
	}
	return certificate, nil
}

// loadTruststore loads the trusted certificates of s's truststore. It
// returns nil when none is configured, meaning the system's roots.
func loadTruststore(fsys vfs.FS, s Settings) (*x509.CertPool, error) {
	if !s.HasTruststore() {
		return nil, nil
	}
	var certificates []*x509.Certificate
	switch {
	case s.TruststoreCertificates != "":
		if s.TruststoreType != StoreTypePEM {
			return nil, fmt.Errorf("%w: %s needs %s=PEM", ErrInvalidConfig, KeyTruststoreCertificates, KeyTruststoreType)
		}
		if s.TruststoreLocation != "" {
			return nil, fmt.Errorf("%w: %s and %s cannot both be set", ErrInvalidConfig, KeyTruststoreLocation, KeyTruststoreCertificates)
		}
		parsed, err := pemCertificates([]byte(s.TruststoreCertificates))
		if err != nil {
			return nil, err
		}
		certificates = parsed
	default:
		data, err := readStoreFile(fsys, KeyTruststoreLocation, s.TruststoreLocation)
		if err != nil {
			return nil, err
		}
		switch s.TruststoreType {
		case StoreTypePEM:
			certificates, err = pemCertificates(data)
		case StoreTypePKCS12:
			certificates, err = pkcs12.DecodeTrustStore(data, s.TruststorePassword)
			if err != nil {
				err = fmt.Errorf("%w: %s: PKCS12 truststore: %w", ErrInvalidConfig, KeyTruststoreLocation, err)
			}
		default:
			certificates, err = jksCertificates(data, s.TruststorePassword)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(certificates) == 0 {
		return nil, fmt.Errorf("%w: the truststore holds no certificate", ErrInvalidConfig)
	}
	pool := x509.NewCertPool()
	for _, certificate := range certificates {
		pool.AddCert(certificate)
	}
	return pool, nil
}

func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var certificates []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return certificates, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		certificate, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: PEM truststore certificate: %w", ErrInvalidConfig, err)
		}
		certificates = append(certificates, certificate)
	}
}

// jksCertificates reads the trusted certificate entries of a Java KeyStore,
// and the chains of its key entries, as Java's trust manager does.
func jksCertificates(data []byte, password string) ([]*x509.Certificate, error) {
	store := keystore.New(keystore.WithMinPasswordLen(0), keystore.WithOrderedAliases())
	if err := store.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, fmt.Errorf("%w: %s: JKS truststore: %w", ErrInvalidConfig, KeyTruststoreLocation, err)
	}
	var certificates []*x509.Certificate
	for _, alias := range store.Aliases() {
		var raw [][]byte
		switch {
		case store.IsTrustedCertificateEntry(alias):
			entry, err := store.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: JKS entry %q: %w", ErrInvalidConfig, KeyTruststoreLocation, alias, err)
			}
			raw = append(raw, entry.Certificate.Content)
		case store.IsPrivateKeyEntry(alias):
			chain, err := store.GetPrivateKeyEntryCertificateChain(alias)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: JKS entry %q: %w", ErrInvalidConfig, KeyTruststoreLocation, alias, err)
			}
			for _, c := range chain {
				raw = append(raw, c.Content)
			}
		}
		for _, der := range raw {
			certificate, err := x509.ParseCertificate(der)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: JKS certificate %q: %w", ErrInvalidConfig, KeyTruststoreLocation, alias, err)
			}
			certificates = append(certificates, certificate)
		}
	}
	return certificates, nil
}
