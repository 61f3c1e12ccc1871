package interop

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const clientTopic = "records"

// capturingCluster starts a one-broker kfake cluster that keeps a copy of
// each produce partition's records before handling the request as usual.
func capturingCluster(t *testing.T) (*kfake.Cluster, func() [][]byte) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, clientTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	var mu sync.Mutex
	var captured [][]byte
	cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, topic := range req.(*kmsg.ProduceRequest).Topics {
			for _, partition := range topic.Partitions {
				captured = append(captured, bytes.Clone(partition.Records))
			}
		}
		return nil, nil, false // observed only; kfake answers
	})
	return cluster, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return captured
	}
}

// producedRecord is what a test produced, to compare with what we read.
type producedRecord struct {
	key, value  []byte
	headers     []record.RecordHeader
	timestampMs int64
}

// sameBytes is bytes.Equal that also tells nil from empty.
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

func clientRecords(n int, baseMs int64) []producedRecord {
	out := make([]producedRecord, n)
	for i := range out {
		out[i] = producedRecord{
			key:         []byte(fmt.Sprintf("key-%d", i)),
			value:       bytes.Repeat([]byte{byte('a' + i%26)}, 50+i%200),
			timestampMs: baseMs + int64(i%17),
		}
		if i%4 == 0 {
			out[i].headers = []record.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}}
		}
		if i%7 == 3 {
			out[i].key = nil
		}
	}
	return out
}

// checkCaptured validates every captured batch and compares the records, in
// order, with what was produced.
func checkCaptured(t *testing.T, captured [][]byte, want []producedRecord, wantCodec int8, idempotent bool) {
	t.Helper()
	if len(captured) == 0 {
		t.Fatal("no produce requests captured")
	}
	nowMs := time.Now().UnixMilli()
	var got []producedRecord
	for i, batch := range captured {
		if n, err := record.CountBatches(batch); n != 1 || err != nil {
			t.Fatalf("request %d: %d batches, %v", i, n, err)
		}
		h, err := record.Validate(bytes.Clone(batch), record.DefaultValidateOptions(nowMs))
		if err != nil {
			t.Fatalf("request %d: Validate: %v", i, err)
		}
		if h.Compression() != wantCodec || h.HasProducerID() != idempotent {
			t.Fatalf("request %d: codec %d, producer id %d", i, h.Compression(), h.ProducerID)
		}
		// Records lends its slices for the call only: copy what is kept.
		err = record.Records(batch, 16<<20, func(r record.Record) error {
			kept := producedRecord{
				key:         bytes.Clone(r.Key),
				value:       bytes.Clone(r.Value),
				timestampMs: h.RecordTimestamp(r.TimestampDelta),
			}
			for _, header := range r.Headers {
				kept.headers = append(kept.headers, record.RecordHeader{Key: header.Key, Value: bytes.Clone(header.Value)})
			}
			got = append(got, kept)
			return nil
		})
		if err != nil {
			t.Fatalf("request %d: Records: %v", i, err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("read %d records from %d batches, produced %d", len(got), len(captured), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		same := sameBytes(g.key, w.key) && bytes.Equal(g.value, w.value) && g.timestampMs == w.timestampMs &&
			len(g.headers) == len(w.headers)
		for j := 0; same && j < len(g.headers); j++ {
			same = g.headers[j].Key == w.headers[j].Key && bytes.Equal(g.headers[j].Value, w.headers[j].Value)
		}
		if !same {
			t.Fatalf("record %d: read %+v, produced %+v", i, g, w)
		}
	}
	t.Logf("%d records in %d batches", len(got), len(captured))
}

func TestFranzGoBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fake broker")
	}
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
		id    int8
	}{
		{"none", kgo.NoCompression(), record.CodecNone},
		{"gzip", kgo.GzipCompression(), record.CodecGzip},
		{"snappy", kgo.SnappyCompression(), record.CodecSnappy},
		{"lz4", kgo.Lz4Compression(), record.CodecLz4},
		{"zstd", kgo.ZstdCompression(), record.CodecZstd},
	}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			cluster, captured := capturingCluster(t)
			client, err := kgo.NewClient(
				kgo.SeedBrokers(cluster.ListenAddrs()...),
				kgo.DefaultProduceTopic(clientTopic),
				kgo.ProducerBatchCompression(c.codec),
				kgo.ProducerLinger(20*time.Millisecond),
			)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			want := clientRecords(500, time.Now().UnixMilli()-1000)
			var produce []*kgo.Record
			for _, r := range want {
				kr := &kgo.Record{Key: r.key, Value: r.value, Timestamp: time.UnixMilli(r.timestampMs)}
				for _, h := range r.headers {
					kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
				}
				produce = append(produce, kr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := client.ProduceSync(ctx, produce...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			checkCaptured(t, captured(), want, c.id, true)
		})
	}
}

func TestSaramaBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fake broker")
	}
	codecs := []struct {
		name  string
		codec sarama.CompressionCodec
		id    int8
	}{
		{"none", sarama.CompressionNone, record.CodecNone},
		{"gzip", sarama.CompressionGZIP, record.CodecGzip},
		{"snappy", sarama.CompressionSnappy, record.CodecSnappy},
		{"lz4", sarama.CompressionLZ4, record.CodecLz4},
		{"zstd", sarama.CompressionZSTD, record.CodecZstd},
	}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			cluster, captured := capturingCluster(t)
			config := sarama.NewConfig()
			config.Version = sarama.V2_8_0_0
			config.Producer.Return.Successes = true
			config.Producer.RequiredAcks = sarama.WaitForAll
			config.Producer.Compression = c.codec
			// Flush in a few batches, and by timer so the last one goes too.
			config.Producer.Flush.Messages = 100
			config.Producer.Flush.Frequency = 5 * time.Millisecond
			config.Net.DialTimeout, config.Net.ReadTimeout, config.Net.WriteTimeout = 10*time.Second, 10*time.Second, 10*time.Second
			producer, err := sarama.NewSyncProducer(cluster.ListenAddrs(), config)
			if err != nil {
				t.Fatal(err)
			}
			defer producer.Close()
			want := clientRecords(300, time.Now().UnixMilli()-1000)
			var messages []*sarama.ProducerMessage
			for _, r := range want {
				m := &sarama.ProducerMessage{Topic: clientTopic, Value: sarama.ByteEncoder(r.value), Timestamp: time.UnixMilli(r.timestampMs)}
				if r.key != nil {
					m.Key = sarama.ByteEncoder(r.key)
				}
				for _, h := range r.headers {
					m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
				}
				messages = append(messages, m)
			}
			sent := make(chan error, 1)
			go func() { sent <- producer.SendMessages(messages) }()
			select {
			case err := <-sent:
				if err != nil {
					t.Fatalf("produce: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("sarama did not finish producing in 30s")
			}
			checkCaptured(t, captured(), want, c.id, false)
		})
	}
}
