package clustertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnCommitThenEmptyAbortUnderLeaderKills is KAFKA-18464 on a 3-node
// cluster: a franz-go transactional producer (transactions v2) commits a
// transaction over six partitions and at once ends an empty next one (its
// only produce is refused with MESSAGE_TOO_LARGE, so franz-go aborts it at
// the epoch the commit answered, while the commit's markers are written),
// while partition leaders are killed and restarted. No answer may be
// PRODUCER_FENCED: the producer at the coordinator's current epoch is never
// fenced.
func TestTxnCommitThenEmptyAbortUnderLeaderKills(t *testing.T) {
	c := txnCluster(t)
	const topic = "txn-commit-abort"
	createReplicatedTopic(t, c, topic, txnPartitions)
	leadersSpreadOver(t, c, topic)
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tiny := "64"
	if _, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"max.message.bytes": &tiny}, "txn-commit-abort-tiny"); err != nil {
		t.Fatal(err)
	}
	waitFullISR(t, c, "txn-commit-abort-tiny", 30*time.Second)

	cl := transactionalProducer(t, c, "txn-commit-abort-id")
	if err := runTransaction(ctx, cl, topic, "warm-up", true); err != nil {
		t.Fatal(err)
	}
	const iterations = 30
	fenced, committed, otherErrors := 0, 0, 0
	big := strings.Repeat("x", 200)
	for i := range iterations {
		if i%10 == 5 {
			// Kill a node and bring it back: leaders and the transaction
			// coordinator may move.
			victim := c.Nodes[(i/10)%len(c.Nodes)]
			victim.Kill()
			victim.Restart()
		}
		err := runTransaction(ctx, cl, topic, "committed", true)
		switch {
		case errors.Is(err, kerr.ProducerFenced):
			fenced++
			t.Errorf("iteration %d: commit fenced: %v", i, err)
			continue
		case err != nil:
			otherErrors++
			t.Logf("iteration %d: commit: %v", i, err)
			_ = cl.EndTransaction(ctx, kgo.TryAbort)
			continue
		}
		committed++
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "txn-commit-abort-tiny", Value: []byte(big)}).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
			t.Logf("iteration %d: oversize produce: %v", i, err)
		}
		err = cl.EndTransaction(ctx, kgo.TryCommit) // franz-go aborts it
		switch {
		case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
			fenced++
			t.Errorf("iteration %d: empty abort right after a commit fenced: %v", i, err)
		case err != nil:
			otherErrors++
			t.Logf("iteration %d: empty abort: %v", i, err)
		}
	}
	t.Logf("%d iterations: %d commits, %d fenced, %d other (retriable) errors", iterations, committed, fenced, otherErrors)
	if fenced != 0 {
		t.Fatalf("%d answers were PRODUCER_FENCED", fenced)
	}
	if committed < iterations/2 {
		t.Fatalf("only %d of %d commits went through", committed, iterations)
	}
}
