package quorum

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
)

// testTransport is a transport whose received messages and reports land in
// channels.
type testTransport struct {
	*transport
	received chan *raftpb.Message
	reports  chan report
}

func newTestTransport(t *testing.T, id int32, voters []Voter, ln net.Listener, tweak func(*Config)) *testTransport {
	t.Helper()
	cfg := Config{NodeID: id, Voters: voters, Listener: ln, Dir: "unused", Logger: testLogger(t)}
	fastConfig(&cfg)
	if tweak != nil {
		tweak(&cfg)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tt := &testTransport{received: make(chan *raftpb.Message, 1024), reports: make(chan report, 1024)}
	tt.transport = newTransport(cfg, ln, func(m *raftpb.Message) bool {
		select {
		case tt.received <- m:
			return true
		default:
			return false
		}
	}, tt.reports)
	tt.setPeers(staticVoterSet(voters, cfg.ListenerName).Members)
	t.Cleanup(func() { tt.close() })
	return tt
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func heartbeat(from, to uint64) *raftpb.Message {
	return &raftpb.Message{Type: new(raftpb.MsgHeartbeat), From: new(from), To: new(to), Term: new(uint64(1))}
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func TestTransportDeliversAndRejectsBadInput(t *testing.T) {
	ln1, ln2 := listen(t), listen(t)
	voters := []Voter{{1, ln1.Addr().String()}, {2, ln2.Addr().String()}}
	t1 := newTestTransport(t, 1, voters, ln1, nil)
	t2 := newTestTransport(t, 2, voters, ln2, nil)

	if dropped := t1.send([]*raftpb.Message{heartbeat(1, 2)}); len(dropped) != 0 {
		t.Fatalf("dropped %v", dropped)
	}
	if m := receive(t, t2.received, "a heartbeat"); m.GetType() != raftpb.MsgHeartbeat || m.GetFrom() != 1 {
		t.Fatalf("received %v", m)
	}
	if t2.lastContact(1).IsZero() {
		t.Fatal("no last contact recorded for node 1")
	}

	frame := func(m *raftpb.Message) []byte {
		b, _ := proto.Marshal(m)
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	good := appendPreamble(nil, 1, 2)
	cases := map[string][]byte{
		"bad magic":            append([]byte("XXXX"), good[4:]...),
		"bad version":          append(append([]byte(preambleMagic), 0, 9), good[6:]...),
		"addressed elsewhere":  appendPreamble(nil, 1, 3),
		"unknown sender":       appendPreamble(nil, 9, 2),
		"sender is receiver":   appendPreamble(nil, 2, 2),
		"empty frame":          append(good, 0, 0, 0, 0),
		"oversized frame":      append(good, 0x7f, 0xff, 0xff, 0xff),
		"not protobuf":         append(good, 0, 0, 0, 3, 0xff, 0xff, 0xff),
		"spoofed sender":       append(good, frame(heartbeat(3, 2))...),
		"proposal from a peer": append(good, frame(&raftpb.Message{Type: new(raftpb.MsgProp), From: new(uint64(1)), To: new(uint64(2))})...),
		"local message":        append(good, frame(&raftpb.Message{Type: new(raftpb.MsgHup), From: new(uint64(1)), To: new(uint64(2))})...),
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln2.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(input); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) || err == nil {
				t.Fatalf("connection still open after bad input: %v", err)
			}
		})
	}
	select {
	case m := <-t2.received:
		t.Fatalf("bad input delivered %v", m)
	default:
	}
	// The receiver keeps serving its real peer.
	t1.send([]*raftpb.Message{heartbeat(1, 2)})
	receive(t, t2.received, "a heartbeat after bad input")
}

// A peer that accepts a connection and never reads must not block the
// sender: messages beyond the queue are dropped and reported.
func TestTransportDeadPeerNeverBlocks(t *testing.T) {
	blackHole := listen(t)
	defer blackHole.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := blackHole.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c) // never read
		}
	}()
	ln1 := listen(t)
	voters := []Voter{{1, ln1.Addr().String()}, {2, blackHole.Addr().String()}}
	t1 := newTestTransport(t, 1, voters, ln1, func(cfg *Config) {
		cfg.SendQueueMessages, cfg.RequestTimeoutMs = 8, 200
	})

	big := &raftpb.Message{Type: new(raftpb.MsgApp), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(1)),
		Entries: []*raftpb.Entry{{Index: new(uint64(1)), Term: new(uint64(1)), Data: make([]byte, 256<<10)}}}
	snap := &raftpb.Message{Type: new(raftpb.MsgSnap), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(1)),
		Snapshot: &raftpb.Snapshot{Data: []byte("s"), Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(5)), Term: new(uint64(1))}}}
	dropped := 0
	for range 200 {
		dropped += len(t1.send([]*raftpb.Message{big}))
	}
	if dropped == 0 {
		t.Fatal("a peer that never reads took 200 large messages: nothing was dropped")
	}
	// The writer times out, gives up the connection and reports the peer;
	// a snapshot caught in that is reported failed.
	waitFor(t, 10*time.Second, "a snapshot failure report", func() bool {
		t1.send([]*raftpb.Message{big, big, snap, big})
		for {
			select {
			case r := <-t1.reports:
				if r.to == 2 && r.snapshot && r.failed {
					return true
				}
			default:
				return false
			}
		}
	})
}

