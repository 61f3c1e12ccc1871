package server

import (
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPipelinedIdempotentProduceKeepsOrder drives an idempotent franz-go
// producer, which keeps up to five produce requests in flight per broker
// (its default, Kafka's max.in.flight.requests.per.connection), to one node, which reads
// them ahead of each other (network.Config.PipelinedAPIKeys) but must append
// them in the order they were sent: a request appended before its
// predecessor would answer OUT_OF_ORDER_SEQUENCE_NUMBER, and the client's
// recovery (a new producer id, resent batches) would show in the log as
// records out of order, repeated, or under a second producer id. Small
// batches and no linger make many small requests, so that several are in
// flight at once; how many were read ahead is logged.
func TestPipelinedIdempotentProduceKeepsOrder(t *testing.T) {
	tn := startTestNode(t)
	const (
		topic        = "pipelined-idempotent"
		partitions   = 3
		perPartition = 2000
	)
	mustCreateTopic(t, tn.admin(), topic, partitions, nil)
	// A value of about 300 bytes puts a handful of records in each batch.
	value := func(p int32, i int) []byte { return fmt.Appendf(nil, "%d-%d-%0300d", p, i, 0) }
	before := tn.node.network.Stats().RequestsReadAhead
	cl := tn.client(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchMaxBytes(2048),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	ctx := testContext(t)
	var (
		produced sync.WaitGroup
		mu       sync.Mutex
		errs     []error
	)
	for i := range perPartition {
		for p := range int32(partitions) {
			produced.Add(1)
			record := &kgo.Record{Topic: topic, Partition: p, Value: value(p, i)}
			cl.Produce(ctx, record, func(r *kgo.Record, err error) {
				defer produced.Done()
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("record %.12s: %w", r.Value, err))
					mu.Unlock()
				}
			})
		}
	}
	produced.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d records failed, first: %v", len(errs), errs[0])
	}
	readAhead := tn.node.network.Stats().RequestsReadAhead - before
	t.Logf("%d requests were read while an earlier one of their connection was unanswered", readAhead)

	records := consumeAll(t, tn, topic, partitions*perPartition)
	next := make([]int, partitions)
	producerIDs := map[int64]bool{}
	for _, r := range records {
		if want := value(r.Partition, next[r.Partition]); string(r.Value) != string(want) {
			t.Fatalf("partition %d offset %d holds %.12q, want %.12q: appended out of order", r.Partition, r.Offset, r.Value, want)
		}
		next[r.Partition]++
		producerIDs[r.ProducerID] = true
	}
	if len(producerIDs) != 1 {
		t.Fatalf("records under %d producer ids, want 1: the producer had to reset", len(producerIDs))
	}
}
