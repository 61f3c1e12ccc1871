package clustertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// metricsCluster starts three nodes, node i in rack "rack-<i>" with its own
// metrics listener, leaders choosing read replicas by rack (KIP-392), and
// followers dropped from the ISR by their leader (replica.lag.time.max.ms)
// well before the controller would fence their broker
// (broker.session.timeout.ms), so the leader's ISR metrics see the shrink.
func metricsCluster(t *testing.T) (c *Cluster, metricsAddrs []string) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for range 3 {
		metricsAddrs = append(metricsAddrs, "127.0.0.1:"+strconv.Itoa(FreePort(t)))
	}
	c = StartClusterEach(t, 3, func(i int) []string {
		return []string{"broker.rack=rack-" + strconv.Itoa(i+1), "metrics.listener=" + metricsAddrs[i]}
	},
		"replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector",
		"log.level.api=debug",
		"replica.lag.time.max.ms=4000",
		"broker.session.timeout.ms=20000",
		"replica.fetch.backoff.ms=200")
	return c, metricsAddrs
}

// scrapeMetric sums the samples of metric name (any labels) at a node's
// metrics listener.
func scrapeMetric(addr, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		series, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if base, _, _ := strings.Cut(series, "{"); base != name {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %v", name, line, err)
		}
		sum += v
		found = true
	}
	if !found {
		return 0, fmt.Errorf("%s: no %s", addr, name)
	}
	return sum, sc.Err()
}

func mustScrape(t *testing.T, addr, name string) float64 {
	t.Helper()
	var v float64
	WaitFor(t, 30*time.Second, func() error {
		var err error
		v, err = scrapeMetric(addr, name)
		return err
	})
	return v
}