func TestTransportReportsUnreachablePeer(t *testing.T) {
	closed := listen(t)
	addr := closed.Addr().String()
	closed.Close()
	ln1 := listen(t)
	t1 := newTestTransport(t, 1, []Voter{{1, ln1.Addr().String()}, {2, addr}}, ln1, nil)
	t1.send([]*raftpb.Message{heartbeat(1, 2)})
	if r := receive(t, t1.reports, "an unreachable report"); r.to != 2 || r.snapshot {
		t.Fatalf("report %+v", r)
	}
}

// readStream stops at the end of its input; used by the fuzz target.
func readAll(b []byte) (n int, err error) {
	err = readStream(&byteReader{b: b}, 2, 1<<20, func(id uint64) bool { return id == 1 || id == 3 }, func() {}, func(*raftpb.Message) { n++ })
	return n, err
}

type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// TestTransportDialSetsUserTimeout: an outbound connection fails once what
// was written to it stays unacknowledged for
// controller.quorum.request.timeout.ms, so a peer cut off by a partition is
// redialed instead of waiting out the kernel's retransmission backoff.
func TestTransportDialSetsUserTimeout(t *testing.T) {
	ln1, ln2 := listen(t), listen(t)
	voters := []Voter{{1, ln1.Addr().String()}, {2, ln2.Addr().String()}}
	const requestTimeoutMs = 1234
	t1 := newTestTransport(t, 1, voters, ln1, func(cfg *Config) { cfg.RequestTimeoutMs = requestTimeoutMs })
	t2 := newTestTransport(t, 2, voters, ln2, nil)
	t1.send([]*raftpb.Message{heartbeat(1, 2)})
	receive(t, t2.received, "a heartbeat")

	// Node 2 never sent anything, so node 1's only connection is its own.
	t1.mu.Lock()
	var outbound []net.Conn
	for c := range t1.mu.conns {
		outbound = append(outbound, c)
	}
	t1.mu.Unlock()
	if len(outbound) != 1 {
		t.Fatalf("node 1 has %d connections, want its one outbound", len(outbound))
	}
	raw, err := outbound[0].(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var getErr error
	if err := raw.Control(func(fd uintptr) {
		got, getErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	}); err != nil {
		t.Fatal(err)
	}
	if getErr != nil {
		t.Fatal(getErr)
	}
	if got != requestTimeoutMs {
		t.Errorf("TCP_USER_TIMEOUT %d ms, want controller.quorum.request.timeout.ms %d", got, requestTimeoutMs)
	}
}

// TestRedialBackoff: the wait after failed dials doubles from
// controller.quorum.retry.backoff.ms up to its cap, counts from when the
// failed dial began, and a connection resets it.
func TestRedialBackoff(t *testing.T) {
	const ms = time.Millisecond
	b := newRedialBackoff(20*ms, 100*ms)
	start := time.Unix(1000, 0)
	if !b.mayDial(start) {
		t.Fatal("the first dial must not wait")
	}
	for i, want := range []time.Duration{20 * ms, 40 * ms, 80 * ms, 100 * ms, 100 * ms} {
		b.failed(start)
		if b.mayDial(start.Add(want-ms)) || !b.mayDial(start.Add(want)) {
			t.Errorf("failure %d: the next dial should start %v after the failed one began", i+1, want)
		}
		if b.failures != i+1 {
			t.Errorf("failure %d counted as %d", i+1, b.failures)
		}
	}
	// A dial that ran into a timeout longer than the backoff already waited.
	b.failed(start)
	if !b.mayDial(start.Add(2 * time.Second)) {
		t.Error("a dial that took 2 s to fail is followed by a further wait")
	}
	b.succeeded()
	if b.failures != 0 || !b.mayDial(start) {
		t.Errorf("after a connection: %d failures, may dial %v", b.failures, b.mayDial(start))
	}
	b.failed(start)
	if b.mayDial(start.Add(19*ms)) || !b.mayDial(start.Add(20*ms)) {
		t.Error("after a connection the backoff does not start again from its minimum")
	}
}
