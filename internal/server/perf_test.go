package server

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReusedProduceBodiesKeepLogIntact drives concurrent producers through a
// real node, whose Produce request frames are read into pooled buffers that
// are reused once a request is finished (network.Request.Body), then reads
// every record back and checks its contents. A buffer reused while the
// produce path still referenced it would put another request's bytes (or,
// under the invariants tag, poison) into the log: a CRC error for the
// consumer or a wrong value. Run with -tags invariants -race to have early
// releases poisoned at once and racy reads reported.
func TestReusedProduceBodiesKeepLogIntact(t *testing.T) {
	tn := startTestNode(t)
	const (
		topic     = "reused-bodies"
		producers = 4
		perClient = 600
	)
	mustCreateTopic(t, tn.admin(), topic, 6, nil)
	// value is deterministic in (producer, i), of sizes across several
	// buffer classes, so that requests of all sizes churn the pools.
	value := func(producer, i int) []byte {
		prefix := fmt.Sprintf("%d-%d-", producer, i)
		return append([]byte(prefix), bytes.Repeat([]byte{byte('a' + (producer*7+i)%26)}, (i*131)%5000)...)
	}
	clientOptions := [][]kgo.Opt{
		{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()},
		{kgo.RequiredAcks(kgo.AllISRAcks())}, // idempotent
		{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.Lz4Compression())},
		{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()},
	}
	var wg sync.WaitGroup
	for producer := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			options := append([]kgo.Opt{kgo.ProducerLinger(0)}, clientOptions[producer%len(clientOptions)]...)
			cl := tn.client(options...)
			ctx := testContext(t)
			var produced sync.WaitGroup
			for i := range perClient {
				produced.Add(1)
				cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(producer)), Value: value(producer, i)},
					func(_ *kgo.Record, err error) {
						defer produced.Done()
						if err != nil {
							t.Errorf("producer %d record %d: %v", producer, i, err)
						}
					})
			}
			produced.Wait()
			if err := cl.Flush(ctx); err != nil {
				t.Errorf("producer %d flush: %v", producer, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	records := consumeAll(t, tn, topic, producers*perClient)
	seen := make(map[string]bool, len(records))
	for _, r := range records {
		var producer, i int
		if _, err := fmt.Sscanf(string(r.Value), "%d-%d-", &producer, &i); err != nil {
			t.Fatalf("record at %d/%d has value %.40q", r.Partition, r.Offset, r.Value)
		}
		if want := value(producer, i); !bytes.Equal(r.Value, want) {
			t.Fatalf("record %d of producer %d at %d/%d: value differs from what was produced", i, producer, r.Partition, r.Offset)
		}
		if string(r.Key) != fmt.Sprint(producer) {
			t.Fatalf("record %d of producer %d has key %q", i, producer, r.Key)
		}
		seen[fmt.Sprint(producer, "-", i)] = true
	}
	if len(seen) != producers*perClient {
		t.Fatalf("read %d distinct records, want %d", len(seen), producers*perClient)
	}
}
