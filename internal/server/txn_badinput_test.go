package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// retryLoading repeats a coordinator request while the transaction
// coordinator is still loading its partition (it loads in the background
// after the topic is created).
func retryLoading[T any](t *testing.T, do func() (T, int16)) (T, int16) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, code := do()
		if (code != kerr.CoordinatorLoadInProgress.Code && code != kerr.NotCoordinator.Code && code != kerr.CoordinatorNotAvailable.Code) || time.Now().After(deadline) {
			return v, code
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func strp(s string) *string { return &s }

// TestTxnBadInputsGetKafkaErrors sends malformed and out-of-order
// transaction requests; each gets the error Kafka answers, and the broker
// keeps serving transactions afterwards.
func TestTxnBadInputsGetKafkaErrors(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "bad", 1, nil)
	cl := tn.client()
	ctx := testContext(t)
	rp := rawProducer{t: t, cl: cl, topic: "bad"}

	// InitProducerId: invalid timeout, empty id, half a KIP-360 pair.
	_, code := retryLoading(t, func() (int, int16) {
		_, _, err := rp.initProducerID(strp("bad-txn"), 0)
		return 0, codeOf(err)
	})
	if code != kerr.InvalidTransactionTimeout.Code {
		t.Errorf("InitProducerId with timeout 0: %v", kerr.ErrorForCode(code))
	}
	// Sent to the node directly: a client would not find a coordinator
	// for an empty id.
	empty := kmsg.NewPtrInitProducerIDRequest()
	empty.TransactionalID, empty.TransactionTimeoutMillis = strp(""), 1000
	if resp, err := empty.RequestWith(ctx, cl.Broker(int(tn.node.cfg.NodeID))); err != nil || resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("InitProducerId with empty id: %+v %v", resp, err)
	}
	half := kmsg.NewPtrInitProducerIDRequest()
	half.TransactionalID, half.TransactionTimeoutMillis, half.ProducerID, half.ProducerEpoch = strp("bad-txn"), 1000, 5, -1
	if resp, err := half.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("InitProducerId with a producer id but no epoch: %v %v", resp, err)
	}

	// EndTxn and AddPartitionsToTxn before InitProducerId.
	end := func(id string, pid int64, epoch int16, commit bool) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}
	if _, code := retryLoading(t, func() (int, int16) { return 0, end("never-initialized", 1, 0, true) }); code != kerr.InvalidProducerIDMapping.Code {
		t.Errorf("EndTxn without InitProducerId: %v", kerr.ErrorForCode(code))
	}
	pid, epoch, err := rp.initProducerID(strp("bad-txn"), 10000)
	if err != nil {
		t.Fatal(err)
	}
	if code := end("bad-txn", pid, epoch+1, true); code != kerr.ProducerFenced.Code {
		t.Errorf("EndTxn with a wrong epoch: %v", kerr.ErrorForCode(code))
	}
	if code := end("bad-txn", pid+1, epoch, true); code != kerr.InvalidProducerIDMapping.Code {
		t.Errorf("EndTxn with a wrong producer id: %v", kerr.ErrorForCode(code))
	}
	if code := end("bad-txn", pid, epoch, true); code != kerr.InvalidTxnState.Code {
		t.Errorf("EndTxn(commit) with nothing in the transaction: %v", kerr.ErrorForCode(code))
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version = 3
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = "bad-txn", pid, epoch
	add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "bad", Partitions: []int32{0}}, {Topic: "missing", Partitions: []int32{0}}}
	v3 := tn.client(kgo.MaxVersions(kversion.V3_9_0()))
	if resp, err := add.RequestWith(ctx, v3); err != nil {
		t.Fatal(err)
	} else {
		codes := map[string]int16{}
		for _, rt := range resp.Topics {
			codes[rt.Topic] = rt.Partitions[0].ErrorCode
		}
		if codes["missing"] != kerr.UnknownTopicOrPartition.Code || codes["bad"] != kerr.OperationNotAttempted.Code {
			t.Errorf("AddPartitionsToTxn with a missing topic: %v", codes)
		}
	}

	// Transactional produce to a partition not in the transaction:
	// INVALID_TXN_STATE up to v10, TRANSACTION_ABORTABLE at v11.
	for _, c := range []struct {
		version int16
		want    error
	}{{10, kerr.InvalidTxnState}, {11, kerr.TransactionAbortable}} {
		versions := kversion.V4_0_0()
		versions.SetMaxKeyVersion(0, c.version)
		capped := tn.client(kgo.MaxVersions(versions))
		raw := rawProducer{t: t, cl: capped, topic: "bad"}
		if _, err := raw.produce(strp("bad-txn"), pid, epoch, 0, 1, true); err != c.want {
			t.Errorf("produce v%d to a partition not added: %v, want %v", c.version, err, c.want)
		}
	}
	if _, err := rp.produce(nil, pid, epoch, 0, 1, true); err != kerr.TransactionalIDAuthorizationFailed {
		t.Errorf("transactional produce without a transactional id: %v", err)
	}

	// TxnOffsetCommit without AddOffsetsToTxn: INVALID_TXN_STATE up to v3,
	// TRANSACTION_ABORTABLE at v4.
	for _, c := range []struct {
		version int16
		want    int16
	}{{3, kerr.InvalidTxnState.Code}, {4, kerr.TransactionAbortable.Code}} {
		versions := kversion.V3_9_0()
		versions.SetMaxKeyVersion(28, c.version)
		toc := kmsg.NewPtrTxnOffsetCommitRequest()
		toc.TransactionalID, toc.Group, toc.ProducerID, toc.ProducerEpoch = "bad-txn", "g", pid, epoch
		toc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "bad", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
		if resp, err := toc.RequestWith(ctx, tn.client(kgo.MaxVersions(versions))); err != nil {
			t.Fatal(err)
		} else if code := resp.Topics[0].Partitions[0].ErrorCode; code != c.want {
			t.Errorf("TxnOffsetCommit v%d without AddOffsetsToTxn: %v", c.version, kerr.ErrorForCode(code))
		}
	}

	// Markers for partitions that do not exist; admin requests with bad
	// filters.
	markers := kmsg.NewPtrWriteTxnMarkersRequest()
	markers.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: pid, ProducerEpoch: epoch, Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "missing", Partitions: []int32{0}}}}}
	if resp, err := markers.RequestWith(ctx, cl.Broker(int(tn.node.cfg.NodeID))); err != nil {
		t.Fatal(err)
	} else if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("WriteTxnMarkers to a missing partition: %v", kerr.ErrorForCode(code))
	}
	list := kmsg.NewPtrListTransactionsRequest()
	list.TransactionalIDPattern = strp("(")
	if resp, err := list.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Errorf("ListTransactions with an invalid pattern: %+v %v", resp, err)
	}
	list.TransactionalIDPattern, list.StateFilters = nil, []string{"NoSuchState"}
	if resp, err := list.RequestWith(ctx, cl); err != nil || len(resp.UnknownStateFilters) != 1 || len(resp.TransactionStates) != 0 {
		t.Errorf("ListTransactions with an unknown state: %+v %v", resp, err)
	}

	// The broker still runs transactions.
	good := txnProducer(t, tn, "after-bad")
	produceTxn(t, good, "bad", true, "fine")
	if got := pollUntil(t, tn, "bad", true, 30*time.Second, hasAll("fine")); !contains(got, "fine") {
		t.Fatalf("transaction after bad inputs not readable: %v", got)
	}
}

func codeOf(err error) int16 {
	if e, ok := err.(*kerr.Error); ok {
		return e.Code
	}
	return 0
}
