package security

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/youmark/pkcs8"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

func verifiedState(leaf *x509.Certificate) tls.ConnectionState {
	if leaf == nil {
		return tls.ConnectionState{}
	}
	return tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf}}}
}

// testPKI is a CA, a server certificate for localhost and a client
// certificate, written as files of every store type.
type testPKI struct {
	dir       string
	authority *Authority
	server    *tls.Certificate
	client    *tls.Certificate
}

const testPassword = "test-secret"

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	authority, err := NewAuthority("Samsa test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	server, err := authority.Issue(CertificateRequest{Subject: pkix.Name{CommonName: "broker"}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	client, err := authority.Issue(CertificateRequest{Subject: pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"Eng"}}, ValidFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{dir: t.TempDir(), authority: authority, server: server, client: client}
	p.writeStores(t, "server", server)
	p.writeStores(t, "client", client)
	p.write(t, "ca.pem", CertificatePEM(authority.Certificate))
	trustP12, err := TruststorePKCS12(testPassword, authority.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, "truststore.p12", trustP12)
	trustJKS, err := TruststoreJKS(testPassword, authority.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, "truststore.jks", trustJKS)
	return p
}

func (p *testPKI) writeStores(t *testing.T, name string, certificate *tls.Certificate) {
	keyPEM, err := KeyPairPEM(certificate)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, name+".pem", keyPEM)
	p12, err := KeystorePKCS12(certificate, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, name+".p12", p12)
	jks, err := KeystoreJKS(certificate, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, name+".jks", jks)
}

func (p *testPKI) write(t *testing.T, name string, data []byte) {
	if err := os.WriteFile(filepath.Join(p.dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *testPKI) path(name string) string { return filepath.Join(p.dir, name) }

// handshake runs a TLS handshake over a pipe and returns both sides' states.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, tls.ConnectionState, error) {
	t.Helper()
	serverSide, clientSide := net.Pipe()
	defer serverSide.Close()
	defer clientSide.Close()
	serverConn, clientConn := tls.Server(serverSide, server), tls.Client(clientSide, client)
	deadline := time.Now().Add(10 * time.Second)
	serverConn.SetDeadline(deadline)
	clientConn.SetDeadline(deadline)
	serverErr := make(chan error, 1)
	go func() { serverErr <- serverConn.Handshake() }()
	clientErr := clientConn.Handshake()
	if clientErr != nil {
		serverSide.Close()
	} else {
		// With TLS 1.3 the server judges the client's certificate after the
		// client is done; read so that its alert can be delivered.
		go clientConn.Read(make([]byte, 1))
	}
	err := <-serverErr
	if clientErr != nil {
		err = clientErr
	}
	return serverConn.ConnectionState(), clientConn.ConnectionState(), err
}

func TestKeystoreAndTruststoreTypes(t *testing.T) {
	p := newTestPKI(t)
	serverPEM, _ := os.ReadFile(p.path("server.pem"))
	chain, key := splitPEM(t, serverPEM)
	for _, c := range []struct {
		name       string
		server     map[string]string
		truststore map[string]string
	}{
		{"PEM file", map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("server.pem")},
			map[string]string{KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem")}},
		{"PEM inline", map[string]string{KeyKeystoreType: "PEM", KeyKeystoreCertificateChain: chain, KeyKeystoreKey: key},
			map[string]string{KeyTruststoreType: "PEM", KeyTruststoreCertificates: string(CertificatePEM(p.authority.Certificate))}},
		{"PKCS12", map[string]string{KeyKeystoreType: "PKCS12", KeyKeystoreLocation: p.path("server.p12"), KeyKeystorePassword: testPassword},
			map[string]string{KeyTruststoreType: "PKCS12", KeyTruststoreLocation: p.path("truststore.p12"), KeyTruststorePassword: testPassword}},
		{"JKS (default type)", map[string]string{KeyKeystoreLocation: p.path("server.jks"), KeyKeystorePassword: testPassword, KeyKeyPassword: testPassword},
			map[string]string{KeyTruststoreLocation: p.path("truststore.jks"), KeyTruststorePassword: testPassword}},
	} {
		t.Run(c.name, func(t *testing.T) {
			serverSettings := mustSettings(t, merge(c.server, c.truststore, map[string]string{KeyClientAuth: "required"}))
			server, err := NewServerTLS(vfs.Default, serverSettings, nil)
			if err != nil {
				t.Fatal(err)
			}
			clientSettings := mustSettings(t, merge(c.truststore, map[string]string{
				KeyKeystoreType: "PKCS12", KeyKeystoreLocation: p.path("client.p12"), KeyKeystorePassword: testPassword,
			}))
			client, err := ClientConfig(vfs.Default, clientSettings, "localhost")
			if err != nil {
				t.Fatal(err)
			}
			serverState, _, err := handshake(t, server.Config(), client)
			if err != nil {
				t.Fatal(err)
			}
			principal, err := server.Principal(serverState)
			if want := "User:CN=alice,OU=Eng"; err != nil || principal != want {
				t.Fatalf("principal = %q, %v; want %q", principal, err, want)
			}
		})
	}
}

func splitPEM(t *testing.T, data []byte) (chain, key string) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return chain, key
		}
		if block.Type == "CERTIFICATE" {
			chain += string(pem.EncodeToMemory(block))
		} else {
			key = string(pem.EncodeToMemory(block))
		}
	}
}

