package server

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnAbortedInvisibleToReadCommitted: committed transactions are read
// by everyone, aborted ones only by read_uncommitted consumers.
func TestTxnAbortedInvisibleToReadCommitted(t *testing.T) {
	for _, tv := range transactionVersions {
		t.Run(tv.name, func(t *testing.T) {
			tn := startTestNode(t)
			mustCreateTopic(t, tn.admin(), "t", 2, nil)
			cl := txnProducer(t, tn, "tx-"+tv.name, tv.opts...)
			produceTxn(t, cl, "t", true, "a0", "a1", "a2")
			produceTxn(t, cl, "t", false, "b0", "b1", "b2")
			produceTxn(t, cl, "t", true, "c0", "c1")
			produceTxn(t, cl, "t", false, "d0")

			got := pollUntil(t, tn, "t", true, 30*time.Second, hasAll("a0", "a1", "a2", "c0", "c1"))
			slices.Sort(got)
			if want := []string{"a0", "a1", "a2", "c0", "c1"}; !slices.Equal(got, want) {
				t.Fatalf("read_committed read %v, want %v", got, want)
			}
			all := pollUntil(t, tn, "t", false, 30*time.Second, hasAll("a0", "b0", "b1", "b2", "c1", "d0"))
			if !hasAll("a0", "a1", "a2", "b0", "b1", "b2", "c0", "c1", "d0")(all) {
				t.Fatalf("read_uncommitted read %v, want the aborted records too", all)
			}
		})
	}
}

// TestTxnOpenTransactionHoldsBackLSO: an open transaction stops
// read_committed consumers at its first offset, even for records written
// after it outside any transaction; committing it releases them.
func TestTxnOpenTransactionHoldsBackLSO(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "lso", 1, nil)
	plain := tn.client(kgo.DefaultProduceTopic("lso"))
	ctx := testContext(t)
	if err := plain.ProduceSync(ctx, kgo.StringRecord("before")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tx := txnProducer(t, tn, "holder")
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Topic: "lso", Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := plain.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The read_uncommitted end is 3; the read_committed end (the LSO) is
	// the open transaction's first offset, 1.
	ends, err := adm.ListEndOffsets(ctx, "lso")
	if err != nil {
		t.Fatal(err)
	}
	committedEnds, err := adm.ListCommittedOffsets(ctx, "lso")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := ends.Lookup("lso", 0); e.Offset != 3 {
		t.Fatalf("high watermark %d, want 3", e.Offset)
	}
	if e, _ := committedEnds.Lookup("lso", 0); e.Offset != 1 {
		t.Fatalf("last stable offset %d, want 1", e.Offset)
	}
	got := pollUntil(t, tn, "lso", true, 2*time.Second, hasAll("after"))
	if !slices.Equal(got, []string{"before"}) {
		t.Fatalf("read_committed read %v past the open transaction", got)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	got = pollUntil(t, tn, "lso", true, 30*time.Second, hasAll("before", "open", "after"))
	if !slices.Equal(got, []string{"before", "open", "after"}) {
		t.Fatalf("after commit read_committed read %v", got)
	}
}
