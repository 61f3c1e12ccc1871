package clustertest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KIP-853: a 3-voter quorum grows to 5 with controllers that join through
// controller.quorum.bootstrap.servers and AddRaftVoter, and shrinks back to
// 3 with RemoveRaftVoter, while a client keeps creating topics and the
// quorum leader is killed in the middle of a change. Every topic whose
// creation was acknowledged exists at the end, and DescribeQuorum lists
// exactly the expected voters.
func TestDynamicQuorumGrowShrinkUnderWritesWithLeaderKill(t *testing.T) {
	c := StartCluster(t, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Continuous metadata writes: topic creations, counted once acknowledged.
	var (
		mu    sync.Mutex
		acked []string
	)
	writeCtx, stopWrites := context.WithCancel(context.Background())
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		adm := kadm.NewClient(cl)
		for i := 0; writeCtx.Err() == nil; i++ {
			name := "dyn-" + strconv.Itoa(i)
			ctx, cancel := context.WithTimeout(writeCtx, 5*time.Second)
			resp, err := adm.CreateTopic(ctx, 1, 1, nil, name)
			cancel()
			if err == nil && resp.Err == nil {
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	defer func() {
		stopWrites()
		<-writerDone
	}()

	retryVoterRequest(t, cl, "upgrade kraft.version", func() kmsg.Request {
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.TimeoutMillis = 30000
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = "kraft.version", 1, 1
		req.FeatureUpdates = append(req.FeatureUpdates, u)
		return req
	})

	joiners := map[int32]*Node{4: StartJoiningController(t, c, 4), 5: StartJoiningController(t, c, 5)}

	addVoter := func(id int32) {
		retryVoterRequest(t, cl, fmt.Sprintf("add voter %d", id), func() kmsg.Request {
			req := kmsg.NewPtrAddRaftVoterRequest()
			req.VoterID, req.TimeoutMillis, req.AckWhenCommitted = id, 20000, true
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(joiners[id].Port)
			req.Listeners = append(req.Listeners, l)
			return req
		})
	}
	removeVoter := func(id int32) {
		retryVoterRequest(t, cl, fmt.Sprintf("remove voter %d", id), func() kmsg.Request {
			req := kmsg.NewPtrRemoveRaftVoterRequest()
			req.VoterID = id
			return req
		})
	}

	nodes := map[int32]*Node{1: c.Nodes[0], 2: c.Nodes[1], 3: c.Nodes[2], 4: joiners[4], 5: joiners[5]}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for id, n := range nodes {
			n.LogLines(func(line string) {
				if strings.Contains(line, "level=ERROR") || strings.Contains(line, "panic") || strings.Contains(line, "voter") || strings.Contains(line, "leader changed") || strings.Contains(line, "closing connection") {
					t.Logf("node %d: %s", id, line)
				}
			})
		}
	})
	addVoter(4)
	// Kill the leader while voter 5 is being added (listed as an observer,
	// not yet a voter); it comes back after.
	killed := killLeaderDuring(t, cl, nodes, observerListed(cl, 5), func() { addVoter(5) })
	waitVoters(t, cl, 1, 2, 3, 4, 5)
	killed.Start()

	// A broker-only node told only of controller 4 (added online) learns
	// the other voters from DescribeQuorum and registers with the active
	// controller, whichever it is.
	broker := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
	broker.overrides = []string{
		"node.id=6",
		"process.roles=broker",
		"listeners=PLAINTEXT://127.0.0.1:" + strconv.Itoa(broker.Port),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"controller.listener.names=CONTROLLER",
		"controller.quorum.bootstrap.servers=127.0.0.1:" + strconv.Itoa(joiners[4].Port),
		"broker.heartbeat.interval.ms=300",
		"broker.session.timeout.ms=3000",
	}
	t.Cleanup(broker.Stop)
	broker.Start()
	WaitFor(t, 60*time.Second, func() error {
		n, err := brokerCount(broker.Addr())
		if err == nil && n != 4 {
			err = fmt.Errorf("broker 6 knows %d brokers, want 4", n)
		}
		return err
	})

	removeVoter(4)
	killed = killLeaderDuring(t, cl, nodes, func() error { return nil }, func() { removeVoter(5) })
	killed.Start()
	waitVoters(t, cl, 1, 2, 3)
	for _, id := range []int32{4, 5} {
		joiners[id].Stop()
	}

	stopWrites()
	<-writerDone
	mu.Lock()
	want := slices.Clone(acked)
	mu.Unlock()
	t.Logf("%d topic creations acknowledged during the changes", len(want))
	if len(want) < 10 {
		t.Fatalf("only %d topic creations were acknowledged during the changes", len(want))
	}
	adm := kadm.NewClient(cl)
	WaitFor(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return err
		}
		for _, name := range want {
			if !topics.Has(name) {
				return fmt.Errorf("acknowledged topic %s is missing (of %d)", name, len(want))
			}
		}
		return nil
	})
	waitVoters(t, cl, 1, 2, 3)
	// The broker follows the shrunk quorum: it sees the last topic.
	last := want[len(want)-1]
	WaitFor(t, 30*time.Second, func() error {
		bcl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()))
		if err != nil {
			return err
		}
		defer bcl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		topics, err := kadm.NewClient(bcl).ListTopics(ctx)
		if err == nil && !topics.Has(last) {
			err = fmt.Errorf("broker 6 does not know topic %s", last)
		}
		return err
	})
}