func merge(maps ...map[string]string) map[string]string {
	out := make(map[string]string)
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func mustSettings(t *testing.T, properties map[string]string) Settings {
	t.Helper()
	s, err := SettingsFromMap(properties)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEncryptedPEMKey(t *testing.T) {
	p := newTestPKI(t)
	encrypted, err := pkcs8.MarshalPrivateKey(p.server.PrivateKey, []byte(testPassword), nil)
	if err != nil {
		t.Fatal(err)
	}
	data := string(CertificatePEM(p.server.Leaf)) + string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: encrypted}))
	p.write(t, "encrypted.pem", []byte(data))
	base := map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("encrypted.pem")}
	if _, err := NewServerTLS(vfs.Default, mustSettings(t, merge(base, map[string]string{KeyKeyPassword: testPassword})), nil); err != nil {
		t.Fatalf("with ssl.key.password: %v", err)
	}
	_, err = NewServerTLS(vfs.Default, mustSettings(t, merge(base, map[string]string{KeyKeyPassword: "wrong"})), nil)
	if !errors.Is(err, ErrInvalidConfig) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("with a wrong password: %v; want ErrInvalidConfig without the password", err)
	}
	if _, err := NewServerTLS(vfs.Default, mustSettings(t, base), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("without a password: %v", err)
	}
}

func TestWrongStorePasswordIsRefusedWithoutLeakingIt(t *testing.T) {
	p := newTestPKI(t)
	for _, storeType := range []string{"PKCS12", "JKS"} {
		location := p.path("server.p12")
		if storeType == "JKS" {
			location = p.path("server.jks")
		}
		_, err := NewServerTLS(vfs.Default, mustSettings(t, map[string]string{KeyKeystoreType: storeType, KeyKeystoreLocation: location, KeyKeystorePassword: "not-the-password"}), nil)
		if !errors.Is(err, ErrInvalidConfig) || strings.Contains(err.Error(), "not-the-password") {
			t.Errorf("%s: %v", storeType, err)
		}
	}
}