// TestFollowerFetchAndReplicationMetrics reads a topic with a franz-go
// consumer in another rack than the partition's leader: the leader points
// it at the follower in its rack, which serves every fetch after the first
// (KIP-392). Then, in the same cluster, a follower is killed and restarted,
// and the leader's replication metrics follow: under-replicated partitions
// and ISR shrinks rise, then ISR expansions.
func TestFollowerFetchAndReplicationMetrics(t *testing.T) {
	c, metricsAddrs := metricsCluster(t)
	const topic, records = "closest-replica", 500
	createReplicatedTopic(t, c, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	leaderID := st[0].leader
	followerID := leaderID%3 + 1                 // the consumer's rack-mate
	otherID := followerID%3 + 1                  // killed and restarted below
	leader, follower := leaderID-1, followerID-1 // indexes into c.Nodes and metricsAddrs
	other := otherID - 1

	producer := acksAllProducer(t, c)
	for i := range records {
		if err := produceSync(ctx, producer, topic, 0, strconv.Itoa(i)); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	servedBefore := mustScrape(t, metricsAddrs[follower], "samsa_fetch_follower_requests_total")
	redirectedBefore := mustScrape(t, metricsAddrs[leader], "samsa_fetch_preferred_read_replica_total")
	rack := "rack-" + strconv.Itoa(int(followerID))
	// A long-poll longer than the test waits: records produced while the
	// consumer waits on the follower reach it only if the follower's high
	// watermark moving wakes the parked fetch.
	consumer := newClient(t, c.Addrs(), kgo.Rack(rack), kgo.FetchMaxWait(5*time.Minute),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var values []string
	readUpTo := func(n int) {
		for len(values) < n {
			fs := consumer.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("read %d of %d records", len(values), n)
			}
			fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch error %s-%d: %v", topic, p, err) })
			fs.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
		}
	}
	readUpTo(records)
	waiting := time.Now()
	for i := range 20 {
		if err := produceSync(ctx, producer, topic, 0, strconv.Itoa(records+i)); err != nil {
			t.Fatalf("produce %d: %v", records+i, err)
		}
	}
	readUpTo(records + 20)
	t.Logf("20 records produced while the consumer waited on the follower reached it after %v", time.Since(waiting).Round(time.Millisecond))
	checkSequence(t, values, records+20)
	served := mustScrape(t, metricsAddrs[follower], "samsa_fetch_follower_requests_total") - servedBefore
	redirected := mustScrape(t, metricsAddrs[leader], "samsa_fetch_preferred_read_replica_total") - redirectedBefore
	t.Logf("consumer in %s: leader %d redirected %v partition fetches, follower %d served %v fetches",
		rack, leaderID, redirected, followerID, served)
	if redirected < 1 || served < 1 {
		t.Fatalf("leader %d redirected %v partition fetches and follower %d served %v: the consumer did not read from its rack", leaderID, redirected, followerID, served)
	}
	// Nothing replicates from a follower, so its bytes out are the records
	// it sent the consumer.
	if n := mustScrape(t, metricsAddrs[follower], "samsa_topic_bytes_out_total"); n == 0 {
		t.Errorf("follower %d sent no record bytes", followerID)
	}
	if n := mustScrape(t, metricsAddrs[other], "samsa_fetch_follower_requests_total"); n != 0 {
		t.Errorf("node %d in another rack served %v consumer fetches as a follower", otherID, n)
	}
	for _, want := range []struct {
		node int32
		line string
	}{{followerID, "fetch served as follower"}, {leaderID, "preferred read replica"}} {
		if !strings.Contains(c.Nodes[want.node-1].Log(), want.line) {
			t.Errorf("node %d did not log %q", want.node, want.line)
		}
	}
	checkFollowerFetchErrors(ctx, t, c.Nodes[follower].Addr(), topic, records+20)

	// Replication metrics: the leader leads one partition with a full ISR.
	if v := mustScrape(t, metricsAddrs[leader], "samsa_under_replicated_partitions"); v != 0 {
		t.Fatalf("under-replicated partitions %v with a full ISR", v)
	}
	var activeControllers, offline float64
	for _, addr := range metricsAddrs {
		activeControllers += mustScrape(t, addr, "samsa_active_controller_count")
		offline += mustScrape(t, addr, "samsa_offline_partitions")
	}
	if activeControllers != 1 || offline != 0 {
		t.Errorf("summed over the cluster: %v active controllers, %v offline partitions; want 1 and 0", activeControllers, offline)
	}
	shrinks := mustScrape(t, metricsAddrs[leader], "samsa_isr_shrinks_total")
	expands := mustScrape(t, metricsAddrs[leader], "samsa_isr_expands_total")
	t.Cleanup(func() {
		if t.Failed() {
			for i, n := range c.Nodes {
				n.LogLines(func(l string) {
					if strings.Contains(l, "ISR") || strings.Contains(l, "fenc") || strings.Contains(l, "WARN") {
						t.Logf("node %d: %s", i+1, l)
					}
				})
			}
		}
	})
	killed := time.Now()
	c.Nodes[other].Kill()
	// A follower that stops fetching only lags once the leader's log moves
	// on without it (Kafka's rule), so write a little more.
	leaderAcks := newClient(t, c.Addrs(), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		if err := produceSync(ctx, leaderAcks, topic, 0, strconv.Itoa(records+i)); err != nil {
			t.Fatalf("produce with acks=1 after the kill: %v", err)
		}
	}
	WaitFor(t, 60*time.Second, func() error {
		under, err := scrapeMetric(metricsAddrs[leader], "samsa_under_replicated_partitions")
		if err != nil {
			return err
		}
		s, err := scrapeMetric(metricsAddrs[leader], "samsa_isr_shrinks_total")
		if err != nil {
			return err
		}
		if under != 1 || s <= shrinks {
			return fmt.Errorf("leader %d: %v under-replicated partitions, %v ISR shrinks (before the kill %v)", leaderID, under, s, shrinks)
		}
		return nil
	})
	t.Logf("node %d killed: leader %d shrank the ISR and reports it under-replicated after %v", otherID, leaderID, time.Since(killed).Round(time.Millisecond))
	restarted := time.Now()
	c.Nodes[other].Start()
	WaitFor(t, 60*time.Second, func() error {
		under, err := scrapeMetric(metricsAddrs[leader], "samsa_under_replicated_partitions")
		if err != nil {
			return err
		}
		e, err := scrapeMetric(metricsAddrs[leader], "samsa_isr_expands_total")
		if err != nil {
			return err
		}
		if under != 0 || e <= expands {
			return fmt.Errorf("leader %d: %v under-replicated partitions, %v ISR expansions (before the kill %v)", leaderID, under, e, expands)
		}
		return nil
	})
	t.Logf("node %d restarted: back in the ISR after %v", otherID, time.Since(restarted).Round(time.Millisecond))
}

// checkFollowerFetchErrors sends a follower consumer fetches it must refuse
// as Kafka does: an offset past its log, and a version before KIP-392.
func checkFollowerFetchErrors(ctx context.Context, t *testing.T, addr, topic string, logEnd int64) {
	t.Helper()
	fetch := func(cl *kgo.Client, offset int64) (int16, error) {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.ReplicaState.ID = -1
		req.MaxBytes = 1 << 20
		req.SessionEpoch = -1
		req.Rack = "anywhere"
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		md, err := metadataOf(ctx, t, addr)
		if err != nil {
			return 0, err
		}
		for _, mt := range md.Topics {
			if mt.Topic != nil && *mt.Topic == topic {
				rt.TopicID = mt.TopicID
			}
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset = offset
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := req.RequestWith(rctx, cl.SeedBrokers()[0])
		if err != nil {
			return 0, err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, errors.New("fetch response without the partition")
		}
		return resp.Topics[0].Partitions[0].ErrorCode, nil
	}
	current := newClient(t, []string{addr})
	old := kversion.Stable()
	old.SetMaxKeyVersion(1, 10)
	v10 := newClient(t, []string{addr}, kgo.MaxVersions(old))
	for _, c := range []struct {
		name   string
		cl     *kgo.Client
		offset int64
		want   *kerr.Error
	}{
		{"an offset past the follower's log", current, logEnd + 100, kerr.OffsetOutOfRange},
		{"fetch v10, which cannot read from followers", v10, 0, kerr.NotLeaderForPartition},
	} {
		code, err := fetch(c.cl, c.offset)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := kerr.ErrorForCode(code); !errors.Is(got, c.want) {
			t.Errorf("%s: follower answered %v, want %v", c.name, got, c.want)
		}
	}
}
