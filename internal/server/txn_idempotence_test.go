package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// rawProducer sends hand-built batches with explicit producer ids and
// sequences, as a retrying idempotent producer would.
type rawProducer struct {
	t     *testing.T
	cl    *kgo.Client
	topic string
}

func (rp rawProducer) initProducerID(txnID *string, timeoutMs int32) (int64, int16, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = txnID, timeoutMs
	resp, err := req.RequestWith(context.Background(), rp.cl)
	if err != nil {
		rp.t.Fatal(err)
	}
	return resp.ProducerID, resp.ProducerEpoch, kerr.ErrorForCode(resp.ErrorCode)
}

// produce sends one batch of n records and returns its base offset and
// error code, at the highest Produce version rp.cl allows.
func (rp rawProducer) produce(txnID *string, pid int64, epoch int16, seq int32, n int, transactional bool) (int64, error) {
	rp.t.Helper()
	opts := record.DefaultBuildOptions()
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = pid, epoch, seq, transactional
	opts.BaseTimestamp = time.Now().UnixMilli()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Value: []byte("v"), TimestampDelta: int64(i)}
	}
	batch, err := record.Build(opts, recs)
	if err != nil {
		rp.t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, txnID
	tp := kmsg.NewProduceRequestTopicPartition()
	tp.Partition, tp.Records = 0, batch
	// Produce v13 names the topic by id (KIP-516); older versions by name.
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &rp.topic
	meta.Topics = append(meta.Topics, mt)
	metaResp, err := meta.RequestWith(context.Background(), rp.cl)
	if err != nil || len(metaResp.Topics) != 1 {
		rp.t.Fatalf("metadata of %s: %v", rp.topic, err)
	}
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID, rt.Partitions = rp.topic, metaResp.Topics[0].TopicID, []kmsg.ProduceRequestTopicPartition{tp}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), rp.cl)
	if err != nil {
		rp.t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	return p.BaseOffset, kerr.ErrorForCode(p.ErrorCode)
}

// TestIdempotentRetriesAreNotDuplicatedAcrossRestart sends the same batch
// twice (a retry after a lost response): it is written once and the retry
// answers the original offset. The producer state survives a restart, from
// the snapshot written at shutdown.
func TestIdempotentRetriesAreNotDuplicatedAcrossRestart(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "idem", 1, nil)
	rp := rawProducer{t: t, cl: tn.client(), topic: "idem"}
	pid, epoch, err := rp.initProducerID(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	first, err := rp.produce(nil, pid, epoch, 0, 3, false)
	if err != nil || first != 0 {
		t.Fatalf("first produce: offset %d, %v", first, err)
	}
	again, err := rp.produce(nil, pid, epoch, 0, 3, false)
	if err != nil || again != first {
		t.Fatalf("retried produce: offset %d, %v; want the original offset %d", again, err, first)
	}
	if next, err := rp.produce(nil, pid, epoch, 3, 2, false); err != nil || next != 3 {
		t.Fatalf("next batch: offset %d, %v", next, err)
	}
	if _, err := rp.produce(nil, pid, epoch, 9, 1, false); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("gap: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	if _, err := rp.produce(nil, pid, epoch-1, 5, 1, false); err != kerr.InvalidProducerEpoch {
		t.Fatalf("stale epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}

	tn.restart()
	rp.cl = tn.client()
	if again, err := rp.produce(nil, pid, epoch, 3, 2, false); err != nil || again != 3 {
		t.Fatalf("retry after restart: offset %d, %v; want the original offset 3", again, err)
	}
	if _, err := rp.produce(nil, pid, epoch, 6, 1, false); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("gap after restart: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	if next, err := rp.produce(nil, pid, epoch, 5, 1, false); err != nil || next != 5 {
		t.Fatalf("next after restart: offset %d, %v", next, err)
	}
	got := consumeAll(t, tn, "idem", 6)
	if len(got) != 6 {
		t.Fatalf("read %d records, want 6 (no duplicates)", len(got))
	}
}

// TestTxnStateSurvivesRestart: an open transaction, its LSO and its
// producer's fencing survive a node restart; committing it afterwards
// works.
func TestTxnStateSurvivesRestart(t *testing.T) {
	tn := startTestNode(t, "listeners=PLAINTEXT://127.0.0.1:"+freePort(t))
	adm := tn.admin()
	mustCreateTopic(t, adm, "keep", 1, nil)
	tx := txnProducer(t, tn, "keeper")
	ctx := testContext(t)
	produceTxn(t, tx, "keep", true, "c0")
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Topic: "keep", Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tn.restart()
	committedEnds, err := tn.admin().ListCommittedOffsets(ctx, "keep")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := committedEnds.Lookup("keep", 0); e.Offset != 2 {
		t.Fatalf("LSO after restart = %d, want 2 (the open transaction's first offset)", e.Offset)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after restart: %v", err)
	}
	got := pollUntil(t, tn, "keep", true, 30*time.Second, hasAll("c0", "open"))
	if !hasAll("c0", "open")(got) {
		t.Fatalf("read_committed after commit: %v", got)
	}
}
