package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-streaming/samsa/internal/config"
)

// BenchmarkProduceByVersion produces small batches one at a time through a
// real node with Produce v12 (topics by name) and v13 (topics by id), so
// the cost of resolving topic ids shows beside the name path measured in
// the same run.
func BenchmarkProduceByVersion(b *testing.B) {
	cfg, _, err := config.Load("", []string{
		"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + b.TempDir(), "metrics.listener=127.0.0.1:0",
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	node, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = node.Shutdown(ctx)
	})
	addr := node.Addrs()[0].String()
	for _, version := range []int16{12, 13} {
		b.Run("v"+string(rune('0'+version/10))+string(rune('0'+version%10)), func(b *testing.B) {
			versions := kversion.V4_4_0()
			versions.SetMaxKeyVersion(0, version)
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(versions),
				kgo.DefaultProduceTopic("bench-versions"), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			ctx := context.Background()
			value := make([]byte, 100)
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
