package clustertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newClient(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// client is newClient for c: its ClientOpts (TLS, SASL) and opts.
func (c *Cluster) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, c.Addrs(), append(slices.Clone(c.ClientOpts), opts...)...)
}

// metadataOf asks one node (only) for its metadata.
func metadataOf(ctx context.Context, t *testing.T, addr string) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

func TestThreeNodeQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Every node registered and every node knows all three.
	for _, n := range c.Nodes {
		WaitFor(t, 30*time.Second, func() error {
			md, err := metadataOf(ctx, t, n.Addr())
			if err != nil {
				return err
			}
			if len(md.Brokers) != 3 {
				return fmt.Errorf("node %s sees %d brokers", n.Addr(), len(md.Brokers))
			}
			return nil
		})
	}

	// A CreateTopics sent to a node that is not the active controller is
	// forwarded to it.
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	controllerID := md.ControllerID
	var follower *Node
	for i, n := range c.Nodes {
		if int32(i+1) != controllerID {
			follower = n
			break
		}
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "spread", 6, 1
	create.Topics = append(create.Topics, rt)
	create.TimeoutMillis = 10000
	resp, err := newClient(t, []string{follower.Addr()}).SeedBrokers()[0].Request(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		t.Fatalf("forwarded CreateTopics: %v", kerr.ErrorForCode(code))
	}
	// Every node sees the topic, with leaders on all three nodes.
	for _, n := range c.Nodes {
		WaitFor(t, 30*time.Second, func() error {
			md, err := metadataOf(ctx, t, n.Addr())
			if err != nil {
				return err
			}
			for _, topic := range md.Topics {
				if topic.Topic != nil && *topic.Topic == "spread" && len(topic.Partitions) == 6 {
					leaders := map[int32]bool{}
					for _, p := range topic.Partitions {
						leaders[p.Leader] = true
					}
					if len(leaders) != 3 {
						return fmt.Errorf("leaders on %d nodes", len(leaders))
					}
					return nil
				}
			}
			return fmt.Errorf("node %s does not see the topic yet", n.Addr())
		})
	}

	// Produce through one node's bootstrap, consume through another's.
	producer := newClient(t, []string{c.Nodes[2].Addr()})
	const total = 600
	var records []*kgo.Record
	for i := range total {
		records = append(records, &kgo.Record{Topic: "spread", Key: []byte(fmt.Sprint(i % 13)), Value: []byte(fmt.Sprint(i))})
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumer := newClient(t, []string{c.Nodes[0].Addr()}, kgo.ConsumeTopics("spread"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	partitions := map[int32]bool{}
	for len(seen) < total {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", len(seen), total)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)] = true
			partitions[r.Partition] = true
		})
	}
	if len(partitions) != 6 {
		t.Fatalf("records came from %d partitions", len(partitions))
	}

	// Kill -9 the active controller: another takes over and metadata
	// writes succeed again.
	victim := c.Nodes[controllerID-1]
	killed := time.Now()
	victim.Kill()
	var survivors []string
	for _, n := range c.Nodes {
		if n != victim {
			survivors = append(survivors, n.Addr())
		}
	}
	adm := kadm.NewClient(newClient(t, survivors))
	WaitFor(t, 60*time.Second, func() error {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		resp, err := adm.CreateTopics(rctx, 1, 1, nil, "after-failover")
		if err != nil {
			return err
		}
		if err := resp["after-failover"].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return err
		}
		return nil
	})
	t.Logf("controller failover: %v from SIGKILL of node %d to the first successful CreateTopics", time.Since(killed).Round(time.Millisecond), controllerID)
	md, err = metadataOf(ctx, t, survivors[0])
	if err != nil {
		t.Fatal(err)
	}
	if md.ControllerID == controllerID || md.ControllerID < 0 {
		t.Fatalf("controller is still %d after it was killed", md.ControllerID)
	}

	// Within broker.session.timeout.ms the dead node is fenced: it leaves
	// the broker list and its RF=1 partitions are reported offline.
	fencedAt := time.Now()
	WaitFor(t, 30*time.Second, func() error {
		md, err := metadataOf(ctx, t, survivors[0])
		if err != nil {
			return err
		}
		for _, b := range md.Brokers {
			if b.NodeID == controllerID {
				return fmt.Errorf("killed node %d still listed", controllerID)
			}
		}
		for _, topic := range md.Topics {
			for _, p := range topic.Partitions {
				if p.Leader == controllerID {
					return fmt.Errorf("partition %d still led by the killed node", p.Partition)
				}
			}
		}
		return nil
	})
	t.Logf("killed node fenced %v after failover", time.Since(fencedAt).Round(time.Millisecond))

	// The killed node comes back, catches up, is unfenced, leads its
	// partitions again and sees what happened while it was down.
	victim.Start()
	WaitFor(t, 60*time.Second, func() error {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var recs []*kgo.Record
		for p := range int32(6) {
			recs = append(recs, &kgo.Record{Topic: "spread", Partition: p, Value: []byte("after-restart")})
		}
		return newClient(t, c.Addrs(), kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(rctx, recs...).FirstErr()
	})
	WaitFor(t, 60*time.Second, func() error {
		md, err := metadataOf(ctx, t, victim.Addr())
		if err != nil {
			return err
		}
		for _, topic := range md.Topics {
			if topic.Topic != nil && *topic.Topic == "after-failover" {
				return nil
			}
		}
		return errors.New("restarted node does not see the topic created while it was down")
	})
}

// topicIDs is each topic's id as a node reports it.
func topicIDs(ctx context.Context, t *testing.T, addr string) (map[string][16]byte, error) {
	md, err := metadataOf(ctx, t, addr)
	if err != nil {
		return nil, err
	}
	out := map[string][16]byte{}
	for _, topic := range md.Topics {
		if topic.Topic != nil {
			out[*topic.Topic] = topic.TopicID
		}
	}
	return out, nil
}

func TestQuorumMinorityAndFullRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "before"); err != nil {
		t.Fatal(err)
	}
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	oldController := md.ControllerID
	paused := c.Nodes[oldController-1]

	// Pause the active controller: it is cut off (a minority of one); the
	// majority elects another controller and keeps committing.
	paused.Pause()
	var majority []string
	for _, n := range c.Nodes {
		if n != paused {
			majority = append(majority, n.Addr())
		}
	}
	WaitFor(t, 60*time.Second, func() error {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		// A fresh client each try: a cached controller id would keep
		// pointing at the paused node, which never refuses, only stalls.
		cl, err := kgo.NewClient(kgo.SeedBrokers(majority...))
		if err != nil {
			return err
		}
		defer cl.Close()
		resp, err := kadm.NewClient(cl).CreateTopics(rctx, 1, 1, nil, "during-pause")
		if err != nil {
			return err
		}
		if err := resp["during-pause"].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return err
		}
		return nil
	})
	md, err = metadataOf(ctx, t, majority[0])
	if err != nil {
		t.Fatal(err)
	}
	if md.ControllerID == oldController {
		t.Fatalf("the paused node %d is still the controller", oldController)
	}
	// Resumed, the old controller learns of the new term and follows.
	paused.Resume()
	WaitFor(t, 60*time.Second, func() error {
		ids, err := topicIDs(ctx, t, paused.Addr())
		if err != nil {
			return err
		}
		if _, ok := ids["during-pause"]; !ok {
			return errors.New("resumed node lacks the topic committed while it was paused")
		}
		md, err := metadataOf(ctx, t, paused.Addr())
		if err != nil {
			return err
		}
		if md.ControllerID == oldController {
			return errors.New("resumed node still believes it is the controller")
		}
		return nil
	})

	// Restart every node: the metadata image comes back identical.
	want, err := topicIDs(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		n.Stop()
	}
	var restarted = make(chan struct{}, len(c.Nodes))
	for _, n := range c.Nodes {
		go func() {
			n.Start()
			restarted <- struct{}{}
		}()
	}
	for range c.Nodes {
		<-restarted
	}
	for _, n := range c.Nodes {
		WaitFor(t, 60*time.Second, func() error {
			got, err := topicIDs(ctx, t, n.Addr())
			if err != nil {
				return err
			}
			if len(got) != len(want) {
				return fmt.Errorf("node %s has %d topics after restart, want %d", n.Addr(), len(got), len(want))
			}
			for name, id := range want {
				if got[name] != id {
					return fmt.Errorf("topic %s has id %x after restart, want %x", name, got[name], id)
				}
			}
			return nil
		})
	}
}

