package clustertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createTopicsOn sends one CreateTopics to the node at addr only (no
// retries elsewhere) and returns its answer and how long it took.
func createTopicsOn(ctx context.Context, t *testing.T, addr string, timeoutMs int32, validateOnly bool, topics ...string) (*kmsg.CreateTopicsResponse, time.Duration, error) {
	t.Helper()
	cl := newClient(t, []string{addr}, kgo.RequestRetries(0))
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis, req.ValidateOnly = timeoutMs, validateOnly
	for _, name := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 3, 1
		req.Topics = append(req.Topics, rt)
	}
	start := time.Now()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	return resp, time.Since(start), err
}

// TestCreateTopicsHonoursTimeoutMs: CreateTopics is decided within its
// timeout_ms, as Kafka's controller makes it the deadline of the request's
// controller event. A timeout_ms of 0 times out at once, validate_only too,
// and creates nothing; on a quorum that cannot commit (two of three voters
// stopped), a timeout_ms of 1500 answers REQUEST_TIMED_OUT per topic at
// about its deadline, not after the journal's own 30 s, and the broker keeps
// serving. Once the voters are back, each timed-out topic either exists
// whole on every node (its entry committed after all) or on none.
func TestCreateTopicsHonoursTimeoutMs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// timeout_ms 0 on a healthy cluster: the deadline has passed before
	// the controller decides, so every item times out, validate_only or
	// not, and nothing changes. Asked of the active controller and of a
	// node that forwards to it.
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "marker-1"); err != nil {
		t.Fatal(err)
	}
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	controllerNode := c.Nodes[md.ControllerID-1]
	forwarder := c.Nodes[md.ControllerID%3]
	for _, n := range []*Node{controllerNode, forwarder} {
		for _, validateOnly := range []bool{true, false} {
			resp, took, err := createTopicsOn(ctx, t, n.Addr(), 0, validateOnly, "zero-a", "zero-b")
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Topics) != 2 {
				t.Fatalf("timeout_ms=0: %d topics answered, want 2", len(resp.Topics))
			}
			for _, rt := range resp.Topics {
				if rt.ErrorCode != kerr.RequestTimedOut.Code {
					t.Fatalf("CreateTopics timeout_ms=0 validate_only=%v: topic %s answered %v, want REQUEST_TIMED_OUT", validateOnly, rt.Topic, kerr.ErrorForCode(rt.ErrorCode))
				}
			}
			t.Logf("node %s: CreateTopics timeout_ms=0 validate_only=%v answered REQUEST_TIMED_OUT in %v", n.Addr(), validateOnly, took)
		}
		zeroTimeoutOtherAPIs(ctx, t, n.Addr(), "marker-1")
	}
	// A later write commits, so had the zero-timeout requests changed
	// anything, every node would show it by the time it has this topic.
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "marker-2"); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		WaitFor(t, 30*time.Second, func() error {
			md, err := metadataOf(ctx, t, n.Addr())
			if err != nil {
				return err
			}
			partitions := map[string]int{}
			for _, mt := range md.Topics {
				if mt.Topic != nil {
					partitions[*mt.Topic] = len(mt.Partitions)
				}
			}
			if _, ok := partitions["marker-2"]; !ok {
				return fmt.Errorf("node %s lacks marker-2", n.Addr())
			}
			for _, name := range []string{"zero-a", "zero-b"} {
				if _, ok := partitions[name]; ok {
					return errStopWaiting{fmt.Errorf("node %s has %s, created by a request with timeout_ms=0", n.Addr(), name)}
				}
			}
			if partitions["marker-1"] != 1 {
				return errStopWaiting{fmt.Errorf("node %s shows marker-1 with %d partitions after requests with timeout_ms=0, want 1", n.Addr(), partitions["marker-1"])}
			}
			return nil
		})
	}

	// Stop the two voters that are not the active controller: the one left
	// leads a quorum it cannot commit to.
	lone := controllerNode
	var stopped []*Node
	for _, n := range c.Nodes {
		if n != lone {
			stopped = append(stopped, n)
		}
	}
	for _, n := range stopped {
		n.Pause()
		t.Cleanup(n.Resume)
	}
	const timeoutMs = 1500
	lost := []string{"lost-a", "lost-b"}
	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	resp, took, err := createTopicsOn(rctx, t, lone.Addr(), timeoutMs, false, lost...)
	rcancel()
	if err != nil {
		t.Fatalf("CreateTopics on a quorum that cannot commit: %v after %v", err, took)
	}
	if len(resp.Topics) != len(lost) {
		t.Fatalf("%d topics answered, want %d", len(resp.Topics), len(lost))
	}
	for _, rt := range resp.Topics {
		msg := ""
		if rt.ErrorMessage != nil {
			msg = *rt.ErrorMessage
		}
		if rt.ErrorCode != kerr.RequestTimedOut.Code {
			t.Fatalf("topic %s answered %v (%s), want REQUEST_TIMED_OUT", rt.Topic, kerr.ErrorForCode(rt.ErrorCode), msg)
		}
		t.Logf("topic %s: REQUEST_TIMED_OUT (%s)", rt.Topic, msg)
	}
	t.Logf("CreateTopics timeout_ms=%d on a quorum that cannot commit answered after %v", timeoutMs, took)
	if took >= 15*time.Second {
		t.Fatalf("answered after %v: the request's timeout_ms did not bound the wait", took)
	}

	// The broker keeps serving while the quorum is gone.
	if _, err := metadataOf(ctx, t, lone.Addr()); err != nil {
		t.Fatalf("Metadata after the timed-out CreateTopics: %v", err)
	}

	// Check quorum: the lone leader steps down. A request now finds no
	// active controller to forward to; it waits for one until its deadline.
	lonely := newClient(t, []string{lone.Addr()})
	WaitFor(t, 30*time.Second, func() error {
		v, err := describeQuorum(ctx, lonely)
		if err != nil {
			return err
		}
		if v.leader >= 0 {
			return fmt.Errorf("node %s still sees leader %d", lone.Addr(), v.leader)
		}
		return nil
	})
	unreached := "unreached"
	resp, took, err = createTopicsOn(ctx, t, lone.Addr(), timeoutMs, false, unreached)
	if err != nil {
		t.Fatalf("CreateTopics with no active controller: %v after %v", err, took)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("CreateTopics with no active controller answered %+v, want REQUEST_TIMED_OUT", resp.Topics)
	}
	t.Logf("CreateTopics timeout_ms=%d with no active controller answered REQUEST_TIMED_OUT after %v", timeoutMs, took)
	if took >= 15*time.Second {
		t.Fatalf("answered after %v: the request's timeout_ms did not bound the wait for a controller", took)
	}

	// A request without a timeout_ms sent while no controller is known
	// waits for one (request.timeout.ms, as Kafka's forwarding does), and
	// is decided once the voters are back, rather than dropped.
	untimed := make(chan error, 1)
	go func() { untimed <- alterTopicConfigOn(ctx, t, lone.Addr(), "marker-1", "retention.ms", "123456") }()
	time.Sleep(500 * time.Millisecond)
	if v, err := describeQuorum(ctx, lonely); err != nil || v.leader >= 0 {
		t.Fatalf("a leader came back too early for the untimed request: %+v, %v", v, err)
	}

	// The voters come back; once a new write commits everywhere, every node
	// has applied whatever of the timed-out entry committed.
	for _, n := range stopped {
		n.Resume()
	}
	if err := <-untimed; err != nil {
		t.Fatalf("IncrementalAlterConfigs sent while no controller was known: %v", err)
	}
	WaitFor(t, 60*time.Second, func() error {
		return createOnMajority(ctx, c.Addrs(), "marker-3")
	})
	views := make([]map[string][16]byte, len(c.Nodes))
	for i, n := range c.Nodes {
		WaitFor(t, 30*time.Second, func() error {
			ids, err := topicIDs(ctx, t, n.Addr())
			if err != nil {
				return err
			}
			if _, ok := ids["marker-3"]; !ok {
				return fmt.Errorf("node %s lacks marker-3", n.Addr())
			}
			if _, ok := ids[unreached]; ok {
				return errStopWaiting{fmt.Errorf("node %s has %s, whose request reached no controller", n.Addr(), unreached)}
			}
			views[i] = ids
			return nil
		})
	}
	for _, name := range lost {
		id, exists := views[0][name]
		for i, ids := range views {
			if got, ok := ids[name]; ok != exists || got != id {
				t.Fatalf("nodes disagree on %s: node %d has it=%v id %x, node 1 has it=%v id %x", name, i+1, ok, got, exists, id)
			}
		}
		if !exists {
			t.Logf("topic %s: its entry never committed (the returning voters elected a leader without it); it exists on no node", name)
			continue
		}
		// Committed after all: it must be whole, with every partition.
		WaitFor(t, 30*time.Second, func() error {
			md, err := metadataOf(ctx, t, lone.Addr())
			if err != nil {
				return err
			}
			for _, mt := range md.Topics {
				if mt.Topic != nil && *mt.Topic == name {
					if len(mt.Partitions) != 3 {
						return errStopWaiting{fmt.Errorf("topic %s has %d partitions, want 3", name, len(mt.Partitions))}
					}
					return nil
				}
			}
			return errors.New("topic missing from metadata")
		})
		t.Logf("topic %s: its entry committed once the voters returned; it exists whole on every node", name)
	}
}

