package clustertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Network-isolation tests: each node in its own network namespace, cut off
// from the others (and from the test) by setting its link down.

// quorumView is one node's answer to DescribeQuorum.
type quorumView struct {
	leader int32
	epoch  int32
}

// describeQuorum asks cl's seed node for its view of the metadata quorum.
func describeQuorum(ctx context.Context, cl *kgo.Client) (quorumView, error) {
	p, err := quorumPartition(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return quorumView{}, err
	}
	return quorumView{leader: p.LeaderID, epoch: p.LeaderEpoch}, nil
}

// insideClient is a client in node's own network namespace, seeded with
// node only: it reaches node also while node is isolated.
func insideClient(t *testing.T, node *Node, opts ...kgo.Opt) *kgo.Client {
	return newClient(t, []string{node.Addr()}, append([]kgo.Opt{kgo.Dialer(node.DialInside)}, opts...)...)
}

// quorumSampler asks every node for its quorum view every 100 ms, from
// inside each node's namespace so isolated nodes are sampled too, and
// checks Raft's election safety on the answers: at most one leader per
// epoch.
type quorumSampler struct {
	c       *Cluster
	clients []*kgo.Client
	stop    chan struct{}
	done    sync.WaitGroup

	mu struct {
		sync.Mutex
		samples  int
		failures int
		// leaders is, per epoch, every leader some node reported for it
		// and who reported it first.
		leaders map[int32]map[int32]int
		// views is each node's latest view, with when it changed.
		views   []quorumView
		changed []time.Time
	}
}

func startQuorumSampler(t *testing.T, c *Cluster) *quorumSampler {
	s := &quorumSampler{c: c, stop: make(chan struct{})}
	s.mu.leaders = map[int32]map[int32]int{}
	s.mu.views = make([]quorumView, len(c.Nodes))
	s.mu.changed = make([]time.Time, len(c.Nodes))
	for i, n := range c.Nodes {
		s.clients = append(s.clients, insideClient(t, n))
		s.mu.views[i] = quorumView{leader: -2, epoch: -1}
	}
	for i := range c.Nodes {
		s.done.Add(1)
		go s.sample(i)
	}
	return s
}

func (s *quorumSampler) sample(i int) {
	defer s.done.Done()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ticker.C:
		}
		v, err := describeQuorum(context.Background(), s.clients[i])
		s.mu.Lock()
		if err != nil {
			s.mu.failures++
			s.mu.Unlock()
			continue
		}
		s.mu.samples++
		if v != s.mu.views[i] {
			s.mu.views[i], s.mu.changed[i] = v, time.Now()
		}
		if v.leader >= 0 {
			if s.mu.leaders[v.epoch] == nil {
				s.mu.leaders[v.epoch] = map[int32]int{}
			}
			if _, ok := s.mu.leaders[v.epoch][v.leader]; !ok {
				s.mu.leaders[v.epoch][v.leader] = i + 1
			}
		}
		s.mu.Unlock()
	}
}

// view is node i's (0-based) latest view and when it began.
func (s *quorumSampler) view(i int) (quorumView, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.views[i], s.mu.changed[i]
}

// finish stops sampling and fails t if two leaders were reported for one
// epoch.
func (s *quorumSampler) finish(t *testing.T) {
	close(s.stop)
	s.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	var epochs []int32
	for epoch, leaders := range s.mu.leaders {
		epochs = append(epochs, epoch)
		if len(leaders) > 1 {
			t.Errorf("epoch %d has %d leaders (leader: first reporting node): %v", epoch, len(leaders), leaders)
		}
	}
	slices.Sort(epochs)
	t.Logf("quorum sampler: %d DescribeQuorum answers (%d failed requests), leaders seen in epochs %v", s.mu.samples, s.mu.failures, epochs)
	if s.mu.samples == 0 {
		t.Error("the quorum sampler got no answers")
	}
}

// currentLeader waits until node 0-based i reports a quorum leader.
func currentLeader(t *testing.T, s *quorumSampler, i int) quorumView {
	t.Helper()
	var v quorumView
	WaitFor(t, 30*time.Second, func() error {
		v, _ = s.view(i)
		if v.leader < 0 {
			return fmt.Errorf("node %d knows no quorum leader", i+1)
		}
		return nil
	})
	return v
}

