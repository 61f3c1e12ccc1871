package partition

import (
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

var quiet = slog.New(slog.DiscardHandler)

// testPartition opens a partition over a log in dir.
func testPartition(t *testing.T, dir string, now func() time.Time) *Partition {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = 4 << 10
	l, err := log.Open(vfs.Default, dir, cfg, log.OpenOptions{HadCleanShutdown: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New("t", 0, [16]byte{1}, l, 0, Options{Now: now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// The sole replica leads, as the manager makes it.
	if err := p.UpdateReplicaState(LeaderState{NodeID: 1, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	return p
}

type batchSpec struct {
	pid     int64
	epoch   int16
	seq     int32
	n       int
	txn     bool
	tsMs    int64
	noPID   bool
	payload string
}

func buildBatch(t *testing.T, s batchSpec) ([]byte, record.Header) {
	t.Helper()
	opts := record.DefaultBuildOptions()
	if !s.noPID {
		opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = s.pid, s.epoch, s.seq
	}
	opts.Transactional = s.txn
	opts.BaseTimestamp = s.tsMs
	if opts.BaseTimestamp == 0 {
		opts.BaseTimestamp = time.Now().UnixMilli()
	}
	n := max(s.n, 1)
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Value: []byte(s.payload + "v"), TimestampDelta: int64(i)}
	}
	b, err := record.Build(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

func appendSpec(t *testing.T, p *Partition, s batchSpec, opts AppendOptions) (AppendResult, *kerr.Error) {
	t.Helper()
	b, h := buildBatch(t, s)
	if opts.LogAppendTime == 0 {
		opts.LogAppendTime = -1
	}
	res, code, err := p.AppendWith(b, h, opts)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return res, code
}

func mustAppendSpec(t *testing.T, p *Partition, s batchSpec) AppendResult {
	t.Helper()
	res, code := appendSpec(t, p, s, AppendOptions{})
	if code != nil {
		t.Fatalf("append %+v: %v", s, code)
	}
	return res
}

func TestIdempotenceRules(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()

	first := mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, n: 3})
	// The same batch again is a retry: its original offset, nothing written.
	again := mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, n: 3})
	if again.BaseOffset != first.BaseOffset || p.Log.LogEndOffset() != 3 {
		t.Fatalf("retry got offset %d, LEO %d; want %d, 3", again.BaseOffset, p.Log.LogEndOffset(), first.BaseOffset)
	}
	cases := []struct {
		name string
		spec batchSpec
		want *kerr.Error
	}{
		{"gap", batchSpec{pid: 1, epoch: 0, seq: 5}, kerr.OutOfOrderSequenceNumber},
		{"next in sequence", batchSpec{pid: 1, epoch: 0, seq: 3}, nil},
		{"new epoch not at 0", batchSpec{pid: 1, epoch: 1, seq: 3}, kerr.OutOfOrderSequenceNumber},
		{"unknown producer any sequence", batchSpec{pid: 2, epoch: 4, seq: 77}, nil},
	}
	for _, c := range cases {
		if _, code := appendSpec(t, p, c.spec, AppendOptions{}); code != c.want {
			t.Errorf("%s: got %v, want %v", c.name, code, c.want)
		}
	}
	// The producer moves to epoch 1 at sequence 0; epoch 0 is now stale.
	mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 1, seq: 0})
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 4}, AppendOptions{}); code != kerr.InvalidProducerEpoch {
		t.Errorf("stale epoch: got %v, want INVALID_PRODUCER_EPOCH", code)
	}
	// Sequences wrap from MaxInt32 to 0.
	mustAppendSpec(t, p, batchSpec{pid: 3, epoch: 0, seq: 2147483646, n: 2})
	mustAppendSpec(t, p, batchSpec{pid: 3, epoch: 0, seq: 0})
	// Only the last five batches are remembered: the first of six is no
	// longer a duplicate but out of order.
	for i := range 6 {
		mustAppendSpec(t, p, batchSpec{pid: 4, epoch: 0, seq: int32(i)})
	}
	if _, code := appendSpec(t, p, batchSpec{pid: 4, epoch: 0, seq: 0}, AppendOptions{}); code != kerr.OutOfOrderSequenceNumber {
		t.Errorf("sixth-oldest batch: got %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	if _, code := appendSpec(t, p, batchSpec{pid: 4, epoch: 0, seq: 1}, AppendOptions{}); code != nil {
		t.Errorf("fifth-oldest batch retry: got %v, want a duplicate", code)
	}
}

