package clustertest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSSLClusterSurvivesLeaderKill runs a three-node cluster with no
// plaintext port at all (clients, replication, controller RPCs and Raft on
// SSL with client certificates required), SIGKILLs the leader of a
// replicated partition while an idempotent acks=all producer writes, and
// checks that every acknowledged record is read back once, in order, after
// the old leader has restarted and caught up over TLS.
func TestSSLClusterSurvivesLeaderKill(t *testing.T) {
	c := StartSSLCluster(t, 3, "broker.session.timeout.ms=1000", "broker.heartbeat.interval.ms=100")
	for _, node := range c.Nodes {
		if strings.Contains(node.Log(), sslStorePassword) {
			t.Fatalf("node %s logged the keystore password", node.Addr())
		}
	}
	// A plaintext client gets nothing from any port.
	if _, err := brokerCount(c.Nodes[0].Addr()); err == nil {
		t.Fatal("a plaintext client was answered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, c.ClientOpts...), opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	adm := kadm.NewClient(client())
	const topic = "ssl-replicated"
	two := "2"
	if resp, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": &two}, topic); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	isr := func() (leader int32, size int, err error) {
		topics, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return 0, 0, err
		}
		p := topics[topic].Partitions[0]
		return p.Leader, len(p.ISR), p.Err
	}
	waitFullISR := func(timeout time.Duration) {
		WaitFor(t, timeout, func() error {
			_, size, err := isr()
			if err == nil && size != 3 {
				return errISR(size)
			}
			return err
		})
	}
	waitFullISR(60 * time.Second)

	producer := client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	next := 0
	produce := func(n int) {
		t.Helper()
		for range n {
			record := &kgo.Record{Value: []byte(strconv.Itoa(next)), Partition: 0}
			if err := producer.ProduceSync(ctx, record).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", next, err)
			}
			next++
		}
	}
	produce(200)
	leader, _, err := isr()
	if err != nil {
		t.Fatal(err)
	}
	killed := c.Nodes[leader-1]
	killed.Kill()
	produce(200) // the producer's retries carry it over the failover
	killed.Start()
	waitFullISR(90 * time.Second)
	produce(50)

	consumer := client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var values []string
	for len(values) < next {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatalf("consume after %d records: %v", len(values), err)
		}
		fetches.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	for i, v := range values {
		if v != strconv.Itoa(i) {
			t.Fatalf("record %d is %q: acknowledged records lost, duplicated or reordered", i, v)
		}
	}
	if len(values) != next {
		t.Fatalf("read %d records, wrote %d", len(values), next)
	}
}

type errISR int

func (e errISR) Error() string { return "ISR has " + strconv.Itoa(int(e)) + " of 3 replicas" }

// TestSSLDedicatedControllers runs three controllers and a broker-only
// node with only SSL listeners: the broker registers, follows the metadata
// log and forwards CreateTopics over the controllers' SSL listener, and a
// client produces and consumes through it.
func TestSSLDedicatedControllers(t *testing.T) {
	c := StartSSLDedicatedCluster(t, 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("ssl-dedicated"), kgo.DefaultProduceTopic("ssl-dedicated")}, c.ClientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "ssl-dedicated"); err != nil || resp.Err != nil {
		t.Fatalf("create topic through the broker: %v %v", err, resp.Err)
	}
	WaitFor(t, 30*time.Second, func() error {
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("through TLS all the way")}).FirstErr()
	})
	fetches := cl.PollRecords(ctx, 1)
	if err := fetches.Err(); err != nil || fetches.NumRecords() != 1 {
		t.Fatalf("consume: %v, %d records", err, fetches.NumRecords())
	}
	for _, controller := range c.Controllers {
		if _, err := brokerCount(controller.Addr()); err == nil {
			t.Fatalf("controller %s answered a plaintext client", controller.Addr())
		}
	}
}
