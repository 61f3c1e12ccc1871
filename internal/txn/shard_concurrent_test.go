package txn

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestTransactionsV2EmptyAbortWhileCommitCompletes is KAFKA-18464: a
// producer that commits (and is answered the bumped epoch once the
// PrepareCommit record is written) and at once aborts an empty next
// transaction at that epoch, while the commit's markers are still being
// written, must get CONCURRENT_TRANSACTIONS (retriable), never
// PRODUCER_FENCED; once the commit completes the abort goes through.
func TestTransactionsV2EmptyAbortWhileCommitCompletes(t *testing.T) {
	for _, commit := range []bool{true, false} {
		h := newHarness(t, TV2)
		pid, epoch := h.init("x", nil)
		h.add("x", pid, epoch, TV2, tpA)
		res := h.s.EndTxn("x", pid, epoch, commit, TV2, h.now, h.newPID)
		if res.Code != nil {
			t.Fatal(res.Code)
		}
		job := h.apply(res.Write) // PrepareX written: the client has epoch+1
		bumped := job.ProducerEpoch
		if bumped != epoch+1 {
			t.Fatalf("bumped epoch %d, want %d", bumped, epoch+1)
		}
		for _, nextCommit := range []bool{false, true} {
			if got := h.s.EndTxn("x", pid, bumped, nextCommit, TV2, h.now, h.newPID); got.Code != kerr.ConcurrentTransactions {
				t.Fatalf("commit=%v: EndTxn(commit=%v) at the bumped epoch while markers are written: %v, want CONCURRENT_TRANSACTIONS", commit, nextCommit, got.Code)
			}
		}
		if _, code := h.s.AddPartitions("x", pid, bumped, []TopicPartition{tpB}, TV2, h.now); code != kerr.ConcurrentTransactions {
			t.Fatalf("commit=%v: AddPartitions at the bumped epoch while markers are written: %v", commit, code)
		}
		// A producer older than the bump is still fenced... unless it is
		// the retry of the EndTxn just answered, which is concurrent too.
		if got := h.s.EndTxn("x", pid, epoch, commit, TV2, h.now, h.newPID); got.Code != kerr.ConcurrentTransactions {
			t.Fatalf("commit=%v: retry of the EndTxn while markers are written: %v", commit, got.Code)
		}
		h.finish(job)
		next := h.end("x", pid, bumped, false, TV2)
		if next.ProducerEpoch != bumped+1 || next.Commit {
			t.Fatalf("commit=%v: empty abort after completion: %+v", commit, next)
		}
	}
}