func TestProducerExpiry(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, tsMs: 1000})
	mustAppendSpec(t, p, batchSpec{pid: 2, epoch: 0, seq: 0, tsMs: 1000, txn: true})
	if n := p.ExpireProducers(1000+86400000, 86400000); n != 1 {
		t.Fatalf("expired %d producers, want 1 (the one without an open transaction)", n)
	}
	// Expired: unknown again, so any sequence is accepted.
	mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 9})
}

func TestTransactionMarkersLSOAndIndex(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	mustAppendSpec(t, p, batchSpec{noPID: true})                         // 0
	mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true}) // 1
	mustAppendSpec(t, p, batchSpec{noPID: true})                         // 2
	mustAppendSpec(t, p, batchSpec{pid: 2, epoch: 0, seq: 0, txn: true}) // 3
	if lso := p.LastStableOffset(); lso != 1 {
		t.Fatalf("LSO = %d, want 1 (pid 1's open transaction)", lso)
	}
	// A non-transactional batch inside an open transaction is refused.
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 1}, AppendOptions{}); code != kerr.InvalidTxnState {
		t.Fatalf("plain batch in transaction: %v", code)
	}
	off, code, err := p.AppendTxnMarker(TxnMarker{ProducerID: 1, ProducerEpoch: 0, CoordinatorEpoch: 3, Commit: false})
	if code != nil || err != nil || off != 4 {
		t.Fatalf("abort marker: %d %v %v", off, code, err)
	}
	if lso := p.LastStableOffset(); lso != 3 {
		t.Fatalf("LSO = %d, want 3 (pid 2 still open)", lso)
	}
	aborted, _ := p.CollectAbortedTxns(0, p.LastStableOffset())
	if len(aborted) != 1 || aborted[0].ProducerID != 1 || aborted[0].FirstOffset != 1 || aborted[0].LastStableOffset != 3 {
		t.Fatalf("aborted = %+v", aborted)
	}
	// A marker from an older coordinator is fenced; an older epoch refused.
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 1, ProducerEpoch: 0, CoordinatorEpoch: 2}); code != kerr.TransactionCoordinatorFenced {
		t.Fatalf("old coordinator: %v", code)
	}
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 2, ProducerEpoch: -1, CoordinatorEpoch: 3, Commit: true}); code != kerr.InvalidProducerEpoch {
		t.Fatalf("old epoch marker: %v", code)
	}
	// Transactions v2: the commit marker carries epoch+1.
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 2, ProducerEpoch: 1, CoordinatorEpoch: 3, Commit: true, TransactionVersion: TransactionVersion2}); code != nil {
		t.Fatalf("v2 commit: %v", code)
	}
	if lso, hw := p.LastStableOffset(), p.HighWatermark(); lso != hw {
		t.Fatalf("LSO %d != HW %d with no open transaction", lso, hw)
	}
	// The next v2 transaction starts at sequence 0 of the bumped epoch.
	if _, code := appendSpec(t, p, batchSpec{pid: 2, epoch: 1, seq: 1, txn: true}, AppendOptions{}); code != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("v2 next txn at seq 1: %v", code)
	}
	mustAppendSpec(t, p, batchSpec{pid: 2, epoch: 1, seq: 0, txn: true})
	// A retried v2 marker for a transaction already ended is rewritten; a
	// stale one (epoch not above the producer's, transaction open) refused.
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 2, ProducerEpoch: 1, CoordinatorEpoch: 3, Commit: true, TransactionVersion: TransactionVersion2}); code != kerr.InvalidProducerEpoch {
		t.Fatalf("stale v2 marker: %v", code)
	}
}

