package server

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnTimeoutAbortUnblocksReadCommitted: a transaction abandoned by its
// producer is aborted once transaction.timeout.ms passes, which moves the
// last stable offset past it; its records stay invisible to read_committed
// consumers and its producer is fenced.
func TestTxnTimeoutAbortUnblocksReadCommitted(t *testing.T) {
	for _, tv := range transactionVersions {
		t.Run(tv.name, func(t *testing.T) {
			tn := startTestNode(t, "transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
			adm := tn.admin()
			mustCreateTopic(t, adm, "slow", 1, nil)
			ctx := testContext(t)

			abandoned := tn.client(append([]kgo.Opt{kgo.TransactionalID("abandoned-" + tv.name), kgo.TransactionTimeout(time.Second)}, tv.opts...)...)
			if err := abandoned.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := abandoned.ProduceSync(ctx, &kgo.Record{Topic: "slow", Value: []byte("never")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			plain := tn.client(kgo.DefaultProduceTopic("slow"))
			if err := plain.ProduceSync(ctx, kgo.StringRecord("later")).FirstErr(); err != nil {
				t.Fatal(err)
			}

			// Poll, with a deadline, until the abort frees "later".
			got := pollUntil(t, tn, "slow", true, 30*time.Second, hasAll("later"))
			if !slices.Equal(got, []string{"later"}) {
				t.Fatalf("read_committed read %v, want only the record after the aborted transaction", got)
			}
			// The markers are written before the CompleteAbort record.
			waitTxnState(t, adm, "abandoned-"+tv.name, "CompleteAbort")
			// The producer that walked away is fenced: its commit fails.
			if err := abandoned.EndTransaction(ctx, kgo.TryCommit); err == nil {
				t.Fatal("commit of a timed-out transaction succeeded")
			}
			all := pollUntil(t, tn, "slow", false, 30*time.Second, hasAll("never", "later"))
			if !hasAll("never", "later")(all) {
				t.Fatalf("read_uncommitted read %v", all)
			}
		})
	}
}