func TestClientAuthModes(t *testing.T) {
	p := newTestPKI(t)
	serverBase := map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("server.pem"), KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem")}
	trustOnly := mustSettings(t, map[string]string{KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem")})
	withCert := mustSettings(t, map[string]string{KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem"), KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("client.pem")})
	for _, c := range []struct {
		auth          string
		client        Settings
		wantErr       bool
		wantPrincipal string
	}{
		{"none", withCert, false, AnonymousPrincipal},
		{"requested", trustOnly, false, AnonymousPrincipal},
		{"requested", withCert, false, "User:CN=alice,OU=Eng"},
		{"required", trustOnly, true, ""},
		{"required", withCert, false, "User:CN=alice,OU=Eng"},
	} {
		server, err := NewServerTLS(vfs.Default, mustSettings(t, merge(serverBase, map[string]string{KeyClientAuth: c.auth})), nil)
		if err != nil {
			t.Fatal(err)
		}
		client, err := ClientConfig(vfs.Default, c.client, "localhost")
		if err != nil {
			t.Fatal(err)
		}
		state, _, err := handshake(t, server.Config(), client)
		if c.wantErr {
			if err == nil {
				t.Errorf("%s without a client certificate: handshake succeeded", c.auth)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.auth, err)
			continue
		}
		if got, _ := server.Principal(state); got != c.wantPrincipal {
			t.Errorf("%s: principal %q, want %q", c.auth, got, c.wantPrincipal)
		}
	}
}

func TestEndpointIdentification(t *testing.T) {
	p := newTestPKI(t)
	server, err := NewServerTLS(vfs.Default, mustSettings(t, map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("server.pem")}), nil)
	if err != nil {
		t.Fatal(err)
	}
	trust := map[string]string{KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem")}
	verifying, _ := ClientConfig(vfs.Default, mustSettings(t, trust), "wrong.example")
	if _, _, err := handshake(t, server.Config(), verifying); err == nil {
		t.Fatal("host name mismatch accepted with ssl.endpoint.identification.algorithm=https")
	}
	lenient, _ := ClientConfig(vfs.Default, mustSettings(t, merge(trust, map[string]string{KeyEndpointIdentificationAlgorithm: ""})), "wrong.example")
	if _, _, err := handshake(t, server.Config(), lenient); err != nil {
		t.Fatalf("empty ssl.endpoint.identification.algorithm: %v", err)
	}
	untrusted, _ := ClientConfig(vfs.Default, mustSettings(t, map[string]string{KeyEndpointIdentificationAlgorithm: ""}), "localhost")
	if _, _, err := handshake(t, server.Config(), untrusted); err == nil {
		t.Fatal("an untrusted chain was accepted with host name checks off")
	}
}

func TestProtocolsAndCipherSuites(t *testing.T) {
	p := newTestPKI(t)
	keystore := map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("server.pem")}
	trust := map[string]string{KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem")}
	server12, err := NewServerTLS(vfs.Default, mustSettings(t, merge(keystore, map[string]string{
		KeyEnabledProtocols: "TLSv1.2", KeyCipherSuites: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	})), nil)
	if err != nil {
		t.Fatal(err)
	}
	client, _ := ClientConfig(vfs.Default, mustSettings(t, trust), "localhost")
	state, _, err := handshake(t, server12.Config(), client)
	if err != nil {
		t.Fatal(err)
	}
	if state.Version != tls.VersionTLS12 || state.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Fatalf("negotiated version %x suite %x", state.Version, state.CipherSuite)
	}
	client13, _ := ClientConfig(vfs.Default, mustSettings(t, merge(trust, map[string]string{KeyEnabledProtocols: "TLSv1.3"})), "localhost")
	if _, _, err := handshake(t, server12.Config(), client13); err == nil {
		t.Fatal("a TLSv1.3-only client reached a TLSv1.2-only server")
	}
	for _, bad := range []map[string]string{{KeyEnabledProtocols: "SSLv3"}, {KeyCipherSuites: "TLS_NOT_A_SUITE"}, {KeyClientAuth: "sometimes"}, {KeyKeystoreType: "BKS"}} {
		s, err := SettingsFromMap(merge(keystore, bad))
		if err == nil {
			_, err = NewServerTLS(vfs.Default, s, nil)
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%v: %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestReloadOnFileChange(t *testing.T) {
	p := newTestPKI(t)
	p.write(t, "live.pem", mustRead(t, p.path("server.pem")))
	reloads := make(chan error, 4)
	server, err := NewServerTLS(vfs.Default, mustSettings(t, map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("live.pem")}), func(err error) { reloads <- err })
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	server.now = func() time.Time { return clock }
	before := server.Current().Certificates[0].Leaf.SerialNumber

	// A renewed certificate with the same subject and names is taken.
	renewed, err := p.authority.Issue(CertificateRequest{Subject: pkix.Name{CommonName: "broker"}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	renewedPEM, _ := KeyPairPEM(renewed)
	p.write(t, "live.pem", renewedPEM)
	os.Chtimes(p.path("live.pem"), clock.Add(time.Minute), clock.Add(time.Minute))
	clock = clock.Add(ReloadCheckInterval)
	client, _ := ClientConfig(vfs.Default, mustSettings(t, map[string]string{KeyTruststoreType: "PEM", KeyTruststoreLocation: p.path("ca.pem")}), "localhost")
	_, clientState, err := handshake(t, server.Config(), client)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-reloads; err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := clientState.PeerCertificates[0].SerialNumber; got.Cmp(renewed.Leaf.SerialNumber) != 0 || got.Cmp(before) == 0 {
		t.Fatalf("the handshake after the change served serial %v, want the renewed %v", got, renewed.Leaf.SerialNumber)
	}

	// A certificate for another subject is refused; the renewed one stays.
	other, _ := p.authority.Issue(CertificateRequest{Subject: pkix.Name{CommonName: "impostor"}, DNSNames: []string{"localhost"}, ValidFor: time.Hour})
	otherPEM, _ := KeyPairPEM(other)
	p.write(t, "live.pem", otherPEM)
	os.Chtimes(p.path("live.pem"), clock.Add(2*time.Minute), clock.Add(2*time.Minute))
	clock = clock.Add(ReloadCheckInterval)
	server.Config().GetConfigForClient(nil)
	if err := <-reloads; !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("reload to another subject: %v, want ErrInvalidConfig", err)
	}
	if got := server.Current().Certificates[0].Leaf.SerialNumber; got.Cmp(renewed.Leaf.SerialNumber) != 0 {
		t.Fatal("a refused reload replaced the keystore")
	}

	// A half-written file is refused too.
	p.write(t, "live.pem", renewedPEM[:len(renewedPEM)/2])
	os.Chtimes(p.path("live.pem"), clock.Add(3*time.Minute), clock.Add(3*time.Minute))
	clock = clock.Add(ReloadCheckInterval)
	server.Config().GetConfigForClient(nil)
	if err := <-reloads; err == nil {
		t.Fatal("a truncated keystore was accepted")
	}
}

func mustRead(t *testing.T, name string) []byte {
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
