package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/config"
)

// testNode is a real node on a free loopback port with its own data dir.
type testNode struct {
	t    testing.TB
	dir  string
	node *Node
	over []string
}

func startTestNode(t testing.TB, overrides ...string) *testNode {
	t.Helper()
	tn := &testNode{t: t, dir: t.TempDir(), over: overrides}
	tn.start()
	t.Cleanup(func() { tn.stop() })
	return tn
}

func (tn *testNode) start() {
	tn.t.Helper()
	over := append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + tn.dir,
		"group.initial.rebalance.delay.ms=0",
		"metrics.listener=127.0.0.1:0",
	}, tn.over...)
	cfg, _, err := config.Load("", over, nil)
	if err != nil {
		tn.t.Fatalf("config: %v", err)
	}
	n, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tn.t.Fatalf("start node: %v", err)
	}
	tn.node = n
}

func (tn *testNode) stop() {
	if tn.node == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.node.Shutdown(ctx); err != nil {
		tn.t.Errorf("shutdown: %v", err)
	}
	tn.node = nil
}

// restart stops the node and starts it again on the same data dir (on a new
// port).
func (tn *testNode) restart() {
	tn.t.Helper()
	tn.stop()
	tn.start()
}

func (tn *testNode) addr() string { return tn.node.Addrs()[0].String() }

func (tn *testNode) client(opts ...kgo.Opt) *kgo.Client {
	tn.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(tn.addr())}, opts...)...)
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.t.Cleanup(cl.Close)
	return cl
}

func (tn *testNode) admin() *kadm.Client { return kadm.NewClient(tn.client()) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreateTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := adm.CreateTopics(testContext(t), partitions, 1, configs, topic)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp[topic].Err; err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// produceKeyed produces n records with keys k0..k(n-1)%keys and values
// "topic-i" and fails the test on any error.
func produceKeyed(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	ctx := testContext(t)
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{
			Topic:   topic,
			Key:     []byte(fmt.Sprintf("k%d", i%17)),
			Value:   []byte(fmt.Sprintf("%s-%d", topic, i)),
			Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}},
		})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeAll reads n records from the start of topic.
func consumeAll(t *testing.T, tn *testNode, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl := tn.client(append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	ctx := testContext(t)
	var out []*kgo.Record
	for len(out) < n {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(out), n, err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		out = append(out, fetches.Records()...)
	}
	return out
}
