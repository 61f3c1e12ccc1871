package server

import (
	"testing"

	"github.com/samsa-streaming/samsa/internal/controller"
)

// TestTransactionStateTopicConfigs checks the configs __transaction_state
// is created with, as Kafka's TransactionStateManager sets them:
// min.insync.replicas from transaction.state.log.min.isr, here capped to
// the replication factor of one node (Kafka would refuse to create the
// topic), not the broker's min.insync.replicas, which a one-node
// __transaction_state could never meet; transactions then go through.
func TestTransactionStateTopicConfigs(t *testing.T) {
	tn := startTestNode(t, "transaction.state.log.num.partitions=2", "transaction.state.log.min.isr=3", "min.insync.replicas=2")
	one := "1"
	mustCreateTopic(t, tn.admin(), "txn-cfg", 1, map[string]*string{"min.insync.replicas": &one})
	cl := txnProducer(t, tn, "txn-cfg-producer")
	produceTxn(t, cl, "txn-cfg", true, "a")

	configs, err := tn.admin().DescribeTopicConfigs(testContext(t), controller.TransactionStateTopic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := configs.On(controller.TransactionStateTopic, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"min.insync.replicas":            "1",
		"cleanup.policy":                 "compact",
		"compression.type":               "uncompressed",
		"unclean.leader.election.enable": "false",
	}
	for _, c := range rc.Configs {
		if w, ok := want[c.Key]; ok {
			if c.MaybeValue() != w {
				t.Errorf("%s = %q, want %q", c.Key, c.MaybeValue(), w)
			}
			delete(want, c.Key)
		}
	}
	for k := range want {
		t.Errorf("%s not described", k)
	}
}
