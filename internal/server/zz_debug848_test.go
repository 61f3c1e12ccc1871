package server

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/samsa-streaming/samsa/internal/config"
)

func TestZZDebug848(t *testing.T) {
	dir := t.TempDir()
	over := []string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + dir, "group.initial.rebalance.delay.ms=0", "metrics.listener=127.0.0.1:0",
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=300"}
	start := func() *Node {
		cfg, _, err := config.Load("", over, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tn := &testNode{t: t, dir: dir, node: start(), over: over[4:]}
	t.Cleanup(func() { tn.stop() })
	adm := tn.admin()
	mustCreateTopic(t, adm, "kip848", 4, nil)
	produceKeyed(t, tn.client(), "kip848", 400)
	seen := make(chan *kgo.Record, 1000)
	a, stopA := groupMember(t, tn, "g848", "kip848", seen, kgo.ServerSideBalancer())
	b, stopB := groupMember(t, tn, "g848", "kip848", seen, kgo.ServerSideBalancer())
	got := map[string]bool{}
	for len(got) < 400 {
		got[string((<-seen).Value)] = true
	}
	for _, cl := range []*kgo.Client{a, b} {
		if err := cl.CommitUncommittedOffsets(testContext(t)); err != nil {
			t.Fatal(err)
		}
	}
	stopA()
	stopB()
	a.Close()
	b.Close()
	time.Sleep(time.Second)
	t.Log("RESTARTING")
	tn.stop()
	tn.node = start()
	d, err := tn.admin().DescribeConsumerGroups(testContext(t), "g848")
	t.Logf("%+v %v", d, err)
}
