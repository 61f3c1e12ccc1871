package quorum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSM is a StateMachine that records what it applied and checks that
// offsets only grow.
type testSM struct {
	mu         sync.Mutex
	applied    []appliedEntry
	lastOffset int64
	restores   int
	applyErr   error
}

type appliedEntry struct {
	Offset int64
	Values []string
}

func newTestSM() *testSM { return &testSM{lastOffset: -1} }

func (s *testSM) Apply(offset int64, values [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.applyErr != nil {
		return s.applyErr
	}
	if offset <= s.lastOffset {
		return fmt.Errorf("testSM: offset %d applied after %d", offset, s.lastOffset)
	}
	e := appliedEntry{Offset: offset}
	for _, v := range values {
		e.Values = append(e.Values, string(v))
	}
	s.applied = append(s.applied, e)
	s.lastOffset = offset
	return nil
}

func (s *testSM) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(s.applied)
}

func (s *testSM) Restore(b []byte, offset int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var applied []appliedEntry
	if err := json.Unmarshal(b, &applied); err != nil {
		return err
	}
	if n := len(applied); n > 0 && applied[n-1].Offset > offset {
		return fmt.Errorf("testSM: snapshot at offset %d holds offset %d", offset, applied[n-1].Offset)
	}
	s.applied, s.lastOffset = applied, offset
	s.restores++
	return nil
}

// history renders what was applied, one "offset:values" per entry.
func (s *testSM) history() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.applied))
	for i, e := range s.applied {
		out[i] = fmt.Sprintf("%d:%s", e.Offset, strings.Join(e.Values, ","))
	}
	return out
}

func (s *testSM) restoreCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restores
}

// testLogger writes warnings and errors to the test log (everything with
// SAMSA_TEST_LOG=debug).
func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("SAMSA_TEST_LOG") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testNode is one in-process controller.
type testNode struct {
	id   int32
	dir  string
	addr string
	sm   *testSM
	q    *Quorum // nil while stopped
	// joined nodes start with no voters, knowing the first voters as
	// peers (controller.quorum.bootstrap.servers), and are added with
	// AddVoter.
	joined bool
}

// testCluster runs in-process controllers on 127.0.0.1.
type testCluster struct {
	t      testing.TB
	voters []Voter
	nodes  []*testNode
	tweak  func(*Config)
}

// fastConfig: 10 ms ticks, elections after 200-400 ms (fsync stalls on a
// shared test machine reach tens of milliseconds).
func fastConfig(c *Config) {
	c.TickMs, c.ElectionTicks, c.HeartbeatTicks = 10, 20, 2
	c.RetryBackoffMs, c.RetryBackoffMaxMs = 5, 50
}

