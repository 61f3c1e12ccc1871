package server

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMaxDecompressedMessageBytes: Kafka 4.4's max.decompressed.message.bytes
// bounds one record of a compressed batch once decompressed. A gzip batch
// with a record larger than the topic's limit is refused with
// INVALID_RECORD and nothing of it is written; a smaller record, and a
// larger one sent uncompressed (Kafka checks decompressed records only),
// are appended.
func TestMaxDecompressedMessageBytes(t *testing.T) {
	tn := startTestNode(t)
	const topic = "bounded-records"
	limit := "200"
	mustCreateTopic(t, tn.admin(), topic, 1, map[string]*string{"max.decompressed.message.bytes": &limit})
	ctx := testContext(t)
	gzip := tn.client(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.GzipCompression()), kgo.RecordRetries(0))
	plain := tn.client(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))

	large := bytes.Repeat([]byte("x"), 1000)
	err := gzip.ProduceSync(ctx, &kgo.Record{Value: large}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("a compressed record over max.decompressed.message.bytes: %v, want INVALID_RECORD", err)
	}
	if err := gzip.ProduceSync(ctx, &kgo.Record{Value: []byte("small")}).FirstErr(); err != nil {
		t.Fatalf("a compressed record under the limit: %v", err)
	}
	if err := plain.ProduceSync(ctx, &kgo.Record{Value: large}).FirstErr(); err != nil {
		t.Fatalf("an uncompressed record over the limit: %v", err)
	}
	records := consumeAll(t, tn, topic, 2)
	if string(records[0].Value) != "small" || !bytes.Equal(records[1].Value, large) || records[1].Offset != 1 {
		t.Fatalf("read back %q at %d, %d bytes at %d", records[0].Value, records[0].Offset, len(records[1].Value), records[1].Offset)
	}
}