func TestTxnVerificationGuard(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	verified := AppendOptions{RequireVerification: true}
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true}, verified); code != kerr.InvalidTxnState {
		t.Fatalf("unverified: %v", code)
	}
	_, h := buildBatch(t, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true})
	g := p.StartTxnVerification(h, false)
	// The transaction ends (a marker) between verification and append.
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 1, ProducerEpoch: 0, CoordinatorEpoch: 0}); code != nil {
		t.Fatal(code)
	}
	verified.Verification = g
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true}, verified); code != kerr.InvalidTxnState {
		t.Fatalf("guard cleared by marker: %v", code)
	}
	verified.Verification = p.StartTxnVerification(h, false)
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true}, verified); code != nil {
		t.Fatalf("verified: %v", code)
	}
	// In the transaction now: no more verification needed.
	_, h2 := buildBatch(t, batchSpec{pid: 1, epoch: 0, seq: 1, txn: true})
	if g := p.StartTxnVerification(h2, false); g != nil {
		t.Fatal("guard for a producer with an open transaction")
	}
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 1, txn: true}, AppendOptions{RequireVerification: true}); code != nil {
		t.Fatalf("in transaction: %v", code)
	}
}

// TestTxnVerificationGuardSurvivesV2Marker: under transactions v2 the
// marker of a transaction and the next transaction share the bumped epoch;
// a marker landing while the next transaction's first batch is verified
// (the coordinator on another broker) keeps that batch's guard, as Kafka's
// isV2NextTransactionStarted. A marker of another epoch still clears it.
func TestTxnVerificationGuardSurvivesV2Marker(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true})
	// The producer committed at epoch 0; the coordinator bumped it to 1
	// and the next transaction begins at 1 before the marker lands.
	_, h := buildBatch(t, batchSpec{pid: 1, epoch: 1, seq: 0, txn: true})
	g := p.StartTxnVerification(h, true)
	if g == nil {
		t.Fatal("no guard for the next transaction")
	}
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 1, ProducerEpoch: 1, Commit: true, TransactionVersion: TransactionVersion2}); code != nil {
		t.Fatal(code)
	}
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 1, seq: 0, txn: true}, AppendOptions{RequireVerification: true, Verification: g}); code != nil {
		t.Fatalf("next transaction's batch after the v2 marker: %v", code)
	}

	// A marker of a later epoch (the transaction was fenced) clears it.
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 1, ProducerEpoch: 2, TransactionVersion: TransactionVersion2}); code != nil {
		t.Fatal(code)
	}
	_, h = buildBatch(t, batchSpec{pid: 1, epoch: 3, seq: 0, txn: true})
	g = p.StartTxnVerification(h, true)
	if _, code, _ := p.AppendTxnMarker(TxnMarker{ProducerID: 1, ProducerEpoch: 4, TransactionVersion: TransactionVersion2}); code != nil {
		t.Fatal(code)
	}
	if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 3, seq: 0, txn: true}, AppendOptions{RequireVerification: true, Verification: g}); code == nil {
		t.Fatal("a batch verified before a later epoch's marker was appended")
	}
}

