package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// transactionVersions runs a test under both transaction protocols a
// client may speak: v2 (KIP-890 part 2, the default against this broker)
// and v1 (a client capped at Kafka 3.9's API versions: explicit
// AddPartitionsToTxn/AddOffsetsToTxn, EndTxn without epoch bumps).
var transactionVersions = []struct {
	name string
	opts []kgo.Opt
}{
	{"tv2", nil},
	{"tv1", []kgo.Opt{kgo.MaxVersions(kversion.V3_9_0())}},
}

// txnProducer is a transactional client.
func txnProducer(t *testing.T, tn *testNode, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return tn.client(append([]kgo.Opt{
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(60 * time.Second),
		kgo.RecordRetries(100),
	}, opts...)...)
}

// produceTxn produces values to topic in one transaction and commits or
// aborts it.
func produceTxn(t *testing.T, cl *kgo.Client, topic string, commit bool, values ...string) {
	t.Helper()
	ctx := testContext(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit=%v): %v", commit, err)
	}
}

// pollUntil reads topic from the start with a new consumer until stop
// returns true for the values seen so far, or the deadline passes.
func pollUntil(t *testing.T, tn *testNode, topic string, committed bool, deadline time.Duration, stop func(values []string) bool) []string {
	t.Helper()
	opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200 * time.Millisecond)}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := tn.client(opts...)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var values []string
	for !stop(values) {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return values
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	return values
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

func hasAll(want ...string) func([]string) bool {
	return func(values []string) bool {
		for _, w := range want {
			if !contains(values, w) {
				return false
			}
		}
		return true
	}
}

func values(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// waitTxnState polls DescribeTransactions, with a deadline, until id is in
// state.
func waitTxnState(t *testing.T, adm *kadm.Client, id, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		described, err := adm.DescribeTransactions(context.Background(), id)
		if err == nil {
			if last = described[id].State; last == state {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("transaction %s is %s, want %s", id, last, state)
}
