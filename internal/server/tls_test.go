package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/security"
)

// tlsFiles is a CA, a broker keystore (PKCS12) and truststore (JKS), and a
// client certificate for CN=alice,O=Samsa as PEM files.
type tlsFiles struct {
	dir                         string
	authority                   *security.Authority
	roots                       *x509.CertPool
	client                      *tls.Certificate
	caPEM, clientPEM, clientKey string
}

const tlsTestPassword = "broker-store-secret"

func newTLSFiles(t *testing.T) *tlsFiles {
	t.Helper()
	authority, err := security.NewAuthority("server test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	broker, err := authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: "broker"}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	client, err := authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"Samsa"}}, ValidFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsFiles{dir: t.TempDir(), authority: authority, roots: x509.NewCertPool(), client: client}
	f.roots.AddCert(authority.Certificate)
	write := func(name string, data []byte, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(f.dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p12, err := security.KeystorePKCS12(broker, tlsTestPassword)
	write("broker.p12", p12, err)
	jks, err := security.TruststoreJKS(tlsTestPassword, authority.Certificate)
	write("truststore.jks", jks, err)
	f.caPEM = write("ca.pem", security.CertificatePEM(authority.Certificate), nil)
	f.clientPEM = write("client.crt", security.CertificatePEM(client.Leaf), nil)
	keyPair, err := security.KeyPairPEM(client)
	_, keyOnly := splitKeyPEM(keyPair)
	f.clientKey = write("client.key", keyOnly, err)
	return f
}

// splitKeyPEM returns the certificates and the key block of a PEM keystore.
func splitKeyPEM(data []byte) (certificates, key []byte) {
	index := bytes.Index(data, []byte("-----BEGIN PRIVATE KEY-----"))
	return data[:index], data[index:]
}

// brokerOverrides configure every listener of a node as SSL with the test
// stores; the principal of a client certificate is its lower-cased CN.
func (f *tlsFiles) brokerOverrides(clientAuth string) []string {
	return []string{
		"ssl.keystore.type=PKCS12",
		"ssl.keystore.location=" + filepath.Join(f.dir, "broker.p12"),
		"ssl.keystore.password=" + tlsTestPassword,
		"ssl.truststore.location=" + filepath.Join(f.dir, "truststore.jks"),
		"ssl.truststore.password=" + tlsTestPassword,
		"ssl.client.auth=" + clientAuth,
		"ssl.principal.mapping.rules=RULE:^CN=([^,]*),.*$/$1/L,DEFAULT",
	}
}

func (f *tlsFiles) clientConfig(withCertificate bool) *tls.Config {
	config := &tls.Config{RootCAs: f.roots, ServerName: "127.0.0.1"}
	if withCertificate {
		config.Certificates = []tls.Certificate{*f.client}
	}
	return config
}

// startLoggedNode starts a node whose log, request log included, goes to
// the returned buffer.
func startLoggedNode(t *testing.T, overrides ...string) (*Node, *syncBuffer) {
	t.Helper()
	cfg, _, err := config.Load("", append([]string{"log.dirs=" + t.TempDir(), "group.initial.rebalance.delay.ms=0", "log.request.sample.rate=1", "metrics.listener=127.0.0.1:0"}, overrides...), nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	n, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Shutdown(ctx)
	})
	return n, logs
}

// principalOf finds the principal the request log names for client id.
func principalOf(logs *syncBuffer, clientID string) string {
	for _, line := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(line, "client_id="+clientID+" ") {
			continue
		}
		if _, rest, ok := strings.Cut(line, "principal="); ok {
			principal, _, _ := strings.Cut(rest, " ")
			return principal
		}
	}
	return ""
}

func waitForPrincipal(t *testing.T, logs *syncBuffer, clientID, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := principalOf(logs, clientID)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("client %s: principal %q in the request log, want %q", clientID, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSSLListenerWithRealClients(t *testing.T) {
	files := newTLSFiles(t)
	node, logs := startLoggedNode(t, append(files.brokerOverrides("requested"),
		"listeners=SSL://127.0.0.1:0", "listener.security.protocol.map=SSL:SSL,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name=SSL")...)
	addr := node.Addrs()[0].String()
	if secrets := strings.Count(logs.String(), tlsTestPassword); secrets != 0 {
		t.Fatalf("the store password appears %d times in the log", secrets)
	}

	t.Run("franz-go with a client certificate", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(files.clientConfig(true)), kgo.ClientID("franz-mtls"),
			kgo.DefaultProduceTopic("tls-franz"), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("tls-franz"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx := testContext(t)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("over tls")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		fetches := cl.PollRecords(ctx, 1)
		if err := fetches.Err(); err != nil || fetches.NumRecords() != 1 || string(fetches.Records()[0].Value) != "over tls" {
			t.Fatalf("consume: %v, %d records", err, fetches.NumRecords())
		}
		waitForPrincipal(t, logs, "franz-mtls", "User:alice")
	})

	t.Run("sarama without a client certificate", func(t *testing.T) {
		cfg := sarama.NewConfig()
		cfg.ClientID = "sarama-tls"
		cfg.Net.TLS.Enable = true
		cfg.Net.TLS.Config = files.clientConfig(false)
		cfg.Producer.Return.Successes = true
		cfg.Version = sarama.V3_0_0_0
		producer, err := sarama.NewSyncProducer([]string{addr}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer producer.Close()
		partition, offset, err := producer.SendMessage(&sarama.ProducerMessage{Topic: "tls-sarama", Value: sarama.StringEncoder("sarama over tls")})
		if err != nil {
			t.Fatal(err)
		}
		consumer, err := sarama.NewConsumer([]string{addr}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer consumer.Close()
		pc, err := consumer.ConsumePartition("tls-sarama", partition, offset)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		select {
		case message := <-pc.Messages():
			if string(message.Value) != "sarama over tls" {
				t.Fatalf("consumed %q", message.Value)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("sarama consumed nothing")
		}
		waitForPrincipal(t, logs, "sarama-tls", "User:ANONYMOUS")
	})

	t.Run("kafka-go with a client certificate", func(t *testing.T) {
		dialer := &kafkago.Dialer{Timeout: 10 * time.Second, TLS: files.clientConfig(true), ClientID: "kafkago-mtls"}
		writer := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "tls-kafkago", AllowAutoTopicCreation: true,
			Transport: &kafkago.Transport{TLS: files.clientConfig(true), ClientID: "kafkago-mtls"}}
		defer writer.Close()
		ctx := testContext(t)
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			// The first write may race the topic's creation.
			if err = writer.WriteMessages(ctx, kafkago.Message{Value: []byte("kafka-go over tls")}); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		reader := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "tls-kafkago", Dialer: dialer, MaxWait: 100 * time.Millisecond})
		defer reader.Close()
		message, err := reader.ReadMessage(ctx)
		if err != nil || string(message.Value) != "kafka-go over tls" {
			t.Fatalf("read %q, %v", message.Value, err)
		}
		waitForPrincipal(t, logs, "kafkago-mtls", "User:alice")
	})

	t.Run("librdkafka and kafka-python", func(t *testing.T) {
		python := "/usr/bin/python3"
		if err := exec.Command(python, "-c", "import confluent_kafka, kafka").Run(); err != nil {
			t.Skip("confluent-kafka-python or kafka-python not installed (.ci/run installs them)")
		}
		script := fmt.Sprintf(pythonTLSClients, addr, files.caPEM, files.clientPEM, files.clientKey)
		out, err := exec.CommandContext(testContext(t), python, "-c", script).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "confluent ok") || !strings.Contains(string(out), "kafka-python ok") {
			t.Fatalf("python clients: %v\n%s", err, out)
		}
		waitForPrincipal(t, logs, "confluent-mtls", "User:alice")
		waitForPrincipal(t, logs, "kafka-python-mtls", "User:alice")
	})

	t.Run("plaintext client on the TLS port", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := cl.Ping(ctx); err == nil {
			t.Fatal("a plaintext client was answered on an SSL listener")
		}
		// The broker still serves TLS clients.
		secure, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(files.clientConfig(true)))
		if err != nil {
			t.Fatal(err)
		}
		defer secure.Close()
		if err := secure.Ping(testContext(t)); err != nil {
			t.Fatal(err)
		}
	})
}

