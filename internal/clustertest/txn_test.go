package clustertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactions across brokers: the transaction coordinator writes its
// markers to partition leaders on other nodes, partition leaders verify
// transactional produces with a coordinator on another node, and a
// coordinator killed mid-transaction is replaced by the next leader of its
// __transaction_state partition.

const txnPartitions = 6

func txnCluster(t *testing.T, overrides ...string) *Cluster {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	return logTransactionsOnFailure(t, StartCluster(t, 3, append(txnOverrides(), overrides...)...))
}

// txnOverrides are the settings of the transaction tests' clusters.
func txnOverrides() []string {
	return append(replicationOverrides(),
		// Few coordinator partitions, so the internal topics are quick to
		// create; still spread over the three nodes.
		"transaction.state.log.num.partitions=3", "offsets.topic.num.partitions=3",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=1000")
}

// logTransactionsOnFailure logs the nodes' warnings and transaction lines
// when t fails.
func logTransactionsOnFailure(t *testing.T, c *Cluster) *Cluster {
	t.Cleanup(func() {
		if t.Failed() {
			logNodeWarnings(t, c)
			for i, n := range c.Nodes {
				n.LogLines(func(line string) {
					if strings.Contains(line, "transaction") {
						t.Logf("node %d: %s", i+1, line)
					}
				})
			}
		}
	})
	return c
}

// leadersSpreadOver returns the partitions of topic each node leads, once
// every node leads at least one.
func leadersSpreadOver(t *testing.T, c *Cluster, topic string) map[int32][]int32 {
	t.Helper()
	var byLeader map[int32][]int32
	WaitFor(t, 30*time.Second, func() error {
		st, err := topicState(context.Background(), c.Nodes[0].Addr(), topic, c.ClientOpts...)
		if err != nil {
			return err
		}
		byLeader = map[int32][]int32{}
		for p, s := range st {
			byLeader[s.leader] = append(byLeader[s.leader], p)
		}
		for i := range c.Nodes {
			if len(byLeader[int32(i+1)]) == 0 {
				return fmt.Errorf("node %d leads no partition of %s: %v", i+1, topic, byLeader)
			}
		}
		return nil
	})
	return byLeader
}

func transactionalProducer(t *testing.T, c *Cluster, id string, opts ...kgo.Opt) *kgo.Client {
	return acksAllProducer(t, c, append([]kgo.Opt{
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(20 * time.Second),
		kgo.RequestTimeoutOverhead(5 * time.Second),
	}, opts...)...)
}

// runTransaction writes value-p to every partition in one transaction and
// commits or aborts it.
func runTransaction(ctx context.Context, cl *kgo.Client, topic, value string, commit bool) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	for p := range int32(txnPartitions) {
		r := &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-p%d", value, p)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			_ = cl.EndTransaction(ctx, kgo.TryAbort)
			return fmt.Errorf("produce %s: %w", r.Value, err)
		}
	}
	return cl.EndTransaction(ctx, kgo.TransactionEndTry(commit))
}

// readUntilSentinel consumes every partition of topic at the isolation
// level until each one delivered the record sentinel-p, and returns the
// values read per partition, in offset order.
func readUntilSentinel(t *testing.T, c *Cluster, topic, sentinel string, level kgo.IsolationLevel) map[int32][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cl := c.client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(level), kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	out := map[int32][]string{}
	done := map[int32]bool{}
	for len(done) < txnPartitions {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: sentinel seen in %d of %d partitions; read %v", topic, len(done), txnPartitions, out)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			out[r.Partition] = append(out[r.Partition], v)
			if v == fmt.Sprintf("%s-p%d", sentinel, r.Partition) {
				done[r.Partition] = true
			}
		})
	}
	return out
}

// findTxnCoordinator asks the cluster which node coordinates id.
func findTxnCoordinator(t *testing.T, c *Cluster, id string) int32 {
	t.Helper()
	return findCoordinator(t, c, 1, id)
}

// findCoordinator asks the cluster which node coordinates key (keyType 0:
// a group, 1: a transactional id).
func findCoordinator(t *testing.T, c *Cluster, keyType int8, key string) int32 {
	t.Helper()
	cl := c.client(t)
	var node int32
	WaitFor(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = keyType
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
			return fmt.Errorf("no coordinator yet: %+v", resp.Coordinators)
		}
		node = resp.Coordinators[0].NodeID
		return nil
	})
	return node
}

