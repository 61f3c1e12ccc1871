package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/security"
)

// BenchmarkProduceSASLSSL produces 1 KiB random records, uncompressed
// (acks=1, 6 partitions)
// to one node over its PLAINTEXT listener and over SASL_SSL with
// SCRAM-SHA-512 in the same run, so the two figures compare:
//
//	go test -run XXX -bench ProduceSASLSSL -benchtime 200000x ./internal/server/
func BenchmarkProduceSASLSSL(b *testing.B) {
	const password = "bench-Secret-51aa"
	dir := b.TempDir()
	authority, err := security.NewAuthority("bench CA", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	broker, err := authority.Issue(security.CertificateRequest{Subject: pkix.Name{CommonName: "broker"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ValidFor: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	p12, err := security.KeystorePKCS12(broker, password)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broker.p12"), p12, 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, _, err := config.Load("", []string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"log.dirs=" + filepath.Join(dir, "data"),
		"metrics.listener=",
		"ssl.keystore.type=PKCS12",
		"ssl.keystore.location=" + filepath.Join(dir, "broker.p12"),
		"ssl.keystore.password=" + password,
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=bench,password=" + password + "]",
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	n, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Shutdown(ctx)
	})
	roots := x509.NewCertPool()
	roots.AddCert(authority.Certificate)
	secured := []kgo.Opt{
		kgo.DialTLSConfig(&tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}),
		kgo.SASL(scram.Auth{User: "bench", Pass: password}.AsSha512Mechanism()),
	}
	// Random, uncompressed values: every byte crosses the wire and TLS.
	value := make([]byte, 1024)
	rand.Read(value)
	for _, listener := range []struct {
		name string
		addr string
		opts []kgo.Opt
	}{
		{"plaintext", n.Addrs()[0].String(), nil},
		{"sasl_ssl", n.Addrs()[1].String(), secured},
	} {
		b.Run(listener.name, func(b *testing.B) {
			topic := "bench-" + listener.name
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(listener.addr), kgo.DefaultProduceTopic(topic),
				kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(5 * time.Millisecond),
				kgo.ProducerBatchMaxBytes(1 << 20), kgo.MaxBufferedRecords(100000),
				kgo.ProducerBatchCompression(kgo.NoCompression())}, listener.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			ctx := context.Background()
			// b.Run calls this more than once (N=1 first): the topic may exist.
			if _, err := kadm.NewClient(cl).CreateTopic(ctx, 6, 1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(value)))
			b.ResetTimer()
			var wg sync.WaitGroup
			var failure error
			var mu sync.Mutex
			for range b.N {
				wg.Add(1)
				cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						mu.Lock()
						failure = err
						mu.Unlock()
					}
					wg.Done()
				})
			}
			wg.Wait()
			b.StopTimer()
			if failure != nil {
				b.Fatal(failure)
			}
		})
	}
}
