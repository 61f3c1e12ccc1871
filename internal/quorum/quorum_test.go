package quorum

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

func TestThreeVotersReplicateInOrder(t *testing.T) {
	c := newCluster(t, 3, nil)
	leader := c.waitLeader()
	leaderID, epoch := leader.q.Leader()
	if epoch <= 0 {
		t.Fatalf("leader epoch %d, want > 0", epoch)
	}

	// Followers refuse proposals and name the leader.
	for _, n := range c.running() {
		if n == leader {
			continue
		}
		_, err := n.q.Propose(context.Background(), [][]byte{[]byte("x")})
		if !errors.Is(err, ErrNotLeader) {
			t.Fatalf("follower %d Propose: %v, want ErrNotLeader", n.id, err)
		}
		if id, _ := n.q.Leader(); id != leaderID {
			t.Fatalf("follower %d names leader %d, want %d", n.id, id, leaderID)
		}
	}

	var offsets []int64
	for i := range 10 {
		offsets = append(offsets, c.propose(fmt.Sprintf("v%d", i), fmt.Sprintf("w%d", i)))
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] <= offsets[i-1] {
			t.Fatalf("offsets %v do not increase", offsets)
		}
	}
	// Proposals from many goroutines at once all commit, in one order.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				c.propose(fmt.Sprintf("g%d-%d", g, i))
			}
		})
	}
	wg.Wait()
	leader = c.waitLeader()
	leaderID, _ = leader.q.Leader()
	history := c.waitSameHistory(leader)
	if len(history) != 50 {
		t.Fatalf("applied %d entries, want 50: %v", len(history), history)
	}
	if want := fmt.Sprintf("%d:v0,w0", offsets[0]); history[0] != want {
		t.Fatalf("first entry %q, want %q", history[0], want)
	}

	// The leader sees every voter caught up.
	waitFor(t, 5*time.Second, "every voter's log end offset to reach the high watermark", func() bool {
		st := leader.q.Status()
		if st.LeaderID != leaderID || st.HighWatermark < offsets[len(offsets)-1]+1 || len(st.Voters) != 3 {
			return false
		}
		for _, v := range st.Voters {
			if v.LogEndOffset != st.LogEndOffset || v.LastContact.IsZero() {
				return false
			}
		}
		return true
	})
	st := leader.q.Status()
	t.Logf("status: leader %d epoch %d high watermark %d voters %+v", st.LeaderID, st.Epoch, st.HighWatermark, st.Voters)
}

func TestLeaderFailover(t *testing.T) {
	c := newCluster(t, 3, nil)
	old := c.waitLeader()
	mustPropose(t, old, "before")
	c.waitSameHistory(old)
	_, oldEpoch := old.q.Leader()
	oldIndex := slices.Index(c.nodes, old)

	stopped := time.Now()
	c.stop(oldIndex)
	leader, offset := c.proposeUntilCommitted("after", 10*time.Second)
	t.Logf("leader failover: node %d stopped, node %d committed offset %d %v later",
		old.id, leader.id, offset, time.Since(stopped))
	if _, epoch := leader.q.Leader(); epoch <= oldEpoch {
		t.Fatalf("new leader's epoch %d, old %d", epoch, oldEpoch)
	}

	// The old leader comes back as a follower and catches up.
	c.start(oldIndex, nil)
	mustPropose(t, leader, "rejoined")
	history := c.waitSameHistory(leader)
	if got := history[len(history)-1]; !strings.HasSuffix(got, ":rejoined") {
		t.Fatalf("last entry %q, want rejoined", got)
	}
}

func TestRestartReappliesAndCatchesUp(t *testing.T) {
	c := newCluster(t, 3, nil)
	leader := c.waitLeader()
	for i := range 5 {
		mustPropose(t, leader, fmt.Sprintf("a%d", i))
	}
	c.waitSameHistory(leader)

	// A follower misses entries while down, then replays its own log and
	// fetches the rest.
	follower := slices.IndexFunc(c.nodes, func(n *testNode) bool { return n != leader && n.q != nil })
	c.stop(follower)
	for i := range 5 {
		mustPropose(t, leader, fmt.Sprintf("b%d", i))
	}
	c.start(follower, nil)
	if got := len(c.waitSameHistory(leader)); got != 10 {
		t.Fatalf("applied %d entries, want 10", got)
	}

	// The whole quorum restarts from its directories.
	want := leader.sm.history()
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.start(i, nil)
	}
	leader = c.waitLeader()
	waitFor(t, 10*time.Second, "every node to re-apply its log", func() bool {
		for _, n := range c.running() {
			if h := n.sm.history(); len(h) < len(want) || !slices.Equal(h[:len(want)], want) {
				return false
			}
		}
		return true
	})
	mustPropose(t, leader, "after-restart")
	if got := len(c.waitSameHistory(leader)); got != len(want)+1 {
		t.Fatalf("applied %d entries, want %d", got, len(want)+1)
	}
}