// pythonTLSClients produces and consumes one record with librdkafka
// (confluent-kafka) and with kafka-python over mTLS.
const pythonTLSClients = `
import sys, uuid
addr, ca, cert, key = %q, %q, %q, %q
from confluent_kafka import Producer, Consumer
common = {"bootstrap.servers": addr, "security.protocol": "SSL", "ssl.ca.location": ca,
          "ssl.certificate.location": cert, "ssl.key.location": key, "client.id": "confluent-mtls"}
p = Producer(dict(common))
p.produce("tls-confluent", b"librdkafka over tls")
if p.flush(30) != 0: sys.exit("confluent: produce not delivered")
c = Consumer(dict(common, **{"group.id": "g-" + uuid.uuid4().hex, "auto.offset.reset": "earliest"}))
c.subscribe(["tls-confluent"])
for _ in range(60):
    m = c.poll(1.0)
    if m is not None and m.error() is None:
        assert m.value() == b"librdkafka over tls", m.value()
        print("confluent ok"); break
else:
    sys.exit("confluent: nothing consumed")
c.close()
from kafka import KafkaProducer, KafkaConsumer
kp = dict(bootstrap_servers=addr, security_protocol="SSL", ssl_cafile=ca, ssl_certfile=cert, ssl_keyfile=key, client_id="kafka-python-mtls")
pr = KafkaProducer(**kp)
pr.send("tls-confluent", b"kafka-python over tls").get(timeout=30)
pr.close()
co = KafkaConsumer("tls-confluent", auto_offset_reset="earliest", consumer_timeout_ms=30000, **kp)
values = [m.value for m in co]
co.close()
assert b"kafka-python over tls" in values, values
print("kafka-python ok")
`