// newCluster binds every listener first, so each voter knows the others'
// addresses, then starts n controllers.
func newCluster(t testing.TB, n int, tweak func(*Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, tweak: tweak}
	listeners := make([]net.Listener, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners[i] = ln
		c.voters = append(c.voters, Voter{ID: int32(i + 1), Addr: ln.Addr().String()})
		c.nodes = append(c.nodes, &testNode{id: int32(i + 1), dir: t.TempDir(), addr: ln.Addr().String()})
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	for i := range n {
		c.start(i, listeners[i])
	}
	return c
}

func (c *testCluster) config(i int) Config {
	cfg := Config{NodeID: c.nodes[i].id, Voters: c.voters, Dir: c.nodes[i].dir, Logger: testLogger(c.t)}
	if c.nodes[i].joined {
		cfg.Voters, cfg.Peers = nil, staticVoterSet(c.voters, DefaultListenerName).Members
	}
	fastConfig(&cfg)
	if c.tweak != nil {
		c.tweak(&cfg)
	}
	return cfg
}

// start starts node i on ln (or on its address when ln is nil) with a fresh
// state machine, as a restarted process would.
func (c *testCluster) start(i int, ln net.Listener) {
	c.t.Helper()
	n := c.nodes[i]
	if ln == nil {
		// The port was ours a moment ago; poll in case the kernel is slow
		// to release it.
		deadline := time.Now().Add(5 * time.Second)
		for {
			var err error
			if ln, err = net.Listen("tcp", n.addr); err == nil {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("relisten on %s: %v", n.addr, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	cfg := c.config(i)
	cfg.Listener = ln
	n.sm = newTestSM()
	q, err := Start(cfg, n.sm)
	if err != nil {
		ln.Close()
		c.t.Fatalf("start node %d: %v", n.id, err)
	}
	n.q = q
}

func (c *testCluster) stop(i int) {
	n := c.nodes[i]
	if n.q == nil {
		return
	}
	if err := n.q.Stop(); err != nil {
		c.t.Errorf("stop node %d: %v", n.id, err)
	}
	n.q = nil
}

func (c *testCluster) restart(i int) {
	c.t.Helper()
	c.stop(i)
	c.start(i, nil)
}

// running returns the running nodes.
func (c *testCluster) running() []*testNode {
	var out []*testNode
	for _, n := range c.nodes {
		if n.q != nil {
			out = append(out, n)
		}
	}
	return out
}

// waitLeader waits until one running node leads and every running node
// agrees, and returns it.
func (c *testCluster) waitLeader() *testNode {
	c.t.Helper()
	var leader *testNode
	waitFor(c.t, 10*time.Second, "one agreed leader", func() bool {
		leader = nil
		var want int32 = -1
		for _, n := range c.running() {
			id, _ := n.q.Leader()
			if id < 0 || (want >= 0 && id != want) {
				return false
			}
			want = id
			if n.q.isLeader() {
				leader = n
			}
		}
		return leader != nil && leader.id == want
	})
	return leader
}

// waitSameHistory waits until every running node applied what want applied.
func (c *testCluster) waitSameHistory(want *testNode) []string {
	c.t.Helper()
	var history []string
	waitFor(c.t, 10*time.Second, "every node to apply the same entries", func() bool {
		history = want.sm.history()
		for _, n := range c.running() {
			if !slices.Equal(n.sm.history(), history) {
				return false
			}
		}
		return true
	})
	return history
}

// mustPropose proposes values on n and returns the offset.
func mustPropose(t testing.TB, n *testNode, values ...string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw := make([][]byte, len(values))
	for i, v := range values {
		raw[i] = []byte(v)
	}
	offset, err := n.q.Propose(ctx, raw)
	if err != nil {
		t.Fatalf("propose %v on node %d: %v", values, n.id, err)
	}
	return offset
}

// propose proposes values on whichever node leads, retrying while
// leadership moves (ErrNotLeader means the entry never committed), and
// returns the offset.
func (c *testCluster) propose(values ...string) int64 {
	c.t.Helper()
	raw := make([][]byte, len(values))
	for i, v := range values {
		raw[i] = []byte(v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range c.running() {
			if !n.q.isLeader() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			offset, err := n.q.Propose(ctx, raw)
			cancel()
			if err == nil {
				return offset
			}
			if !errors.Is(err, ErrNotLeader) {
				c.t.Fatalf("propose %v on node %d: %v", values, n.id, err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("propose %v: no leader committed it", values)
	return -1
}

// proposeUntilCommitted retries a proposal on whichever node leads until one
// commits.
func (c *testCluster) proposeUntilCommitted(value string, timeout time.Duration) (*testNode, int64) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, n := range c.running() {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			offset, err := n.q.Propose(ctx, [][]byte{[]byte(value)})
			cancel()
			if err == nil {
				return n, offset
			}
			if !errors.Is(err, ErrNotLeader) && !errors.Is(err, context.DeadlineExceeded) {
				c.t.Fatalf("propose on node %d: %v", n.id, err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("no proposal committed within %v", timeout)
	return nil, -1
}
