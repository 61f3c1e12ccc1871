package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRaftVoterRequestsBadInput drives AddRaftVoter (80), RemoveRaftVoter
// (81) and UpdateRaftVoter (82) with kmsg against a real node, on its
// controller listener and through its client listener, and checks Kafka's
// error for every request the quorum must refuse; the node keeps serving
// and its voter set is unchanged.
func TestRaftVoterRequestsBadInput(t *testing.T) {
	port := freePort(t)
	tn := startTestNode(t,
		"process.roles=broker,controller", "node.id=1",
		"listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:"+port,
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=1@127.0.0.1:"+port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	broker := tn.client()
	controller, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:" + port))
	if err != nil {
		t.Fatal(err)
	}
	defer controller.Close()
	seed := controller.SeedBrokers()[0]

	add := func(id int32, port uint16, timeoutMs int32, clusterID *string) *kmsg.AddRaftVoterRequest {
		req := kmsg.NewPtrAddRaftVoterRequest()
		req.VoterID, req.TimeoutMillis, req.ClusterID = id, timeoutMs, clusterID
		if port != 0 {
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", port
			req.Listeners = append(req.Listeners, l)
		}
		return req
	}
	remove := func(id int32, dir [16]byte) *kmsg.RemoveRaftVoterRequest {
		req := kmsg.NewPtrRemoveRaftVoterRequest()
		req.VoterID, req.VoterDirectoryID = id, dir
		return req
	}
	update := func(id int32, port uint16, minV, maxV int16) *kmsg.UpdateRaftVoterRequest {
		req := kmsg.NewPtrUpdateRaftVoterRequest()
		req.VoterID = id
		req.KRaftVersionFeature.MinSupportedVersion, req.KRaftVersionFeature.MaxSupportedVersion = minV, maxV
		if port != 0 {
			l := kmsg.NewUpdateRaftVoterRequestListener()
			l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", port
			req.Listeners = append(req.Listeners, l)
		}
		return req
	}
	code := func(via string, req kmsg.Request) int16 {
		t.Helper()
		var resp kmsg.Response
		var err error
		if via == "broker" {
			resp, err = broker.Request(ctx, req)
		} else {
			resp, err = seed.Request(ctx, req)
		}
		if err != nil {
			t.Fatalf("%T via %s: %v", req, via, err)
		}
		switch r := resp.(type) {
		case *kmsg.AddRaftVoterResponse:
			return r.ErrorCode
		case *kmsg.RemoveRaftVoterResponse:
			return r.ErrorCode
		case *kmsg.UpdateRaftVoterResponse:
			return r.ErrorCode
		}
		t.Fatalf("unexpected response %T", resp)
		return 0
	}
	expect := func(what, via string, req kmsg.Request, want *kerr.Error) {
		t.Helper()
		if got := code(via, req); got != want.Code {
			t.Errorf("%s via %s: %v, want %v", what, via, kerr.ErrorForCode(got), want)
		}
	}
	wrongCluster := "not-this-cluster"
	ownPort := uint16(mustAtoi(t, port))

	// kraft.version 0: static voters.
	expect("add at kraft.version 0", "controller", add(2, 19999, 1000, nil), kerr.UnsupportedVersion)
	expect("remove at kraft.version 0", "broker", remove(1, [16]byte{}), kerr.UnsupportedVersion)
	expect("update at kraft.version 0", "controller", update(1, ownPort, 0, 1), kerr.UnsupportedVersion)
	expect("add without listeners", "controller", add(2, 0, 1000, nil), kerr.InvalidRequest)
	expect("add of another cluster", "controller", add(2, 19999, 1000, &wrongCluster), kerr.InconsistentClusterID)
	expect("update with an empty kraft.version range", "controller", update(1, ownPort, 1, 0), kerr.InvalidRequest)

	res, err := kadm.NewClient(broker).UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "kraft.version", MaxVersionLevel: 1, UpgradeType: 1})
	if err != nil || res.Error() != nil {
		t.Fatalf("upgrade kraft.version: %v %v", err, res.Error())
	}
	// The upgrade's snapshot must exist before a learner can be added.
	waitUntil(t, 20*time.Second, "the kraft.version upgrade's snapshot", func() bool {
		return code("controller", add(1, ownPort, 1000, nil)) == kerr.DuplicateVoter.Code
	})

	expect("add of a voter", "broker", add(1, ownPort, 1000, nil), kerr.DuplicateVoter)
	expect("remove of a stranger", "controller", remove(9, [16]byte{}), kerr.VoterNotFound)
	expect("remove with another directory id", "broker", remove(1, [16]byte{7}), kerr.VoterNotFound)
	expect("remove of the last voter", "controller", remove(1, [16]byte{}), kerr.InvalidRequest)
	expect("update of a stranger", "controller", update(9, ownPort, 0, 1), kerr.VoterNotFound)
	expect("update without listeners", "controller", update(1, 0, 0, 1), kerr.InvalidRequest)
	expect("update excluding kraft.version 1", "controller", update(1, ownPort, 0, 0), kerr.InvalidRequest)
	expect("update of its own endpoint", "controller", update(1, ownPort, 0, 1), &kerr.Error{Message: "NONE", Code: 0})
	// A controller that never comes up cannot catch up.
	expect("add of an unreachable controller", "controller", add(2, 1, 1500, nil), kerr.RequestTimedOut)
	// The learner it left is removed the same way as a voter.
	expect("remove of the learner left behind", "controller", remove(2, [16]byte{}), &kerr.Error{Message: "NONE", Code: 0})

	// The node still serves, with one voter.
	if _, err := kadm.NewClient(broker).CreateTopic(ctx, 1, 1, nil, "still-serving"); err != nil {
		t.Fatalf("create topic after the bad requests: %v", err)
	}
	resp, err := describeQuorumRequest().RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != 1 || len(p.Observers) != 0 {
		t.Fatalf("voters %+v observers %+v, want voter 1 alone", p.CurrentVoters, p.Observers)
	}
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
