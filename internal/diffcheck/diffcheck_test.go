package diffcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/clustertest"
	"github.com/samsa-streaming/samsa/internal/kafkaref"
)

// TestDifferential starts Apache Kafka and Samsa, sends both every case at
// every common version and reports each difference. It runs with
// SAMSA_DIFFCHECK=1 (every version) or SAMSA_DIFFCHECK=short (oldest and
// newest); SAMSA_DIFFCHECK_WRITE=1 rewrites docs/compatibility.md's table.
// Differences are the table's content, not failures: the test fails when
// a node cannot be started or stops answering.
func TestDifferential(t *testing.T) {
	mode := os.Getenv("SAMSA_DIFFCHECK")
	if mode == "" {
		t.Skip("set SAMSA_DIFFCHECK=1 or SAMSA_DIFFCHECK=short to compare Samsa with Apache Kafka")
	}
	short := mode == "short"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	classpath, err := kafkaref.Classpath(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kafkaNode, err := kafkaref.Start(ctx, kafkaref.Config{Classpath: classpath, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kafkaNode.Stop(); err != nil {
			t.Error(err)
		}
	})
	// Configured as the Kafka node is: a combined node with a separate
	// CONTROLLER listener named in controller.quorum.voters, and the
	// single-node overrides of Kafka's server.properties (a cluster's
	// internal topics wait for their replication factor, as Kafka's do).
	samsaNode := clustertest.StartCluster(t, 1, "group.initial.rebalance.delay.ms=0",
		"offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
		"share.coordinator.state.topic.replication.factor=1", "share.coordinator.state.topic.min.isr=1").Nodes[0]

	kafka, err := NewSide("kafka", kafkaNode.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	samsa, err := NewSide("samsa", samsaNode.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer samsa.Close()
	for _, side := range []*Side{kafka, samsa} {
		if err := createFixture(side); err != nil {
			t.Fatalf("%s: fixture: %v", side.Name, err)
		}
		if err := warmUp(side); err != nil {
			t.Fatalf("%s: warm-up: %v", side.Name, err)
		}
	}
	outcomes, err := Run(kafka, samsa, Cases(), short)
	if err != nil {
		t.Fatal(err)
	}
	differing := 0
	for _, o := range outcomes {
		if len(o.Differences) > 0 {
			differing++
			t.Logf("%s v%d %q: %s", kmsg.NameForKey(o.Key), o.Version, o.Case, strings.Join(o.Differences, "; "))
		}
	}
	t.Logf("%d case-versions, %d differ", len(outcomes), differing)
	if len(outcomes) == 0 {
		t.Fatal("nothing compared")
	}
	// Both nodes must still answer after every bad input.
	for _, side := range []*Side{kafka, samsa} {
		if _, err := side.send(kmsg.NewPtrApiVersionsRequest(), 3); err != nil {
			t.Errorf("%s stopped answering: %v", side.Name, err)
		}
	}
	if os.Getenv("SAMSA_DIFFCHECK_WRITE") != "" {
		table := Table(CommonVersions(kafka, samsa), outcomes, kafkaref.Version, short)
		if err := WriteSection(compatibilityDoc(), table); err != nil {
			t.Fatal(err)
		}
	}
}

// createFixture creates FixtureTopic and writes fixtureRecords records to
// its partition 0.
func createFixture(side *Side) error {
	created, err := side.send(createTopicRequest(FixtureTopic, fixturePartitions, nil), side.versions[19][1])
	if err != nil {
		return err
	}
	if code := created.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		return errors.New("create topic: " + errorCodeName(code))
	}
	// A new topic's leader may need a moment on either node.
	deadline := time.Now().Add(30 * time.Second)
	for {
		version := min(side.versions[0][1], 12)
		resp, err := side.send(produceRequest(side, version, FixtureTopic, 0, recordBatch(fixtureRecords)), version)
		if err != nil {
			return err
		}
		code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		if code == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("produce: " + errorCodeName(code))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func compatibilityDoc() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", "compatibility.md")
}

// warmUp waits until a node's group and transaction coordinators answer
// for every key the cases use: Kafka creates __consumer_offsets and
// __transaction_state on first use and loads their partitions after, and
// answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS until then, which
// would compare a loading node with a ready one.
func warmUp(side *Side) error {
	retriable := map[int16]bool{14: true, 15: true, 16: true} // COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
	deadline := time.Now().Add(2 * time.Minute)
	ready := func(check func() ([]int16, error)) error {
		for {
			codes, err := check()
			if err != nil {
				return err
			}
			waiting := false
			for _, code := range codes {
				waiting = waiting || retriable[code]
			}
			if !waiting {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("coordinators not ready: codes %v", codes)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	find := func(keyType int8, keys []string) func() ([]int16, error) {
		return func() ([]int16, error) {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorType, req.CoordinatorKeys = keyType, keys
			resp, err := side.send(req, 4)
			if err != nil {
				return nil, err
			}
			var codes []int16
			for _, c := range resp.(*kmsg.FindCoordinatorResponse).Coordinators {
				codes = append(codes, c.ErrorCode)
			}
			return codes, nil
		}
	}
	describeGroups := func() ([]int16, error) {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = groupsUsed()
		resp, err := side.send(req, 5)
		if err != nil {
			return nil, err
		}
		var codes []int16
		for _, g := range resp.(*kmsg.DescribeGroupsResponse).Groups {
			codes = append(codes, g.ErrorCode)
		}
		return codes, nil
	}
	describeTransactions := func() ([]int16, error) {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = transactionsUsed
		resp, err := side.send(req, 0)
		if err != nil {
			return nil, err
		}
		var codes []int16
		for _, s := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			codes = append(codes, s.ErrorCode)
		}
		return codes, nil
	}
	initProducer := func() ([]int16, error) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60_000, -1, -1
		resp, err := side.send(req, 0)
		if err != nil {
			return nil, err
		}
		return []int16{resp.(*kmsg.InitProducerIDResponse).ErrorCode}, nil
	}
	for _, check := range []func() ([]int16, error){
		find(0, groupsUsed()), describeGroups, find(1, transactionsUsed), describeTransactions, initProducer,
	} {
		if err := ready(check); err != nil {
			return err
		}
	}
	return nil
}
