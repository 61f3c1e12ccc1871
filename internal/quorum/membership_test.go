package quorum

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"
)

// addJoiner starts a node with no voters (an observer) and returns its index.
func (c *testCluster) addJoiner(id int32) int {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	c.nodes = append(c.nodes, &testNode{id: id, dir: c.t.TempDir(), addr: ln.Addr().String(), joined: true})
	i := len(c.nodes) - 1
	c.start(i, ln)
	return i
}

// member is node i as AddVoter names it.
func (c *testCluster) member(i int) Member {
	host, portText, _ := net.SplitHostPort(c.nodes[i].addr)
	port, _ := strconv.Atoi(portText)
	return Member{ID: c.nodes[i].id, DirectoryID: [16]byte{byte(c.nodes[i].id)}, Endpoints: []Endpoint{{Name: DefaultListenerName, Host: host, Port: uint16(port)}}}
}

// retryChange runs op on the leader until it succeeds, retrying while a
// change is pending or leadership moves.
func (c *testCluster) retryChange(what string, op func(ctx context.Context, n *testNode) error) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		leader := c.anyLeader()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last = op(ctx, leader)
		cancel()
		if last == nil {
			return
		}
		if !errors.Is(last, ErrChangePending) && !errors.Is(last, ErrNotLeader) && !errors.Is(last, ErrNotCaughtUp) && !errors.Is(last, context.DeadlineExceeded) {
			c.t.Fatalf("%s: %v", what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("%s: no success in 20s, last: %v", what, last)
}

// anyLeader waits until a running node leads (joiners not yet added know
// no leader) and returns it.
func (c *testCluster) anyLeader() *testNode {
	c.t.Helper()
	var leader *testNode
	waitFor(c.t, 10*time.Second, "a leader", func() bool {
		for _, n := range c.running() {
			if n.q.isLeader() {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// waitVoters waits until every running node's latest voter set is want.
func (c *testCluster) waitVoters(want ...int32) {
	c.t.Helper()
	var seen string
	deadline := time.Now().Add(10 * time.Second)
	for {
		seen = ""
		for _, n := range c.running() {
			var got []int32
			st := n.q.Status()
			for _, v := range st.Voters {
				got = append(got, v.ID)
			}
			if !slices.Equal(got, want) {
				seen += fmt.Sprintf(" node %d: voters %v observers %d leader %d;", n.id, got, len(st.Observers), st.LeaderID)
			}
		}
		if seen == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("voters %v not everywhere after 10s:%s", want, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMembershipGrowShrinkAndRestart(t *testing.T) {
	c := newCluster(t, 3, nil)
	leader := c.waitLeader()
	c.propose("before")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// kraft.version 0: the voters are static.
	if err := leader.q.RemoveVoter(ctx, 3, [16]byte{}); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("RemoveVoter at kraft.version 0: %v, want ErrUnsupportedVersion", err)
	}
	c.retryChange("upgrade kraft.version", func(ctx context.Context, n *testNode) error { return n.q.SetKRaftVersion(ctx, 1) })
	if v := leader.q.KRaftVersion(); v != 1 {
		t.Fatalf("kraft.version %d after the upgrade", v)
	}
	if err := leader.q.SetKRaftVersion(ctx, 0); !errors.Is(err, ErrInvalidChange) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("downgrade kraft.version: %v, want ErrInvalidChange", err)
	}

	four, five := c.addJoiner(4), c.addJoiner(5)
	c.retryChange("add voter 4", func(ctx context.Context, n *testNode) error { return n.q.AddVoter(ctx, c.member(four)) })
	c.propose("with four")
	c.retryChange("add voter 5", func(ctx context.Context, n *testNode) error { return n.q.AddVoter(ctx, c.member(five)) })
	c.waitVoters(1, 2, 3, 4, 5)
	c.propose("with five")
	history := c.waitSameHistory(c.nodes[four])
	if len(history) < 3 {
		t.Fatalf("history %v", history)
	}

	leader = c.anyLeader()
	if err := leader.q.AddVoter(ctx, c.member(four)); !errors.Is(err, ErrDuplicateVoter) {
		t.Fatalf("AddVoter of a voter: %v, want ErrDuplicateVoter", err)
	}
	if err := leader.q.RemoveVoter(ctx, 9, [16]byte{}); !errors.Is(err, ErrVoterNotFound) {
		t.Fatalf("RemoveVoter of a stranger: %v, want ErrVoterNotFound", err)
	}
	if err := leader.q.RemoveVoter(ctx, 4, [16]byte{0xee}); !errors.Is(err, ErrVoterNotFound) {
		t.Fatalf("RemoveVoter with the wrong directory id: %v, want ErrVoterNotFound", err)
	}

	// The joined nodes know the voters from their own log after a restart.
	c.restart(four)
	c.waitVoters(1, 2, 3, 4, 5)

	// Shrink back to three by removing two original voters, the leader
	// among them if it is one.
	leader = c.waitLeader()
	var remove []int32
	if leader.id <= 3 {
		remove = append(remove, leader.id)
	}
	for _, id := range []int32{1, 2, 3} {
		if len(remove) < 2 && !slices.Contains(remove, id) {
			remove = append(remove, id)
		}
	}
	for _, id := range remove {
		c.retryChange(fmt.Sprintf("remove voter %d", id), func(ctx context.Context, n *testNode) error {
			dir := [16]byte{}
			if id > 3 {
				dir = c.member(int(id - 1)).DirectoryID
			}
			err := n.q.RemoveVoter(ctx, id, dir)
			if errors.Is(err, ErrVoterNotFound) {
				return nil // removed by an attempt whose answer was lost
			}
			return err
		})
		// A removed node hears from nobody; stop it.
		c.stop(int(id - 1))
	}
	var want []int32
	for _, id := range []int32{1, 2, 3, 4, 5} {
		if !slices.Contains(remove, id) {
			want = append(want, id)
		}
	}
	c.waitVoters(want...)
	c.propose("after shrink")
	final := c.waitSameHistory(c.nodes[four])
	for _, h := range history {
		if !slices.Contains(final, h) {
			t.Fatalf("entry %q lost: %v", h, final)
		}
	}
	// Restarting every remaining node keeps the three voters.
	for _, id := range want {
		c.restart(int(id - 1))
	}
	c.waitLeader()
	c.waitVoters(want...)
}

// A snapshot file of version 0 (voter ids only) is still read: its voters
// take their endpoints from controller.quorum.voters.
func TestSnapshotVersion0StillRead(t *testing.T) {
	var b []byte
	b = append(b, snapshotMagic...)
	b = binary.BigEndian.AppendUint16(b, snapshotVersion0)
	b = binary.BigEndian.AppendUint64(b, 42)
	b = binary.BigEndian.AppendUint64(b, 3)
	b = binary.BigEndian.AppendUint32(b, 3)
	for _, id := range []uint32{1, 2, 3} {
		b = binary.BigEndian.AppendUint32(b, id)
	}
	b = binary.BigEndian.AppendUint64(b, 5)
	b = append(b, "state"...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	snap, err := decodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.GetMetadata().GetConfState().GetVoters(); !slices.Equal(got, []uint64{1, 2, 3}) || snap.GetMetadata().GetIndex() != 42 {
		t.Fatalf("version 0 snapshot: voters %v index %d", got, snap.GetMetadata().GetIndex())
	}
	voters, data, err := decodeSnapshotPayload(snap.GetData())
	if err != nil || string(data) != "state" || voters.KRaftVersion != 0 {
		t.Fatalf("payload: %+v %q %v", voters, data, err)
	}
	filled := voters.fillEndpoints(staticVoterSet([]Voter{{1, "a:1"}, {2, "b:2"}, {3, "c:3"}}, DefaultListenerName))
	if m, _ := filled.Member(2); m.Addr() != "b:2" {
		t.Fatalf("voter 2 endpoint %q, want b:2 from controller.quorum.voters", m.Addr())
	}
	// A version 1 file of the same snapshot round-trips.
	again, err := decodeSnapshot(encodeSnapshot(snap))
	if err != nil || !bytes.Equal(again.GetData(), snap.GetData()) {
		t.Fatalf("version 1 round trip: %v", err)
	}
}

// VoterSet transitions: with/without keep ids sorted and unique, and the
// raft configuration splits voters from learners.
func TestVoterSetTransitions(t *testing.T) {
	s := staticVoterSet([]Voter{{3, "c:3"}, {1, "a:1"}}, DefaultListenerName)
	s = s.with(Member{ID: 2, Learner: true, Endpoints: []Endpoint{{"CONTROLLER", "b", 2}}})
	if got := s.Voters(); !slices.Equal(got, []uint64{1, 3}) {
		t.Fatalf("voters %v", got)
	}
	if got := s.Learners(); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("learners %v", got)
	}
	promoted := s.with(Member{ID: 2, Endpoints: []Endpoint{{"CONTROLLER", "b", 2}}})
	if !promoted.IsVoter(2) || s.IsVoter(2) {
		t.Fatal("with must copy, and promote")
	}
	removed := promoted.without(1)
	if got := removed.confState().GetVoters(); !slices.Equal(got, []uint64{2, 3}) || !promoted.IsVoter(1) {
		t.Fatalf("without: %v", got)
	}
	back, err := decodeVoterSet(appendVoterSet(nil, removed))
	if err != nil || !slices.Equal(back.Voters(), removed.Voters()) {
		t.Fatalf("round trip %+v %v", back, err)
	}
}
