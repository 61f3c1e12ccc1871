package server

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// checkOrdered verifies every produced value came back exactly once and in
// order within each partition, with its key and header intact.
func checkOrdered(t *testing.T, topic string, recs []*kgo.Record, n int) {
	t.Helper()
	seen := map[int]bool{}
	last := map[int32]int{}
	keyPartition := map[string]int32{}
	for _, r := range recs {
		var i int
		if _, err := fmt.Sscanf(string(r.Value), topic+"-%d", &i); err != nil {
			t.Fatalf("unexpected value %q", r.Value)
		}
		if seen[i] {
			t.Fatalf("record %d consumed twice", i)
		}
		seen[i] = true
		if prev, ok := last[r.Partition]; ok && i <= prev {
			t.Fatalf("partition %d: record %d after %d", r.Partition, i, prev)
		}
		last[r.Partition] = i
		if want := fmt.Sprintf("k%d", i%17); string(r.Key) != want {
			t.Fatalf("record %d key %q, want %q", i, r.Key, want)
		}
		if len(r.Headers) != 1 || string(r.Headers[0].Value) != strconv.Itoa(i) {
			t.Fatalf("record %d headers %v", i, r.Headers)
		}
		if p, ok := keyPartition[string(r.Key)]; ok && p != r.Partition {
			t.Fatalf("key %q on partitions %d and %d", r.Key, p, r.Partition)
		}
		keyPartition[string(r.Key)] = r.Partition
	}
	if len(seen) != n {
		t.Fatalf("consumed %d distinct records, want %d", len(seen), n)
	}
}

func TestProduceConsumeCodecsAndAcks(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	acks := map[string]kgo.Acks{"acks0": kgo.NoAck(), "acks1": kgo.LeaderAck(), "acksall": kgo.AllISRAcks()}
	for codecName, codec := range codecs {
		for ackName, ack := range acks {
			topic := "t-" + codecName + "-" + ackName
			t.Run(topic, func(t *testing.T) {
				mustCreateTopic(t, adm, topic, 3, nil)
				opts := []kgo.Opt{kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(ack)}
				if ackName != "acksall" {
					opts = append(opts, kgo.DisableIdempotentWrite())
				}
				const n = 500
				produceKeyed(t, tn.client(opts...), topic, n)
				recs := consumeAll(t, tn, topic, n)
				checkOrdered(t, topic, recs, n)
			})
		}
	}
}

func TestProduceUnknownTopicWithoutAutoCreate(t *testing.T) {
	tn := startTestNode(t, "auto.create.topics.enable=false")
	cl := tn.client(kgo.RecordDeliveryTimeout(3e9))
	err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: "missing", Value: []byte("x")}).FirstErr()
	if err == nil {
		t.Fatal("produce to a missing topic succeeded")
	}
	if !errorIs(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("got %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

func TestAutoCreateOnMetadata(t *testing.T) {
	tn := startTestNode(t, "num.partitions=4")
	cl := tn.client(kgo.AllowAutoTopicCreation())
	produceKeyed(t, cl, "auto", 10)
	details, err := tn.admin().ListTopics(testContext(t), "auto")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(details["auto"].Partitions); got != 4 {
		t.Fatalf("auto-created topic has %d partitions, want num.partitions=4", got)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	v := "3600000"
	mustCreateTopic(t, adm, "durable", 3, map[string]*string{"retention.ms": &v})
	produceKeyed(t, tn.client(), "durable", 300)
	tn.restart()
	recs := consumeAll(t, tn, "durable", 300)
	checkOrdered(t, "durable", recs, 300)
	configs, err := tn.admin().DescribeTopicConfigs(testContext(t), "durable")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := configs.On("durable", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" && c.MaybeValue() == "3600000" {
			found = true
		}
	}
	if !found {
		t.Fatalf("retention.ms override lost across restart: %+v", rc.Configs)
	}
	ends, err := tn.admin().ListEndOffsets(testContext(t), "durable")
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 300 {
		t.Fatalf("end offsets sum to %d after restart, want 300", total)
	}
	// Appends continue after the old end.
	r, err := tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(testContext(t), &kgo.Record{Topic: "durable", Partition: 0, Value: []byte("after")}).First()
	if err != nil {
		t.Fatal(err)
	}
	if r.Offset != ends["durable"][0].Offset {
		t.Fatalf("append after restart at offset %d, want %d", r.Offset, ends["durable"][0].Offset)
	}
}
