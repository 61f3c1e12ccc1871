package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnAdminAPIs drives DescribeTransactions, ListTransactions and
// DescribeProducers with kadm, and checks that each protocol bumps epochs
// as it should: transactions v2 once per transaction, v1 never.
func TestTxnAdminAPIs(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "adm", 1, nil)
	ctx := testContext(t)
	for _, tv := range transactionVersions {
		cl := txnProducer(t, tn, "adm-"+tv.name, tv.opts...)
		for i := range 3 {
			produceTxn(t, cl, "adm", i != 1, tv.name)
		}
	}
	// The markers (and the Complete record) follow the EndTxn answer.
	waitTxnState(t, adm, "adm-tv2", "CompleteCommit")
	waitTxnState(t, adm, "adm-tv1", "CompleteCommit")
	described, err := adm.DescribeTransactions(ctx, "adm-tv2", "adm-tv1", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if d := described["adm-tv2"]; d.Err != nil || d.State != "CompleteCommit" || d.ProducerEpoch != 3 {
		t.Fatalf("adm-tv2 = %+v, want CompleteCommit at epoch 3 (one bump per transaction)", d)
	}
	if d := described["adm-tv1"]; d.Err != nil || d.State != "CompleteCommit" || d.ProducerEpoch != 0 {
		t.Fatalf("adm-tv1 = %+v, want CompleteCommit at epoch 0", d)
	}
	if d := described["nobody"]; d.Err == nil {
		t.Fatalf("unknown transactional id described: %+v", d)
	}

	// An open transaction shows in ListTransactions and DescribeProducers.
	open := txnProducer(t, tn, "adm-open")
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.ProduceSync(ctx, &kgo.Record{Topic: "adm", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	listed, err := adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed["adm-open"].State != "Ongoing" {
		t.Fatalf("ongoing transactions = %+v", listed)
	}
	producers, err := adm.DescribeProducers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var openStart int64 = -2
	producers.EachProducer(func(p kadm.DescribedProducer) {
		if p.Topic == "adm" && p.CurrentTxnStartOffset >= 0 {
			openStart = p.CurrentTxnStartOffset
		}
	})
	ends, err := adm.ListEndOffsets(ctx, "adm")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := ends.Lookup("adm", 0); openStart != e.Offset-1 {
		t.Fatalf("open transaction starts at %d, want %d (the last record)", openStart, e.Offset-1)
	}
	if err := open.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}