// waitStable waits until the read_committed end offset (the LSO) of every
// partition reached the high watermark: no transaction is left open.
func waitStable(t *testing.T, c *Cluster, topic string) {
	t.Helper()
	adm := kadm.NewClient(c.client(t))
	WaitFor(t, 45*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return err
		}
		for p := range int32(txnPartitions) {
			e, _ := ends.Lookup(topic, p)
			s, _ := stable.Lookup(topic, p)
			if e.Err != nil || s.Err != nil {
				return errors.Join(e.Err, s.Err)
			}
			if s.Offset != e.Offset {
				return fmt.Errorf("partition %d: last stable offset %d, high watermark %d", p, s.Offset, e.Offset)
			}
		}
		return nil
	})
}

func TestTransactionsAcrossBrokers(t *testing.T) { transactionsAcrossBrokers(t) }

// TestTransactionsAcrossBrokersOneHandler runs the same with one request
// handler per node (num.io.threads=1): the transaction coordinator's
// writes to __transaction_state wait for the follower fetches of the
// other nodes, which a handler parked on such a write could not serve.
func TestTransactionsAcrossBrokersOneHandler(t *testing.T) {
	transactionsAcrossBrokers(t, "num.io.threads=1")
}

func transactionsAcrossBrokers(t *testing.T, overrides ...string) {
	begin := time.Now()
	c := txnCluster(t, overrides...)
	t.Logf("cluster up in %v", time.Since(begin))
	transactionsOn(t, c)
}