func TestProducerStateSurvivesRestart(t *testing.T) {
	for _, clean := range []bool{true, false} {
		name := "crash"
		if clean {
			name = "clean"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := testPartition(t, dir, time.Now)
			// Enough batches to roll segments (4 KiB), so snapshots exist.
			for i := range 60 {
				mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: int32(i), payload: string(make([]byte, 100))})
			}
			mustAppendSpec(t, p, batchSpec{pid: 2, epoch: 0, seq: 0, txn: true})
			mustAppendSpec(t, p, batchSpec{pid: 3, epoch: 0, seq: 0, txn: true})
			if _, code, err := p.AppendTxnMarker(TxnMarker{ProducerID: 3, ProducerEpoch: 0}); code != nil || err != nil {
				t.Fatal(code, err)
			}
			if p.Log.NumSegments() < 2 {
				t.Fatalf("only %d segments", p.Log.NumSegments())
			}
			lso := p.LastStableOffset()
			if clean {
				if err := p.WriteSnapshot(); err != nil {
					t.Fatal(err)
				}
			}
			p.Log.Close()

			p = testPartition(t, dir, time.Now)
			defer p.Log.Close()
			if got := p.LastStableOffset(); got != lso {
				t.Fatalf("LSO after restart = %d, want %d", got, lso)
			}
			// The last batch of pid 1 is remembered: its retry is a duplicate.
			before := p.Log.LogEndOffset()
			mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 59, payload: string(make([]byte, 100))})
			if p.Log.LogEndOffset() != before {
				t.Fatal("retry after restart was written again")
			}
			if _, code := appendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 61}, AppendOptions{}); code != kerr.OutOfOrderSequenceNumber {
				t.Fatalf("gap after restart: %v", code)
			}
			if aborted, _ := p.CollectAbortedTxns(0, p.HighWatermark()); len(aborted) != 1 || aborted[0].ProducerID != 3 {
				t.Fatalf("aborted after restart: %+v", aborted)
			}
		})
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	in := map[int64]*producerEntry{}
	e := emptyEntry(5)
	e.addBatch(2, batchMetadata{firstSeq: 10, lastSeq: 14, firstOffset: 100, lastOffset: 104, timestamp: 77})
	e.coordinatorEpoch, e.currentTxnFirstOffset = 3, 100
	in[5] = &e
	empty := emptyEntry(9)
	empty.epoch = 1
	in[9] = &empty
	out, err := decodeSnapshot(encodeSnapshot(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].producerID != 5 || out[0].epoch != 2 || out[0].lastSeq() != 14 ||
		out[0].last().firstSeq != 10 || out[0].last().firstOffset != 100 || out[0].currentTxnFirstOffset != 100 ||
		out[0].coordinatorEpoch != 3 || out[1].count != 0 || out[1].epoch != 1 {
		t.Fatalf("round trip: %+v", out)
	}
	b := encodeSnapshot(in)
	b[len(b)-1] ^= 1
	if _, err := decodeSnapshot(b); err == nil {
		t.Fatal("corrupt snapshot decoded")
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	e := emptyEntry(5)
	e.addBatch(2, batchMetadata{firstSeq: 10, lastSeq: 14, firstOffset: 100, lastOffset: 104, timestamp: 77})
	f.Add(encodeSnapshot(map[int64]*producerEntry{5: &e}))
	f.Add(encodeSnapshot(nil))
	f.Add([]byte{0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := decodeSnapshot(b)
		if err != nil {
			return
		}
		m := map[int64]*producerEntry{}
		for i := range entries {
			m[entries[i].producerID] = &entries[i]
		}
		again, err := decodeSnapshot(encodeSnapshot(m))
		if err != nil || len(again) != len(entries) {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
	})
}

// TestLSOWaitsForMarkerBelowHighWatermark: a transaction's marker must be
// committed (below the high watermark) before the LSO moves past it, as
// Kafka's unreplicated transactions.
func TestLSOWaitsForMarkerBelowHighWatermark(t *testing.T) {
	p := testPartition(t, t.TempDir(), time.Now)
	defer p.Log.Close()
	mustAppendSpec(t, p, batchSpec{noPID: true})                         // 0
	mustAppendSpec(t, p, batchSpec{pid: 1, epoch: 0, seq: 0, txn: true}) // 1
	off, code, err := p.AppendTxnMarker(TxnMarker{ProducerID: 1, Commit: true})
	if code != nil || err != nil {
		t.Fatal(code, err)
	}
	// A follower has not fetched the marker yet.
	p.Log.UpdateHighWatermark(off)
	if lso := p.LastStableOffset(); lso != 1 {
		t.Fatalf("LSO with the marker above the high watermark = %d, want 1", lso)
	}
	p.Log.UpdateHighWatermark(off + 1)
	if lso := p.LastStableOffset(); lso != off+1 {
		t.Fatalf("LSO with the marker committed = %d, want %d", lso, off+1)
	}
}
