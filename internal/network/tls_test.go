package network

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// testTLS is a CA with a server certificate for 127.0.0.1 and a client
// certificate for CN=alice.
type testTLS struct {
	roots  *x509.CertPool
	server *tls.Certificate
	client *tls.Certificate
}

func newTestTLS(t testing.TB) *testTLS {
	t.Helper()
	// The network package sits below internal/security, so its tests make
	// their certificates with the standard library alone.
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "network test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(serial int64, subject pkix.Name, ips []net.IP) *tls.Certificate {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		template := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: subject, IPAddresses: ips,
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
		if err != nil {
			t.Fatal(err)
		}
		return &tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &testTLS{
		roots:  roots,
		server: issue(2, pkix.Name{CommonName: "broker"}, []net.IP{net.IPv4(127, 0, 0, 1)}),
		client: issue(3, pkix.Name{CommonName: "alice", Organization: []string{"Samsa"}}, nil),
	}
}

func (p *testTLS) listener(clientAuth tls.ClientAuthType) ListenerSpec {
	return ListenerSpec{
		Name: "SSL", Address: "127.0.0.1:0", SecurityProtocol: "SSL",
		TLS: &tls.Config{Certificates: []tls.Certificate{*p.server}, ClientAuth: clientAuth, ClientCAs: p.roots, MinVersion: tls.VersionTLS12},
		// Kafka's principal mapping is internal/security's; here the
		// certificate's common name stands for it.
		TLSPrincipal: func(state tls.ConnectionState) (string, error) {
			if len(state.PeerCertificates) == 0 {
				return "User:ANONYMOUS", nil
			}
			return "User:" + state.PeerCertificates[0].Subject.CommonName, nil
		},
	}
}

func (p *testTLS) dial(t testing.TB, s *Server, withCertificate bool) *tls.Conn {
	t.Helper()
	config := &tls.Config{RootCAs: p.roots, ServerName: "127.0.0.1"}
	if withCertificate {
		config.Certificates = []tls.Certificate{*p.client}
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: testTimeout}, Config: config}
	conn, err := dialer.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn.(*tls.Conn)
}

// roundTrip sends a Metadata v1 request and returns the response body.
func roundTrip(t testing.TB, conn net.Conn, correlationID int32) []byte {
	t.Helper()
	conn.SetDeadline(time.Now().Add(testTimeout))
	if _, err := conn.Write(requestFrame(3, 1, correlationID, stringPointer("test"), nil, nil)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, frame); err != nil {
		t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != correlationID {
		t.Fatalf("correlation id %d, want %d", got, correlationID)
	}
	return frame[4:]
}

// connInfoHandler answers with what the connection is known as.
var connInfoHandler = HandlerFunc(func(ctx context.Context, req *Request) {
	verified := 0
	if req.Conn.TLS != nil {
		verified = len(req.Conn.TLS.VerifiedChains)
	}
	req.Respond(BytesResponse(fmt.Appendf(nil, "%s|%s|%d", req.Conn.Principal, req.Conn.SecurityProtocol, verified)))
})

func TestTLSListenerPrincipals(t *testing.T) {
	p := newTestTLS(t)
	s := startServer(t, Config{Listeners: []ListenerSpec{p.listener(tls.VerifyClientCertIfGiven)}}, connInfoHandler)
	if got := string(roundTrip(t, p.dial(t, s, true), 1)); got != "User:alice|SSL|1" {
		t.Errorf("with a client certificate: %q", got)
	}
	if got := string(roundTrip(t, p.dial(t, s, false), 2)); got != "User:ANONYMOUS|SSL|0" {
		t.Errorf("without a client certificate: %q", got)
	}
}

func TestTLSListenerRefusesPlaintextAndGarbage(t *testing.T) {
	p := newTestTLS(t)
	s := startServer(t, Config{Listeners: []ListenerSpec{p.listener(tls.RequireAndVerifyClientCert)}}, connInfoHandler)
	for i, hello := range [][]byte{
		requestFrame(18, 0, 1, stringPointer("plaintext client"), nil, nil), // ApiVersions in the clear
		bytes.Repeat([]byte{0x16, 0x03, 0x01, 0xff, 0xff}, 64),              // a record header promising garbage
		{0x16, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5},                       // a handshake record of nonsense
	} {
		conn, err := net.DialTimeout("tcp", s.Addrs()[0].String(), testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(testTimeout))
		conn.Write(hello)
		// The server answers with at most a TLS alert, never a Kafka
		// response, and closes.
		reply, err := io.ReadAll(conn)
		if netErr, ok := err.(net.Error); ok && netErr.Timeout() {
			t.Fatalf("case %d: connection still open", i)
		}
		if len(reply) > 0 && reply[0] != 0x15 {
			t.Errorf("case %d: reply % x is not a TLS alert", i, reply)
		}
		conn.Close()
	}
	// A client without the required certificate is refused too.
	conn := p.dial(t, s, false)
	conn.SetDeadline(time.Now().Add(testTimeout))
	conn.Write(requestFrame(3, 1, 1, stringPointer("test"), nil, nil))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("a client without a certificate got an answer from a listener that requires one")
	}
	waitFor(t, "failed handshakes counted", func() bool { return s.Stats().TLSHandshakesFailed == 4 })
	// The broker carries on.
	if got := string(roundTrip(t, p.dial(t, s, true), 7)); got != "User:alice|SSL|1" {
		t.Errorf("after the bad clients: %q", got)
	}
	waitFor(t, "bad connections closed", func() bool { return s.Stats().ConnectionsActive == 1 })
}