func TestControlledShutdownMovesLeadership(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	// A session timeout far beyond the test's deadlines: only a controlled
	// shutdown can move leadership in time.
	c := StartCluster(t, 3, "broker.session.timeout.ms=600000")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "moving"); err != nil {
		t.Fatal(err)
	}
	// Wait for every replica to be in sync, then stop node 2 gracefully.
	WaitFor(t, 60*time.Second, func() error {
		md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
		if err != nil {
			return err
		}
		for _, topic := range md.Topics {
			if topic.Topic != nil && *topic.Topic == "moving" {
				for _, p := range topic.Partitions {
					if len(p.ISR) != 3 {
						return fmt.Errorf("partition %d ISR %v", p.Partition, p.ISR)
					}
				}
				return nil
			}
		}
		return errors.New("topic not visible")
	})
	stopped := c.Nodes[1]
	stopped.Stop()
	WaitFor(t, 30*time.Second, func() error {
		md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
		if err != nil {
			return err
		}
		for _, topic := range md.Topics {
			for _, p := range topic.Partitions {
				if p.Leader == 2 {
					return fmt.Errorf("%s-%d still led by the stopped node", *topic.Topic, p.Partition)
				}
				if p.Leader < 0 && topic.Topic != nil && *topic.Topic == "moving" {
					return fmt.Errorf("moving-%d has no leader", p.Partition)
				}
			}
		}
		return nil
	})
	// Writes with acks=all continue at once on the remaining replicas.
	var recs []*kgo.Record
	for p := range int32(6) {
		recs = append(recs, &kgo.Record{Topic: "moving", Partition: p, Value: []byte("after")})
	}
	pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
	defer pcancel()
	if err := newClient(t, []string{c.Nodes[0].Addr(), c.Nodes[2].Addr()}, kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(pctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce after controlled shutdown: %v", err)
	}
}