// hasTopic reports whether the node at addr knows topic.
func hasTopic(ctx context.Context, t *testing.T, addr, topic string) (bool, error) {
	ids, err := topicIDs(ctx, t, addr)
	if err != nil {
		return false, err
	}
	_, ok := ids[topic]
	return ok, nil
}

// createOnMajority creates topic through the majority's nodes, with a
// fresh client per try: a cached controller id may point at the isolated
// node, which never answers.
func createOnMajority(ctx context.Context, majority []string, topic string) error {
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(majority...))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopics(rctx, 1, 1, nil, topic)
	if err != nil {
		return err
	}
	if err := resp[topic].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
	}
	return nil
}

// createOnMinority sends CreateTopics for topic to the isolated node from
// inside its namespace and returns how it ended: it must not succeed.
func createOnMinority(t *testing.T, victim *Node, topic string) (time.Duration, error) {
	cl := insideClient(t, victim, kgo.RequestRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 5000
	start := time.Now()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	if len(resp.Topics) != 1 {
		return took, fmt.Errorf("CreateTopics answered %d topics", len(resp.Topics))
	}
	return took, kerr.ErrorForCode(resp.Topics[0].ErrorCode)
}

// TestQuorumIsolation cuts one controller off the network, first the
// active controller and then a follower: the isolated one cannot commit
// metadata, the majority keeps (or elects) a leader and commits, and once
// healed the isolated one catches up. Throughout, no epoch has two leaders.
func TestQuorumIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartNetworkCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sampler := startQuorumSampler(t, c)
	before := currentLeader(t, sampler, 0)
	t.Logf("quorum leader at start: node %d in epoch %d", before.leader, before.epoch)

	first := c.Nodes[before.leader-1]
	isolateController(ctx, t, c, sampler, first, "leader")

	// Then a follower, the one not cut off before if it is one.
	after := currentLeader(t, sampler, 0)
	var follower *Node
	for i, n := range c.Nodes {
		if int32(i+1) != after.leader && (follower == nil || follower == first) {
			follower = n
		}
	}
	isolateController(ctx, t, c, sampler, follower, "follower")
	sampler.finish(t)
}