func TestTLSFileRegionsAreCopied(t *testing.T) {
	p := newTestTLS(t)
	file, content := tempFile(t, 1<<20)
	const offset, length = 333, 700_001
	s := startServer(t, Config{Listeners: []ListenerSpec{p.listener(tls.NoClientCert)}}, HandlerFunc(func(ctx context.Context, req *Request) {
		req.Respond(Response{Chunks: []Chunk{{Bytes: []byte("head")}, {File: file, Offset: offset, Length: length}, {Bytes: []byte("tail")}}})
	}))
	conn := p.dial(t, s, false)
	want := append(append([]byte("head"), content[offset:offset+length]...), "tail"...)
	for i := int32(1); i <= 2; i++ {
		if got := roundTrip(t, conn, i); !bytes.Equal(got, want) {
			t.Fatalf("response %d: %d bytes, want the %d-byte region", i, len(got), len(want))
		}
	}
	waitFor(t, "file bytes counted", func() bool { return s.Stats().CopiedFileBytes == 2*length })
	if st := s.Stats(); st.SendfileBytes != 0 {
		t.Errorf("sendfile used on a TLS connection: %d bytes", st.SendfileBytes)
	}
}

// BenchmarkFileRegionResponsesTLS is BenchmarkFileRegionResponses' 1 MiB
// case over plaintext (sendfile) and over TLS (copied and sealed), side by side.
func BenchmarkFileRegionResponsesTLS(b *testing.B) {
	p := newTestTLS(b)
	const regionBytes = 1 << 20
	file, err := os.CreateTemp(b.TempDir(), "regions")
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	if _, err := file.Write(make([]byte, 12*regionBytes)); err != nil {
		b.Fatal(err)
	}
	handler := HandlerFunc(func(ctx context.Context, req *Request) {
		chunks := make([]Chunk, 0, 24)
		for i := range 12 {
			chunks = append(chunks, Chunk{Bytes: make([]byte, 60)}, Chunk{File: file, Offset: int64(i * regionBytes), Length: regionBytes})
		}
		req.Respond(Response{Chunks: chunks})
	})
	for _, protocol := range []string{"PLAINTEXT", "SSL"} {
		b.Run(protocol, func(b *testing.B) {
			var conn net.Conn
			if protocol == "SSL" {
				s := startServer(b, Config{Listeners: []ListenerSpec{p.listener(tls.NoClientCert)}}, handler)
				conn = p.dial(b, s, false)
			} else {
				s := startServer(b, Config{}, handler)
				plain, err := net.Dial("tcp", s.Addrs()[0].String())
				if err != nil {
					b.Fatal(err)
				}
				defer plain.Close()
				conn = plain
			}
			frame := requestFrame(1, 4, 1, stringPointer("bench"), nil, nil)
			reader := bufio.NewReaderSize(conn, 64<<10)
			b.SetBytes(12 * (60 + regionBytes))
			for b.Loop() {
				if _, err := conn.Write(frame); err != nil {
					b.Fatal(err)
				}
				var size [4]byte
				if _, err := io.ReadFull(reader, size[:]); err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyN(io.Discard, reader, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestShutdownDoesNotWaitForSilentTLSClients: a client that connects to a
// TLS listener and never says hello does not hold up a graceful shutdown
// for the handshake timeout.
func TestShutdownDoesNotWaitForSilentTLSClients(t *testing.T) {
	p := newTestTLS(t)
	s, err := NewServer(Config{Listeners: []ListenerSpec{p.listener(tls.NoClientCert)}}, connInfoHandler, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	silent, err := net.DialTimeout("tcp", s.Addrs()[0].String(), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	waitFor(t, "the silent connection accepted", func() bool { return s.Stats().ConnectionsActive == 1 })
	// Well under TLSHandshakeTimeoutMs: a shutdown that waited for the
	// handshake to time out would fail with the context's error.
	ctx, cancel := context.WithTimeout(context.Background(), TLSHandshakeTimeoutMs*time.Millisecond/2)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
