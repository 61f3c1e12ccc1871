package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnEmptyAbortRightAfterCommitIsNeverFenced is KAFKA-18464 with a
// real client: a franz-go transactional producer (transactions v2) commits,
// and at once begins a next transaction whose only produce the broker
// refuses (MESSAGE_TOO_LARGE, answered before the partition joins the
// transaction), so franz-go ends it with an EndTxn abort of an empty
// transaction at the epoch the commit answered, while the commit's markers
// may still be written. Kafka answers CONCURRENT_TRANSACTIONS (franz-go
// retries) until the commit completes, and never PRODUCER_FENCED; every
// committed record is readable.
func TestTxnEmptyAbortRightAfterCommitIsNeverFenced(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "commit-then-abort", 3, nil)
	tiny := "64"
	mustCreateTopic(t, adm, "commit-then-abort-tiny", 1, map[string]*string{"max.message.bytes": &tiny})
	cl := txnProducer(t, tn, "commit-then-abort-id", kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	ctx := testContext(t)
	var want []string
	commit := func(i int) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		// One record on each partition: the commit has markers to write to
		// three partitions.
		for p := range 3 {
			v := fmt.Sprintf("v%d-%d", i, p)
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "commit-then-abort", Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want = append(want, v)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("iteration %d: commit: %v", i, err)
		}
	}
	// The first commit lets franz-go see that the cluster runs
	// transactions v2 (it then reloads its producer id and opts in).
	commit(-1)

	const iterations = 40
	for i := range iterations {
		_, before, err := cl.ProducerID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		commit(i)
		if _, after, _ := cl.ProducerID(ctx); after != before+1 {
			t.Fatalf("iteration %d: epoch %d after the commit, want %d: not transactions v2", i, after, before+1)
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("x", 200)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "commit-then-abort-tiny", Value: []byte(big)}).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
			t.Fatalf("iteration %d: oversize produce: %v, want MESSAGE_TOO_LARGE", i, err)
		}
		err = cl.EndTransaction(ctx, kgo.TryCommit) // franz-go turns it into an abort
		switch {
		case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
			t.Fatalf("iteration %d: the empty abort right after a commit was fenced: %v", i, err)
		case err != nil:
			t.Fatalf("iteration %d: empty abort: %v", i, err)
		}
	}
	got := pollUntil(t, tn, "commit-then-abort", true, 30*time.Second, hasAll(want...))
	if !hasAll(want...)(got) {
		t.Fatalf("committed records read back: %d of %d", len(got), len(want))
	}
}