// isolateController runs one phase of TestQuorumIsolation with victim cut
// off; role is what victim is in the quorum when cut off.
func isolateController(ctx context.Context, t *testing.T, c *Cluster, sampler *quorumSampler, victim *Node, role string) {
	victimIndex := slices.Index(c.Nodes, victim)
	victimID := int32(victimIndex + 1)
	var majority []string
	var majorityIndex int
	for i, n := range c.Nodes {
		if n != victim {
			majority = append(majority, n.Addr())
			majorityIndex = i
		}
	}
	start := currentLeader(t, sampler, majorityIndex)
	isolated := time.Now()
	c.Isolate(victim)
	t.Logf("%s phase: isolated node %d (quorum leader %d, epoch %d)", role, victimID, start.leader, start.epoch)

	// The isolated node is asked to create a topic by a client on its side
	// of the partition, while the majority is asked for another.
	minorityTopic, majorityTopic := role+"-minority", role+"-majority"
	var minorityErr error
	var minorityTook time.Duration
	minorityDone := make(chan struct{})
	go func() {
		defer close(minorityDone)
		minorityTook, minorityErr = createOnMinority(t, victim, minorityTopic)
	}()
	if role == "leader" {
		WaitFor(t, 30*time.Second, func() error {
			if v, _ := sampler.view(majorityIndex); v.leader < 0 || v.leader == victimID {
				return fmt.Errorf("the majority has no new leader: %+v", v)
			}
			return nil
		})
		v, since := sampler.view(majorityIndex)
		t.Logf("leader phase: the majority elected node %d in epoch %d %v after isolation", v.leader, v.epoch, since.Sub(isolated).Round(time.Millisecond))
	}
	WaitFor(t, 60*time.Second, func() error { return createOnMajority(ctx, majority, majorityTopic) })
	t.Logf("%s phase: first CreateTopics committed by the majority %v after isolation", role, time.Since(isolated).Round(time.Millisecond))
	<-minorityDone
	if minorityErr == nil {
		t.Errorf("%s phase: the isolated node %d created topic %s without a quorum", role, victimID, minorityTopic)
	} else {
		t.Logf("%s phase: CreateTopics on the isolated node failed after %v: %v", role, minorityTook.Round(time.Millisecond), minorityErr)
	}
	majorityView := currentLeader(t, sampler, majorityIndex)
	if majorityView.leader == victimID {
		t.Fatalf("%s phase: the majority still follows the isolated node %d", role, victimID)
	}
	if role == "leader" {
		if majorityView.epoch <= start.epoch {
			t.Errorf("leader phase: new leader %d in epoch %d, not after epoch %d", majorityView.leader, majorityView.epoch, start.epoch)
		}
		// The isolated leader's check-quorum makes it step down.
		WaitFor(t, 30*time.Second, func() error {
			v, since := sampler.view(victimIndex)
			if v.leader == victimID {
				return errors.New("the isolated leader still claims to lead")
			}
			t.Logf("leader phase: the isolated node stopped claiming leadership %v after isolation (view: leader %d, epoch %d)",
				since.Sub(isolated).Round(time.Millisecond), v.leader, v.epoch)
			return nil
		})
	} else if majorityView != start {
		t.Logf("follower phase: the majority's leader changed from %d (epoch %d) to %d (epoch %d)",
			start.leader, start.epoch, majorityView.leader, majorityView.epoch)
	}

	healed := time.Now()
	c.Heal(victim)
	WaitFor(t, 60*time.Second, func() error {
		v, _ := sampler.view(victimIndex)
		if want := currentLeader(t, sampler, majorityIndex); v != want {
			return fmt.Errorf("healed node's quorum view %+v, the majority's %+v", v, want)
		}
		ok, err := hasTopic(ctx, t, victim.Addr(), majorityTopic)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("healed node %d lacks topic %s", victimID, majorityTopic)
		}
		return nil
	})
	t.Logf("%s phase: healed node %d caught up %v after healing", role, victimID, time.Since(healed).Round(time.Millisecond))

	// What the isolated leader appended without a quorum was never
	// committed: the new leader's log replaced it everywhere. (An isolated
	// follower forwards to the controller for up to 30 s, so its request
	// may yet be carried out after healing, as in Kafka.)
	for _, n := range c.Nodes {
		ok, err := hasTopic(ctx, t, n.Addr(), minorityTopic)
		if err != nil {
			t.Fatal(err)
		}
		if ok && role == "leader" {
			t.Errorf("node %s has topic %s, which only the isolated leader saw", n.Addr(), minorityTopic)
		}
		if ok && role == "follower" {
			t.Logf("follower phase: node %s has %s: the forwarded request reached the controller after healing", n.Addr(), minorityTopic)
		}
	}
}

// isolationAcks is what the producers of TestReplicationLeaderIsolation
// got acknowledged, and when.
type isolationAcks struct {
	mu sync.Mutex
	// acked is, per partition and producer ("" outside, "in" inside the
	// isolated node's namespace), the sequence numbers acknowledged.
	acked    []map[string][]int
	failed   int
	failures map[string]int
	// isolated and healed are when the leader was cut off and joined again.
	isolated, healed time.Time
	// afterIsolation counts, per partition, outside acks of records
	// produced after the leader was cut off; firstAfterIsolation is when
	// the first of them came for the isolated leader's partition.
	afterIsolation      []int
	firstAfterIsolation time.Time
	// insideWhileIsolated counts inside acks of records produced while the
	// leader was cut off and acknowledged before it was healed: only the
	// isolated leader could have sent them. insideAfterHeal counts inside
	// acks of records produced after healing.
	insideWhileIsolated, insideAfterHeal int
}