func TestMinorityCannotCommit(t *testing.T) {
	c := newCluster(t, 3, nil)
	leader := c.waitLeader()
	mustPropose(t, leader, "committed")
	c.waitSameHistory(leader)
	for i, n := range c.nodes {
		if n != leader {
			c.stop(i)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := leader.q.Propose(ctx, [][]byte{[]byte("lost")})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Propose without a quorum: %v, want a deadline or ErrNotLeader", err)
	}
	// Check quorum: the lone leader steps down within an election timeout.
	waitFor(t, 5*time.Second, "the isolated leader to step down", func() bool {
		id, _ := leader.q.Leader()
		return id != leader.id
	})
	_, epoch := leader.q.Leader()
	// Pre-vote: for many election timeouts it neither leads again nor
	// inflates its epoch with failed elections.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		id, e := leader.q.Leader()
		if id == leader.id || leader.q.isLeader() {
			t.Fatalf("isolated node thinks it leads (epoch %d)", e)
		}
		if e != epoch {
			t.Fatalf("isolated node's epoch moved from %d to %d", epoch, e)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := leader.q.Propose(ctx, [][]byte{[]byte("lost")}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Propose after stepping down: %v, want ErrNotLeader", err)
	}
	if got := leader.sm.history(); len(got) != 1 {
		t.Fatalf("applied %v, want only the committed entry", got)
	}
	if st := leader.q.Status(); st.LeaderID != -1 {
		t.Fatalf("status names leader %d", st.LeaderID)
	}
}

func TestSnapshotCatchUp(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) {
		cfg.SnapshotIntervalBytes = 4 << 10
		cfg.MaxProposalBytes = 4 << 10
		cfg.SegmentBytes = 1 // raised to the smallest that holds one proposal
	})
	leader := c.waitLeader()
	mustPropose(t, leader, "first")
	c.waitSameHistory(leader)
	lagging := slices.IndexFunc(c.nodes, func(n *testNode) bool { return n != leader })
	c.stop(lagging)

	value := string(make([]byte, 500))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 60 {
				c.propose(fmt.Sprintf("%d-%d-%s", g, i, value))
			}
		})
	}
	wg.Wait()
	leader = c.waitLeader()
	st := leader.q.Status()
	if st.LogStartOffset <= 2 {
		t.Fatalf("leader's log starts at %d: no snapshot compacted it", st.LogStartOffset)
	}
	files, err := listSnapshots(leader.q.cfg.FS, leader.q.storage.dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("leader snapshots %v, %v: want exactly one", files, err)
	}

	// The lagging node's log ends below the leader's log start: only a
	// snapshot can catch it up.
	c.start(lagging, nil)
	want := c.waitSameHistory(leader)
	if len(want) != 241 {
		t.Fatalf("applied %d entries, want 241", len(want))
	}
	if n := c.nodes[lagging].sm.restoreCount(); n == 0 {
		t.Fatalf("lagging node caught up without a snapshot")
	}

	// Restarted again, it restores from its own snapshot file.
	c.restart(lagging)
	if n := c.nodes[lagging].sm.restoreCount(); n != 1 {
		t.Fatalf("restarted node restored %d times at start, want 1", n)
	}
	c.waitSameHistory(leader)
}

func TestSingleVoter(t *testing.T) {
	c := newCluster(t, 1, nil)
	n := c.nodes[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.q.WaitForLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if id, epoch := n.q.Leader(); id != 1 || epoch < 1 {
		t.Fatalf("Leader() = %d, %d", id, epoch)
	}
	var last int64
	for i := range 5 {
		last = mustPropose(t, n, fmt.Sprintf("v%d", i))
	}
	if st := n.q.Status(); st.HighWatermark != last+1 || st.LogEndOffset < last+1 || st.Voters[0].LogEndOffset != st.LogEndOffset {
		t.Fatalf("status %+v after offset %d", st, last)
	}
	want := n.sm.history()

	c.restart(0)
	waitFor(t, 5*time.Second, "the restarted node to re-apply its log", func() bool {
		return slices.Equal(n.sm.history(), want)
	})
	c.waitLeader()
	if next := mustPropose(t, n, "after-restart"); next <= last {
		t.Fatalf("offset %d after restart, want > %d", next, last)
	}
}

func TestProposeValidation(t *testing.T) {
	c := newCluster(t, 1, func(cfg *Config) { cfg.MaxProposalBytes = 100 })
	n := c.nodes[0]
	c.waitLeader()
	if _, err := n.q.Propose(context.Background(), nil); err == nil {
		t.Fatal("empty proposal accepted")
	}
	if _, err := n.q.Propose(context.Background(), [][]byte{make([]byte, 200)}); !errors.Is(err, ErrProposalTooLarge) {
		t.Fatalf("oversized proposal: %v", err)
	}
}

func TestStateMachineFailureStopsQuorum(t *testing.T) {
	c := newCluster(t, 1, nil)
	n := c.nodes[0]
	c.waitLeader()
	mustPropose(t, n, "ok")
	n.sm.mu.Lock()
	n.sm.applyErr = errors.New("boom")
	n.sm.mu.Unlock()
	_, err := n.q.Propose(context.Background(), [][]byte{[]byte("fails")})
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Propose with a failing state machine: %v, want ErrStopped", err)
	}
	<-n.q.Done()
	if err := n.q.Err(); err == nil || !errors.Is(err, n.sm.applyErr) {
		t.Fatalf("Err() = %v", err)
	}
	if err := n.q.Stop(); err == nil {
		t.Fatal("Stop after a failure returned nil")
	}
	n.q = nil
}

// BenchmarkPropose measures committed proposals of one 100-byte value, one
// caller at a time and many at once (which share fsyncs), beside the
// reference every serial proposal pays at least once: appending 200 bytes to
// a file and fsyncing it.
func BenchmarkPropose(b *testing.B) {
	b.Run("reference=append+fsync", func(b *testing.B) {
		f, err := vfs.Default.Create(filepath.Join(b.TempDir(), "reference"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 200)
		for b.Loop() {
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, voters := range []int{1, 3} {
		b.Run(fmt.Sprintf("voters=%d", voters), func(b *testing.B) {
			c := newCluster(b, voters, nil)
			leader := c.waitLeader()
			value := [][]byte{make([]byte, 100)}
			b.Run("serial", func(b *testing.B) {
				for b.Loop() {
					if _, err := leader.q.Propose(context.Background(), value); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.SetParallelism(16)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := leader.q.Propose(context.Background(), value); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}