// TestSSLKeystoreReplacedWithIncrementalAlterConfigs points the listener's
// keystore at a renewed certificate with IncrementalAlterConfigs of
// listener.name.ssl.ssl.keystore.location, as Kafka operators rotate
// certificates, and sees new handshakes get it without a restart; a
// keystore for another subject is refused and the renewed one stays.
func TestSSLKeystoreReplacedWithIncrementalAlterConfigs(t *testing.T) {
	files := newTLSFiles(t)
	node, logs := startLoggedNode(t, append(files.brokerOverrides("none"),
		"listeners=SSL://127.0.0.1:0", "listener.security.protocol.map=SSL:SSL,CONTROLLER:PLAINTEXT", "inter.broker.listener.name=SSL")...)
	addr := node.Addrs()[0].String()
	servedSerial := func() string {
		conn, err := tls.Dial("tcp", addr, files.clientConfig(false))
		if err != nil {
			return "dial: " + err.Error()
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	issue := func(name, commonName string) (string, string) {
		certificate, err := files.authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: commonName}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: 2 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		p12, err := security.KeystorePKCS12(certificate, tlsTestPassword)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(files.dir, name)
		if err := os.WriteFile(path, p12, 0o600); err != nil {
			t.Fatal(err)
		}
		return path, certificate.Leaf.SerialNumber.String()
	}
	before := servedSerial()
	renewedPath, renewedSerial := issue("renewed.p12", "broker")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(files.clientConfig(false)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	alter := func(path string) {
		t.Helper()
		responses, err := adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{{Name: "listener.name.ssl.ssl.keystore.location", Value: &path}}, node.cfg.NodeID)
		if err == nil {
			err = responses[0].Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	alter(renewedPath)
	deadline := time.Now().Add(30 * time.Second)
	for servedSerial() != renewedSerial {
		if time.Now().After(deadline) {
			t.Fatalf("still serving %s (was %s), want the renewed %s", servedSerial(), before, renewedSerial)
		}
		time.Sleep(50 * time.Millisecond)
	}
	impostorPath, _ := issue("impostor.p12", "someone-else")
	alter(impostorPath)
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "was not reloaded") {
		if time.Now().After(deadline) {
			t.Fatal("the keystore for another subject was not refused")
		}
		servedSerial()
		time.Sleep(50 * time.Millisecond)
	}
	if got := servedSerial(); got != renewedSerial {
		t.Fatalf("serving %s after a refused reload, want %s", got, renewedSerial)
	}
}
