package clustertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const saslClusterPassword = "cluster-Secret-5c1d"

// TestSASLOnlyClusterReplicates runs three nodes whose every listener,
// inter-broker and controller included, is SASL_PLAINTEXT with
// SCRAM-SHA-512, so nothing reaches a node unauthenticated on the Kafka
// protocol: replication keeps every acknowledged record across a killed
// node, transactions commit across nodes, and an unauthenticated client is
// turned away.
func TestSASLOnlyClusterReplicates(t *testing.T) {
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="` + saslClusterPassword + `";`
	auth := kgo.SASL(scram.Auth{User: "admin", Pass: saslClusterPassword}.AsSha512Mechanism())
	c := StartSecuredCluster(t, 3, []kgo.Opt{auth},
		"listener.security.protocol.map=PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
		"sasl.mechanism.controller.protocol=SCRAM-SHA-512",
		"listener.name.plaintext.scram-sha-512.sasl.jaas.config="+jaas,
		"listener.name.controller.scram-sha-512.sasl.jaas.config="+jaas,
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password="+saslClusterPassword+"]",
	)
	cl := newClient(t, c.Addrs(), auth, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("secured"))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	minISR := "2"
	WaitFor(t, 30*time.Second, func() error {
		resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": &minISR}, "secured")
		if err == nil && resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return resp.Err
		}
		return err
	})
	fullISR := func() error {
		topics, err := adm.ListTopics(ctx, "secured")
		if err != nil {
			return err
		}
		for _, p := range topics["secured"].Partitions {
			if len(p.ISR) != 3 {
				return fmt.Errorf("partition %d ISR %v", p.Partition, p.ISR)
			}
		}
		return nil
	}
	// Followers fetch over SASL, or the ISR never fills.
	WaitFor(t, 60*time.Second, fullISR)

	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 300)
	c.Nodes[2].Kill()
	produce(300, 600)
	c.Nodes[2].Start()
	WaitFor(t, 60*time.Second, fullISR)

	// A transaction commits; its coordinator reaches the partition leaders
	// over SASL.
	txn := newClient(t, c.Addrs(), auth, kgo.TransactionalID("secured-txn"), kgo.DefaultProduceTopic("secured"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 600; i < 650; i++ {
		if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatalf("transactional produce: %v", err)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}

	consumer := newClient(t, c.Addrs(), auth, kgo.ConsumeTopics("secured"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := map[string]bool{}
	for len(seen) < 650 {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 650 records", len(seen))
		}
		fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}

	// Without credentials nothing is served.
	anonymous := newClient(t, c.Addrs(), kgo.RetryTimeout(time.Second), kgo.RequestRetries(1))
	pingCtx, pingCancel := context.WithTimeout(ctx, 5*time.Second)
	defer pingCancel()
	if err := anonymous.Ping(pingCtx); err == nil {
		t.Fatal("an unauthenticated client was served")
	}
	for _, n := range c.Nodes {
		if strings.Contains(n.Log(), saslClusterPassword) {
			t.Fatalf("node %s logged the password", n.Addr())
		}
	}
}