// transactionsOn is TestTransactionsAcrossBrokers on c.
func transactionsOn(t *testing.T, c *Cluster) {
	begin := time.Now()
	const topic = "txn-across"
	createReplicatedTopic(t, c, topic, txnPartitions)
	createReplicatedTopic(t, c, topic+"-plain", txnPartitions)
	t.Logf("topics ready after %v", time.Since(begin))
	byLeader := leadersSpreadOver(t, c, topic)
	t.Logf("partition leaders: %v", byLeader)

	const id = "txn-across-producer"
	cl := transactionalProducer(t, c, id)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	coordinator := findTxnCoordinator(t, c, id)
	t.Logf("transaction coordinator of %s: node %d", id, coordinator)

	// Committed and aborted transactions alternate; the last commits the
	// sentinel. Every transaction writes to partitions led by all three
	// nodes, so two thirds of its markers go to other brokers.
	const transactions = 8
	wantCommitted := map[int32][]string{}
	wantAll := map[int32][]string{}
	start := time.Now()
	var first time.Duration // includes InitProducerId
	for i := range transactions + 1 {
		if i == 1 {
			first, start = time.Since(start), time.Now()
		}
		value, commit := fmt.Sprintf("t%d", i), i%3 != 1
		if i == transactions {
			value, commit = "sentinel", true
		}
		if err := runTransaction(ctx, cl, topic, value, commit); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		for p := range int32(txnPartitions) {
			v := fmt.Sprintf("%s-p%d", value, p)
			wantAll[p] = append(wantAll[p], v)
			if commit {
				wantCommitted[p] = append(wantCommitted[p], v)
			}
		}
	}
	took := time.Since(start)
	// For reference, the same writes with acks=all and no transaction.
	plain := acksAllProducer(t, c)
	refStart := time.Now()
	for i := range transactions + 1 {
		for p := range int32(txnPartitions) {
			if err := produceSync(ctx, plain, topic+"-plain", p, fmt.Sprintf("plain%d-p%d", i, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref := time.Since(refStart)
	t.Logf("transactions of %d records on 3 leaders: the first (with InitProducerId) %v, the next %d %.1f ms each; the same records with acks=all and no transaction: %.1f ms a round",
		txnPartitions, first, transactions, float64(took.Microseconds())/1000/float64(transactions), float64(ref.Microseconds())/1000/float64(transactions+1))

	waitStable(t, c, topic)
	t.Logf("stable after %v", time.Since(start))
	committed := readUntilSentinel(t, c, topic, "sentinel", kgo.ReadCommitted())
	t.Logf("read_committed read after %v", time.Since(start))
	all := readUntilSentinel(t, c, topic, "sentinel", kgo.ReadUncommitted())
	t.Logf("read_uncommitted read after %v", time.Since(start))
	for p := range int32(txnPartitions) {
		if !slices.Equal(committed[p], wantCommitted[p]) {
			t.Errorf("read_committed partition %d:\n got %v\nwant %v", p, committed[p], wantCommitted[p])
		}
		if !slices.Equal(all[p], wantAll[p]) {
			t.Errorf("read_uncommitted partition %d:\n got %v\nwant %v", p, all[p], wantAll[p])
		}
	}

	consumeTransformProduce(t, c)
	checkTransactionStateMinISR(t, c, "2")
}

// checkTransactionStateMinISR checks that __transaction_state was created
// with min.insync.replicas = transaction.state.log.min.isr (2 by default).
func checkTransactionStateMinISR(t *testing.T, c *Cluster, want string) {
	t.Helper()
	adm := kadm.NewClient(c.client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	configs, err := adm.DescribeTopicConfigs(ctx, "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := configs.On("__transaction_state", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range rc.Configs {
		if cfg.Key == "min.insync.replicas" {
			if cfg.MaybeValue() != want {
				t.Errorf("__transaction_state min.insync.replicas = %q, want %q", cfg.MaybeValue(), want)
			}
			return
		}
	}
	t.Errorf("__transaction_state: min.insync.replicas not described")
}

// consumeTransformProduce runs a franz-go GroupTransactSession whose group
// coordinator and transaction coordinator are different nodes, over
// partitions led by all three: every input record must come out exactly
// once, and the group's offsets must be committed with the output.
func consumeTransformProduce(t *testing.T, c *Cluster) {
	const in, out, txnID = "ctp-in", "ctp-out", "ctp-producer"
	createReplicatedTopic(t, c, in, txnPartitions)
	createReplicatedTopic(t, c, out, txnPartitions)
	txnCoordinator := findTxnCoordinator(t, c, txnID)
	group := ""
	var groupCoordinator int32
	for i := range 20 {
		name := fmt.Sprintf("ctp-group-%d", i)
		if node := findCoordinator(t, c, 0, name); node != txnCoordinator {
			group, groupCoordinator = name, node
			break
		}
	}
	if group == "" {
		t.Fatalf("no group name with a coordinator other than node %d", txnCoordinator)
	}
	t.Logf("consume-transform-produce: group %s on node %d, transactional id %s on node %d", group, groupCoordinator, txnID, txnCoordinator)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const records = 120
	seed := acksAllProducer(t, c)
	var want []string
	for i := range records {
		v := fmt.Sprintf("r%03d", i)
		if err := produceSync(ctx, seed, in, int32(i%txnPartitions), v); err != nil {
			t.Fatal(err)
		}
		want = append(want, "out-"+v)
	}

	sess, err := kgo.NewGroupTransactSession(append(slices.Clone(c.ClientOpts),
		kgo.SeedBrokers(c.Addrs()...),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(20*time.Second),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	start := time.Now()
	consumed, transactions := 0, 0
	for consumed < records {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", consumed, records)
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			sess.Produce(ctx, &kgo.Record{Topic: out, Partition: r.Partition, Value: append([]byte("out-"), r.Value...)}, nil)
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Fatalf("ending a transaction: %v", err)
		}
		if committed {
			consumed += n
			transactions++
		}
	}
	t.Logf("consume-transform-produce: %d records in %d transactions in %v", consumed, transactions, time.Since(start))

	// The group's committed offsets are the ends of the input.
	adm := kadm.NewClient(c.client(t))
	ends, err := adm.ListEndOffsets(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, func() error {
		offsets, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		for p := range int32(txnPartitions) {
			end, _ := ends.Lookup(in, p)
			got, ok := offsets.Lookup(in, p)
			if !ok || got.At != end.Offset {
				return fmt.Errorf("partition %d: committed offset %d, end %d", p, got.At, end.Offset)
			}
		}
		return nil
	})

	sentinel := transactionalProducer(t, c, "ctp-sentinel")
	if err := runTransaction(ctx, sentinel, out, "sentinel", true); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, values := range readUntilSentinel(t, c, out, "sentinel", kgo.ReadCommitted()) {
		for _, v := range values {
			if !strings.HasPrefix(v, "sentinel-") {
				got = append(got, v)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("output read_committed: %d records, want each of %d once:\n got %v", len(got), len(want), got)
	}
}

// TestTransactionCoordinatorKilled kills -9 the transaction coordinator
// twice: once right after it answered a commit, while its markers are
// going out, and once with a transaction open. The next leader of the
// __transaction_state partition loads the transaction from the replicated
// log and ends it whole: it finishes the commit on every partition, and
// aborts the open transaction once it times out.
func TestTransactionCoordinatorKilled(t *testing.T) {
	c := txnCluster(t)
	const topic = "txn-failover"
	createReplicatedTopic(t, c, topic, txnPartitions)
	leadersSpreadOver(t, c, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// 1. The commit is answered, then the coordinator dies.
	const committer = "txn-failover-commit"
	cl := transactionalProducer(t, c, committer)
	if err := runTransaction(ctx, cl, topic, "before", true); err != nil {
		t.Fatal(err)
	}
	coordinator := findTxnCoordinator(t, c, committer)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceAll(ctx, t, cl, topic, "committed")
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	victim := c.Nodes[coordinator-1]
	victim.Kill()
	killed := time.Now()
	rest := c.without(victim)
	waitStable(t, rest, topic)
	t.Logf("killed node %d, coordinator of %s, after its commit answer: every partition stable %v later; new coordinator node %d; %s",
		coordinator, committer, time.Since(killed), findTxnCoordinator(t, rest, committer), resumedMarkers(rest))
	cl.Close()

	victim.Restart()
	waitFullISR(t, c, topic, 30*time.Second)
	waitFullISR(t, c, "__transaction_state", 30*time.Second)

	// 2. A transaction is open when its coordinator dies; the producer
	// goes away too.
	const opener = "txn-failover-open"
	const timeout = 5 * time.Second
	open := transactionalProducer(t, c, opener, kgo.TransactionTimeout(timeout))
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceAll(ctx, t, open, topic, "open")
	coordinator = findTxnCoordinator(t, c, opener)
	victim = c.Nodes[coordinator-1]
	victim.Kill()
	killed = time.Now()
	open.Close()
	rest = c.without(victim)
	waitStable(t, rest, topic)
	t.Logf("killed node %d, coordinator of %s, with the transaction open (timeout %v): every partition stable %v later; new coordinator node %d",
		coordinator, opener, timeout, time.Since(killed), findTxnCoordinator(t, rest, opener))

	after := transactionalProducer(t, rest, "txn-failover-after")
	if err := runTransaction(ctx, after, topic, "sentinel", true); err != nil {
		t.Fatalf("transaction after failover: %v", err)
	}
	committed := readUntilSentinel(t, rest, topic, "sentinel", kgo.ReadCommitted())
	all := readUntilSentinel(t, rest, topic, "sentinel", kgo.ReadUncommitted())
	for p := range int32(txnPartitions) {
		want := []string{fmt.Sprintf("before-p%d", p), fmt.Sprintf("committed-p%d", p), fmt.Sprintf("sentinel-p%d", p)}
		if !slices.Equal(committed[p], want) {
			t.Errorf("read_committed partition %d:\n got %v\nwant %v", p, committed[p], want)
		}
		want = slices.Insert(want, 2, fmt.Sprintf("open-p%d", p))
		if !slices.Equal(all[p], want) {
			t.Errorf("read_uncommitted partition %d:\n got %v\nwant %v", p, all[p], want)
		}
	}
}

// produceAll writes value-p to every partition in the open transaction.
func produceAll(ctx context.Context, t *testing.T, cl *kgo.Client, topic, value string) {
	t.Helper()
	for p := range int32(txnPartitions) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-p%d", value, p)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// without is the cluster less one node, to reach the survivors only.
func (c *Cluster) without(dead *Node) *Cluster {
	return &Cluster{Nodes: slices.DeleteFunc(slices.Clone(c.Nodes), func(n *Node) bool { return n == dead })}
}

// resumedMarkers says whether a new coordinator found markers to send
// when it loaded (the kill came before they were all written).
func resumedMarkers(c *Cluster) string {
	resumed := 0
	for _, n := range c.Nodes {
		n.LogLines(func(line string) {
			if strings.Contains(line, "loaded __transaction_state partition") && !strings.Contains(line, "pending_markers=0") {
				resumed++
			}
		})
	}
	if resumed > 0 {
		return "it resumed the markers of the prepared commit"
	}
	return "the markers were all written before the kill"
}