// retryVoterRequest sends the request until it succeeds, retrying the
// errors of a quorum in transition.
func retryVoterRequest(t *testing.T, cl *kgo.Client, what string, build func() kmsg.Request) {
	t.Helper()
	WaitFor(t, 90*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := cl.Request(ctx, build())
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		var code int16
		var msg *string
		switch r := resp.(type) {
		case *kmsg.AddRaftVoterResponse:
			code, msg = r.ErrorCode, r.ErrorMessage
		case *kmsg.RemoveRaftVoterResponse:
			code, msg = r.ErrorCode, r.ErrorMessage
			if code == kerr.VoterNotFound.Code {
				return nil // an earlier attempt, whose answer was lost, removed it
			}
		case *kmsg.UpdateFeaturesResponse:
			code, msg = r.ErrorCode, r.ErrorMessage
		}
		switch err := kerr.ErrorForCode(code); {
		case err == nil:
			return nil
		case err == kerr.DuplicateVoter:
			return nil // an earlier attempt, whose answer was lost, added it
		case err == kerr.RequestTimedOut, err == kerr.NotLeaderForPartition, err == kerr.NotController, err == kerr.UnknownServerError:
			return fmt.Errorf("%s: %v (%s)", what, err, deref(msg))
		default:
			return errStopWaiting{fmt.Errorf("%s: %v (%s)", what, err, deref(msg))}
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// describeVoters returns the leader and voter ids DescribeQuorum reports.
func describeVoters(cl *kgo.Client) (leader int32, voters []int32, err error) {
	p, err := quorumPartition(context.Background(), cl)
	if err != nil {
		return -1, nil, err
	}
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	slices.Sort(voters)
	return p.LeaderID, voters, nil
}

// waitVoters waits until DescribeQuorum lists exactly want.
func waitVoters(t *testing.T, cl *kgo.Client, want ...int32) {
	t.Helper()
	WaitFor(t, 60*time.Second, func() error {
		_, voters, err := describeVoters(cl)
		if err != nil {
			return err
		}
		if !slices.Equal(voters, want) {
			return fmt.Errorf("voters %v, want %v", voters, want)
		}
		return nil
	})
}

// killLeaderDuring runs change and, once midway holds (polled), kills the
// quorum leader, whichever of nodes it is; it returns the killed node, to be
// started again.
func killLeaderDuring(t *testing.T, cl *kgo.Client, nodes map[int32]*Node, midway func() error, change func()) *Node {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		change()
	}()
	var victim *Node
	WaitFor(t, 30*time.Second, func() error {
		if err := midway(); err != nil {
			return err
		}
		leader, _, err := describeVoters(cl)
		if err != nil {
			return err
		}
		if victim = nodes[leader]; victim == nil {
			return fmt.Errorf("leader %d unknown", leader)
		}
		return nil
	})
	t.Logf("killing the quorum leader mid-change")
	victim.Kill()
	<-done
	return victim
}

// observerListed is a midway condition: DescribeQuorum lists id as an
// observer (a learner being caught up by AddRaftVoter).
func observerListed(cl *kgo.Client, id int32) func() error {
	return func() error {
		p, err := quorumPartition(context.Background(), cl)
		if err != nil {
			return err
		}
		for _, o := range append(p.Observers, p.CurrentVoters...) {
			if o.ReplicaID == id {
				return nil
			}
		}
		return fmt.Errorf("node %d is not listed yet", id)
	}
}
