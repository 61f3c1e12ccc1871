package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/netport"
)

// TestTxnExactlyOnceConsumeTransformProduce runs a consume-transform-produce
// pipeline of kgo.GroupTransactSession workers while the group rebalances
// (workers join and leave), some transactions are aborted on purpose, and
// the node restarts under the running clients. A verifier then reads the
// output with read_committed: every input record appears exactly once, and
// no record of an aborted transaction does.
func TestTxnExactlyOnceConsumeTransformProduce(t *testing.T) {
	for _, tv := range transactionVersions {
		t.Run(tv.name, func(t *testing.T) { runExactlyOncePipeline(t, tv.opts) })
	}
}

const eosInputs = 1200

func runExactlyOncePipeline(t *testing.T, versionOpts []kgo.Opt) {
	// A fixed port, so the clients reconnect to the restarted node.
	tn := startTestNode(t, "listeners=PLAINTEXT://127.0.0.1:"+freePort(t), "group.initial.rebalance.delay.ms=0")
	adm := tn.admin()
	mustCreateTopic(t, adm, "in", 4, nil)
	mustCreateTopic(t, adm, "out", 4, nil)
	in := tn.client(kgo.DefaultProduceTopic("in"))
	ctx := testContext(t)
	for i := 0; i < eosInputs; i += 100 {
		var recs []*kgo.Record
		for j := i; j < i+100; j++ {
			recs = append(recs, &kgo.Record{Key: []byte(strconv.Itoa(j % 13)), Value: []byte(fmt.Sprintf("in-%05d", j))})
		}
		if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	p := &pipeline{t: t, addr: tn.addr(), versionOpts: versionOpts}
	p.start("w1")
	p.start("w2")
	p.waitProgress(eosInputs / 5)
	p.start("w3") // rebalance: a member joins
	p.waitProgress(eosInputs * 2 / 5)
	t.Logf("restarting the node at %d committed", p.committed.Load())
	tn.restart() // the node restarts under the running pipeline
	p.waitProgress(eosInputs * 3 / 5)
	t.Logf("stopping w1 at %d committed", p.committed.Load())
	p.stop("w1") // rebalance: a member leaves
	p.waitProgress(eosInputs)
	t.Logf("pipeline done: %d batches, %d aborted on purpose", p.batches.Load(), p.aborted.Load())

	got := pollUntil(t, tn, "out", true, 90*time.Second, func(v []string) bool { return len(distinct(v)) >= eosInputs })
	counts := map[string]int{}
	for _, v := range got {
		counts[v]++
	}
	for i := range eosInputs {
		want := fmt.Sprintf("out-in-%05d", i)
		if counts[want] != 1 {
			t.Errorf("%s appears %d times in the output, want exactly once", want, counts[want])
		}
		delete(counts, want)
	}
	for v, n := range counts {
		t.Errorf("read_committed consumer saw %q (%d times), which no committed transaction wrote", v, n)
	}
	p.stopAll()
	if p.aborted.Load() == 0 {
		t.Fatal("no transaction was aborted; the test did not exercise aborts")
	}
	// The aborted transactions' records are in the log all the same.
	sawAborted := func(v []string) bool {
		return slices.ContainsFunc(v, func(x string) bool { return strings.HasPrefix(x, "aborted-") })
	}
	if all := pollUntil(t, tn, "out", false, 30*time.Second, sawAborted); !sawAborted(all) {
		t.Fatal("read_uncommitted did not see any aborted record")
	}
}

func distinct(values []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range values {
		m[v] = true
	}
	return m
}

func freePort(t *testing.T) string {
	t.Helper()
	port, err := netport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(port)
}

// pipeline runs GroupTransactSession workers; a worker whose session fails
// (the node went away mid-transaction) starts a new session with the same
// transactional id, which fences the old one.
type pipeline struct {
	t           *testing.T
	addr        string
	versionOpts []kgo.Opt

	committed atomic.Int64 // input records committed
	aborted   atomic.Int64 // transactions aborted on purpose
	batches   atomic.Int64

	mu      sync.Mutex
	workers map[string]context.CancelFunc
	wg      sync.WaitGroup
}

func (p *pipeline) start(id string) {
	ctx, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	if p.workers == nil {
		p.workers = map[string]context.CancelFunc{}
	}
	p.workers[id] = cancel
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for ctx.Err() == nil {
			if err := p.runSession(ctx, id); err != nil && ctx.Err() == nil {
				p.t.Logf("worker %s: session ended: %v; starting a new one", id, err)
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
	}()
}

func (p *pipeline) stop(id string) {
	p.mu.Lock()
	cancel := p.workers[id]
	delete(p.workers, id)
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (p *pipeline) stopAll() {
	p.mu.Lock()
	for id, cancel := range p.workers {
		cancel()
		delete(p.workers, id)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// waitProgress waits, with a deadline, until n input records are committed.
func (p *pipeline) waitProgress(n int64) {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for p.committed.Load() < n {
		if time.Now().After(deadline) {
			p.t.Fatalf("pipeline committed %d of %d records before the deadline", p.committed.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *pipeline) runSession(ctx context.Context, id string) error {
	sess, err := kgo.NewGroupTransactSession(append([]kgo.Opt{
		kgo.SeedBrokers(p.addr),
		kgo.TransactionalID("eos-" + id),
		kgo.TransactionTimeout(10 * time.Second),
		kgo.ConsumerGroup("eos"),
		kgo.ConsumeTopics("in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(500 * time.Millisecond),
		kgo.RebalanceTimeout(10 * time.Second),
		kgo.MaxBufferedRecords(1000),
	}, p.versionOpts...)...)
	if err != nil {
		return err
	}
	defer sess.Close()
	for ctx.Err() == nil {
		fetches := sess.PollRecords(ctx, 50)
		if ctx.Err() != nil {
			return nil
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			for _, fe := range errs {
				if !errors.Is(fe.Err, context.Canceled) {
					p.t.Logf("worker %s: fetch %s-%d: %v", id, fe.Topic, fe.Partition, fe.Err)
				}
			}
		}
		recs := fetches.Records()
		if len(recs) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return err
		}
		n := p.batches.Add(1)
		abort := n%7 == 3
		var outs []*kgo.Record
		for _, r := range recs {
			outs = append(outs, &kgo.Record{Topic: "out", Key: r.Key, Value: append([]byte("out-"), r.Value...)})
		}
		if abort {
			// Written before the abort, so the log holds records a
			// read_committed consumer must skip: the transformed
			// values (written again by the retry) and a marker.
			outs = append(outs, &kgo.Record{Topic: "out", Value: []byte(fmt.Sprintf("aborted-%s-%d", id, n))})
			if err := sess.ProduceSync(ctx, outs...).FirstErr(); err != nil {
				p.t.Logf("worker %s: produce before abort: %v", id, err)
			}
		} else {
			for _, r := range outs {
				sess.Produce(ctx, r, nil)
			}
		}
		committed, err := sess.End(ctx, kgo.TransactionEndTry(!abort))
		if err != nil {
			return err
		}
		switch {
		case committed:
			p.committed.Add(int64(len(recs)))
		case abort:
			p.aborted.Add(1)
		}
	}
	return nil
}