// zeroTimeoutOtherAPIs sends DeleteTopics, CreatePartitions (validate_only
// and not), ElectLeaders and AlterPartitionReassignments with timeout_ms 0
// for topic to addr: each answers REQUEST_TIMED_OUT for every item.
func zeroTimeoutOtherAPIs(ctx context.Context, t *testing.T, addr, topic string) {
	t.Helper()
	cl := newClient(t, []string{addr}, kgo.RequestRetries(0))
	broker := cl.SeedBrokers()[0]

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = 0
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = &topic
	del.Topics, del.TopicNames = append(del.Topics, dt), []string{topic}
	dresp, err := del.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if len(dresp.Topics) != 1 || dresp.Topics[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("node %s: DeleteTopics timeout_ms=0 answered %+v, want REQUEST_TIMED_OUT", addr, dresp.Topics)
	}

	for _, validateOnly := range []bool{true, false} {
		cp := kmsg.NewPtrCreatePartitionsRequest()
		cp.TimeoutMillis, cp.ValidateOnly = 0, validateOnly
		ct := kmsg.NewCreatePartitionsRequestTopic()
		ct.Topic, ct.Count = topic, 2
		cp.Topics = append(cp.Topics, ct)
		cresp, err := cp.RequestWith(ctx, broker)
		if err != nil {
			t.Fatal(err)
		}
		if len(cresp.Topics) != 1 || cresp.Topics[0].ErrorCode != kerr.RequestTimedOut.Code {
			t.Fatalf("node %s: CreatePartitions timeout_ms=0 validate_only=%v answered %+v, want REQUEST_TIMED_OUT", addr, validateOnly, cresp.Topics)
		}
	}

	el := kmsg.NewPtrElectLeadersRequest()
	el.TimeoutMillis = 0
	et := kmsg.NewElectLeadersRequestTopic()
	et.Topic, et.Partitions = topic, []int32{0}
	el.Topics = append(el.Topics, et)
	eresp, err := el.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if eresp.ErrorCode != kerr.RequestTimedOut.Code || len(eresp.Topics) != 1 || len(eresp.Topics[0].Partitions) != 1 ||
		eresp.Topics[0].Partitions[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("node %s: ElectLeaders timeout_ms=0 answered %+v, want REQUEST_TIMED_OUT", addr, eresp)
	}
	ar := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	ar.TimeoutMillis = 0
	at := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	at.Topic = topic
	ap := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	ap.Partition, ap.Replicas = 0, []int32{1}
	at.Partitions = append(at.Partitions, ap)
	ar.Topics = append(ar.Topics, at)
	aresp, err := ar.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if aresp.ErrorCode != kerr.RequestTimedOut.Code || len(aresp.Topics) != 1 || len(aresp.Topics[0].Partitions) != 1 ||
		aresp.Topics[0].Partitions[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("node %s: AlterPartitionReassignments timeout_ms=0 answered %+v, want REQUEST_TIMED_OUT", addr, aresp)
	}
	t.Logf("node %s: DeleteTopics, CreatePartitions, ElectLeaders and AlterPartitionReassignments with timeout_ms=0 answered REQUEST_TIMED_OUT", addr)
}

// alterTopicConfigOn sets one config of topic with an IncrementalAlterConfigs
// sent to the node at addr only (no retries), and reports its error.
func alterTopicConfigOn(ctx context.Context, t *testing.T, addr, topic, name, value string) error {
	cl := newClient(t, []string{addr}, kgo.RequestRetries(0))
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = name, kmsg.StringPtr(value)
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return err
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("%d resources answered, want 1", len(resp.Resources))
	}
	return kerr.ErrorForCode(resp.Resources[0].ErrorCode)
}