// TestReplicationLeaderIsolation cuts the leader of a partition off the
// network while idempotent acks=all producers write sequence-numbered
// records: one from outside to every partition, one from inside the
// leader's namespace to its partition. The isolated leader cannot
// acknowledge anything (its followers cannot fetch and its ISR shrink
// cannot be committed); the controller fences it and a follower takes
// over, where writes continue. After healing, no acknowledged record is
// lost, none is duplicated, and the replicas are byte-identical.
func TestReplicationLeaderIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartNetworkCluster(t, 3, "replica.lag.time.max.ms=10000", "replica.fetch.backoff.ms=200")
	const topic = "isolated-leader"
	const partitions = 3
	createReplicatedTopic(t, c, topic, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	// Cut off a leader that is not the active controller, so this is about
	// replication, not the quorum's failover (TestQuorumIsolation).
	target := int32(0)
	for p := range int32(partitions) {
		if st[p].leader != md.ControllerID {
			target = p
			break
		}
	}
	victimID := st[target].leader
	victim := c.Nodes[victimID-1]
	t.Logf("partition %d: leader %d in epoch %d, ISR %v; active controller %d", target, victimID, st[target].epoch, st[target].isr, md.ControllerID)

	producerOpts := []kgo.Opt{
		kgo.MaxBufferedRecords(10000),
		kgo.RecordDeliveryTimeout(60 * time.Second),
		// A request to the isolated leader is given up after 3+2 s, a dial
		// to it after 2 s (kgo's default of 10 s, tried by the sink and by
		// metadata refreshes in turn, can add half a minute).
		kgo.ProduceRequestTimeout(3 * time.Second),
		kgo.RequestTimeoutOverhead(2 * time.Second),
		kgo.DialTimeout(2 * time.Second),
	}
	outside := acksAllProducer(t, c, producerOpts...)
	inside := insideClient(t, victim, append([]kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(100 * time.Millisecond),
	}, producerOpts...)...)

	acks := &isolationAcks{acked: make([]map[string][]int, partitions), afterIsolation: make([]int, partitions), failures: map[string]int{}}
	for p := range acks.acked {
		acks.acked[p] = map[string][]int{}
	}
	produce := func(ctx context.Context, cl *kgo.Client, producer string, p int32, seq int) {
		value := strconv.Itoa(seq)
		if producer != "" {
			value = producer + "-" + value
		}
		acks.mu.Lock()
		isolated, healed := !acks.isolated.IsZero(), !acks.healed.IsZero()
		acks.mu.Unlock()
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(value)}, func(r *kgo.Record, err error) {
			acks.mu.Lock()
			defer acks.mu.Unlock()
			if err != nil {
				acks.failed++
				acks.failures[producer+": "+err.Error()]++
				return
			}
			acks.acked[p][producer] = append(acks.acked[p][producer], seq)
			switch {
			case producer == "" && isolated && !healed:
				acks.afterIsolation[p]++
				if p == target && acks.firstAfterIsolation.IsZero() {
					acks.firstAfterIsolation = time.Now()
				}
			case producer == "in" && isolated && !healed && acks.healed.IsZero():
				acks.insideWhileIsolated++
			case producer == "in" && healed:
				acks.insideAfterHeal++
			}
		})
	}
	// One loop per producer: one whose buffer is full (the inside one, while
	// isolated) blocks only itself. abandon cancels a Produce blocked on a
	// full buffer when the test ends early.
	stop := make(chan struct{})
	abandonCtx, abandon := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	loop := func(cl *kgo.Client, producer string, partitions ...int32) {
		defer wg.Done()
		ticker := time.NewTicker(5 * time.Millisecond)
		defer ticker.Stop()
		seq := make([]int, len(partitions))
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
			for i, p := range partitions {
				produce(abandonCtx, cl, producer, p, seq[i])
				seq[i]++
			}
		}
	}
	all := make([]int32, partitions)
	for p := range all {
		all[p] = int32(p)
	}
	wg.Add(2)
	go loop(outside, "", all...)
	go loop(inside, "in", target)
	defer func() {
		abandon()
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	waitAcks := func(what string, cond func() bool) {
		t.Helper()
		WaitFor(t, 60*time.Second, func() error {
			acks.mu.Lock()
			defer acks.mu.Unlock()
			if !cond() {
				return errors.New(what)
			}
			return nil
		})
	}
	waitAcks("too few records acknowledged before the isolation", func() bool {
		for p := range acks.acked {
			if len(acks.acked[p][""]) < 50 {
				return false
			}
		}
		return len(acks.acked[target]["in"]) >= 50
	})

	// The cut is marked once it is in place: a record produced while the
	// namespace's links were still being taken down may be replicated and
	// acknowledged rightly, and must not count as acknowledged in isolation.
	c.Isolate(victim)
	acks.mu.Lock()
	acks.isolated = time.Now()
	isolated := acks.isolated
	acks.mu.Unlock()
	var majority *Node
	for _, n := range c.Nodes {
		if n != victim {
			majority = n
			break
		}
	}
	WaitFor(t, 60*time.Second, func() error {
		now, err := topicState(ctx, majority.Addr(), topic)
		if err != nil {
			return err
		}
		if now[target].leader == victimID {
			return fmt.Errorf("partition %d still led by the isolated node %d", target, victimID)
		}
		return nil
	})
	t.Logf("partition %d: leadership moved off the isolated node %v after isolation", target, time.Since(isolated).Round(time.Millisecond))
	waitAcks("no acks=all write acknowledged on every partition since the isolation", func() bool {
		return !slices.ContainsFunc(acks.afterIsolation, func(n int) bool { return n < 50 })
	})
	acks.mu.Lock()
	firstAck := acks.firstAfterIsolation.Sub(isolated)
	acks.mu.Unlock()
	t.Logf("partition %d: first acks=all write acknowledged by the new leader %v after isolating leader %d; 50 on every partition after %v",
		target, firstAck.Round(time.Millisecond), victimID, time.Since(isolated).Round(time.Millisecond))
	now, err := topicState(ctx, majority.Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	if now[target].leader == victimID || now[target].epoch <= st[target].epoch {
		t.Errorf("partition %d: leader %d epoch %d after isolating leader %d of epoch %d", target, now[target].leader, now[target].epoch, victimID, st[target].epoch)
	}
	t.Logf("partition %d: new leader %d in epoch %d, ISR %v", target, now[target].leader, now[target].epoch, now[target].isr)

	acks.mu.Lock()
	acks.healed = time.Now()
	healed := acks.healed
	acks.mu.Unlock()
	c.Heal(victim)
	waitAcks("the producer inside the healed node's namespace got no acks", func() bool { return acks.insideAfterHeal >= 20 })
	waitFullISR(t, c, topic, 60*time.Second)
	t.Logf("healed: node %d's producer acknowledged again and every ISR full %v after healing", victimID, time.Since(healed).Round(time.Millisecond))

	close(stop)
	wg.Wait()
	flushCtx, flushCancel := context.WithTimeout(ctx, 60*time.Second)
	defer flushCancel()
	if err := outside.Flush(flushCtx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := inside.Flush(flushCtx); err != nil {
		t.Fatalf("flush inside: %v", err)
	}
	acks.mu.Lock()
	rep := verifyAcknowledged(t, c, topic, acks.acked)
	t.Logf("acknowledged %d (inside the isolated namespace %d, of them while isolated %d), lost %d, duplicated %d, reordered %d (failed deliveries %d)",
		rep.acknowledged, len(acks.acked[target]["in"]), acks.insideWhileIsolated, rep.lost, rep.duplicated, rep.reordered, acks.failed)
	for msg, n := range acks.failures {
		t.Logf("failed delivery (not acknowledged, so allowed): %d x %s", n, msg)
	}
	if acks.insideWhileIsolated != 0 {
		t.Errorf("the isolated leader acknowledged %d acks=all writes it could not replicate", acks.insideWhileIsolated)
	}
	acks.mu.Unlock()
	if rep.lost != 0 || rep.duplicated != 0 || rep.reordered != 0 {
		logNodeWarnings(t, c)
		t.Errorf("acks=all guarantees broken: %+v", rep)
	}
	compareReplicas(t, c, topic, partitions)
}
