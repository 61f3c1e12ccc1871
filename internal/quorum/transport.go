package quorum

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Wire layout (see the package doc).
const (
	preambleMagic   = "SQRM"
	preambleVersion = 0
	preambleBytes   = 4 + 2 + 4 + 4
	frameHeaderSize = 4
	// frameBufferBytes is the reusable read buffer and the write buffer of a
	// connection; larger frames get their own allocation.
	frameBufferBytes = 64 << 10
	// maxMessagesPerWrite bounds the messages written before one flush.
	maxMessagesPerWrite = 256
	// minIdleTimeout is the least time an inbound connection may stay silent
	// before it is closed (a leader heartbeats far more often).
	minIdleTimeout = 30 * time.Second
	// bytesPerWriteSecond is the slowest link a large write is allowed for,
	// on top of the request timeout.
	bytesPerWriteSecond = 10 << 20
)

// report is what a peer goroutine tells the raft loop about a send.
type report struct {
	to uint64
	// snapshot is set for the outcome of a MsgSnap; failed says how it went.
	snapshot, failed bool
}

// transport carries raft messages between the voters over TCP.
type transport struct {
	self           uint64
	logger         *slog.Logger
	maxFrameBytes  int
	requestTimeout time.Duration
	idleTimeout    time.Duration
	backoffMin     time.Duration
	backoffMax     time.Duration
	// dialControl prepares an outbound socket before it connects (see
	// userTimeoutControl).
	dialControl func(network, address string, raw syscall.RawConn) error
	// dialTLS is Config.DialTLS.
	dialTLS  *tls.Config
	listener net.Listener
	// sendQueueMessages bounds each peer's queue.
	sendQueueMessages int
	// deliver hands a received message to the raft loop without blocking; it
	// returns false when the message was dropped.
	deliver func(*raftpb.Message) bool
	// reports goes to the raft loop.
	reports chan<- report

	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		// conns are the open connections, closed by close.
		conns   map[net.Conn]struct{}
		inbound int
		closed  bool
		// peers holds every other member of the voter set (and known
		// peers), replaced by setPeers as the voter set changes.
		peers map[uint64]*peer
	}
}

// peer is another voter and the queue of messages to it.
type peer struct {
	id    uint64
	addr  string
	queue chan *raftpb.Message
	// ctx ends the peer's goroutine when it leaves the voter set.
	ctx    context.Context
	cancel context.CancelFunc
	// lastContactNanos is when a message from the peer last arrived (Unix
	// nanoseconds, 0 for never).
	lastContactNanos atomic.Int64
}

func newTransport(cfg Config, listener net.Listener, deliver func(*raftpb.Message) bool, reports chan<- report) *transport {
	electionTimeout := time.Duration(cfg.TickMs*cfg.ElectionTicks) * time.Millisecond
	t := &transport{
		self:              uint64(cfg.NodeID),
		logger:            cfg.Logger,
		maxFrameBytes:     cfg.maxFrameBytes(),
		requestTimeout:    time.Duration(cfg.RequestTimeoutMs) * time.Millisecond,
		idleTimeout:       max(minIdleTimeout, 10*electionTimeout),
		backoffMin:        time.Duration(cfg.RetryBackoffMs) * time.Millisecond,
		backoffMax:        time.Duration(cfg.RetryBackoffMaxMs) * time.Millisecond,
		dialControl:       userTimeoutControl(time.Duration(cfg.RequestTimeoutMs) * time.Millisecond),
		dialTLS:           cfg.DialTLS,
		listener:          listener,
		sendQueueMessages: cfg.SendQueueMessages,
		deliver:           deliver,
		reports:           reports,
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.mu.conns = make(map[net.Conn]struct{})
	t.mu.peers = make(map[uint64]*peer)
	t.wg.Add(1)
	go t.acceptLoop()
	return t
}

// setPeers makes members (other than this node) the peers: new ones get a
// sender goroutine, ones whose address changed a new one, and ones no
// longer listed are stopped. The time of last contact carries over.
func (t *transport) setPeers(members []Member) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return
	}
	keep := map[uint64]bool{}
	for _, m := range members {
		id, addr := uint64(m.ID), m.Addr()
		if id == t.self || addr == "" {
			continue
		}
		keep[id] = true
		old := t.mu.peers[id]
		if old != nil && old.addr == addr {
			continue
		}
		p := &peer{id: id, addr: addr, queue: make(chan *raftpb.Message, t.sendQueueMessages)}
		p.ctx, p.cancel = context.WithCancel(t.ctx)
		if old != nil {
			old.cancel()
			p.lastContactNanos.Store(old.lastContactNanos.Load())
		}
		t.mu.peers[id] = p
		t.wg.Add(1)
		go t.runPeer(p)
	}
	for id, p := range t.mu.peers {
		if !keep[id] {
			p.cancel()
			delete(t.mu.peers, id)
		}
	}
}

// peer returns the peer with id, or nil.
func (t *transport) peer(id uint64) *peer {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.peers[id]
}

// send queues messages without blocking and returns those that did not fit
// or have no peer; the caller reports them to raft.
func (t *transport) send(msgs []*raftpb.Message) (dropped []*raftpb.Message) {
	for _, m := range msgs {
		p := t.peer(m.GetTo())
		if p == nil {
			dropped = append(dropped, m)
			continue
		}
		select {
		case p.queue <- m:
		default:
			dropped = append(dropped, m)
		}
	}
	return dropped
}

// lastContact is when a message from peer id last arrived.
func (t *transport) lastContact(id uint64) time.Time {
	p := t.peer(id)
	if p == nil {
		return time.Time{}
	}
	if n := p.lastContactNanos.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// close stops every goroutine and closes the listener and connections.
func (t *transport) close() error {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.closed = true
	conns := t.mu.conns
	t.mu.conns = nil
	t.mu.Unlock()
	t.cancel()
	err := t.listener.Close()
	for c := range conns {
		c.Close()
	}
	t.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// track registers an open connection; it returns false when the transport is
// closed or, for an inbound one, when there are too many.
func (t *transport) track(c net.Conn, inbound bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed || (inbound && t.mu.inbound >= maxInboundConnectionsPerVoter*(len(t.mu.peers)+1)) {
		return false
	}
	t.mu.conns[c] = struct{}{}
	if inbound {
		t.mu.inbound++
	}
	return true
}

func (t *transport) untrack(c net.Conn, inbound bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.mu.conns[c]; ok {
		delete(t.mu.conns, c)
		if inbound {
			t.mu.inbound--
		}
	}
	c.Close()
}

// report sends r to the raft loop. Snapshot outcomes must arrive (raft waits
// for them), so they block until the loop takes them; the rest are dropped
// when the loop is behind.
func (t *transport) report(r report) {
	if r.snapshot {
		select {
		case t.reports <- r:
		case <-t.ctx.Done():
		}
		return
	}
	select {
	case t.reports <- r:
	default:
	}
}

// redialBackoff spaces the dials to a peer that cannot be reached: after
// the n-th failed dial in a row the next waits min(backoffMin*2^(n-1),
// backoffMax), counted from when the failed dial began, so a dial that ran
// into its timeout is followed by no further wait. It takes the time as an
// argument.
type redialBackoff struct {
	backoffMin, backoffMax time.Duration
	// failures counts the failed dials since the last success.
	failures int
	// next is the wait after the next failure.
	// Invariant: backoffMin <= next <= backoffMax.
	next time.Duration
	// retryAt is when the next dial may start.
	retryAt time.Time
}

func newRedialBackoff(backoffMin, backoffMax time.Duration) redialBackoff {
	return redialBackoff{backoffMin: backoffMin, backoffMax: backoffMax, next: backoffMin}
}

// mayDial reports whether a dial may start at now.
func (b *redialBackoff) mayDial(now time.Time) bool { return !now.Before(b.retryAt) }

// failed records a failed dial that began at start.
func (b *redialBackoff) failed(start time.Time) {
	b.failures++
	b.retryAt = start.Add(b.next)
	b.next = min(2*b.next, b.backoffMax)
	if invariants && (b.next < b.backoffMin || b.next > b.backoffMax) {
		panic(fmt.Sprintf("quorum: redial backoff %v outside [%v, %v]", b.next, b.backoffMin, b.backoffMax))
	}
}

// succeeded records a dial that connected.
func (b *redialBackoff) succeeded() {
	b.failures, b.next, b.retryAt = 0, b.backoffMin, time.Time{}
}

// runPeer sends the peer's queued messages over one connection, redialing
// with backoff. While the peer cannot be reached its messages are dropped and
// reported, so raft slows down and the queue never blocks the raft loop.
//
// A connection is given up, and the peer redialed, when a write fails: when
// it misses its deadline (the peer stopped reading) or when what was
// written stays unacknowledged by the peer's TCP for
// controller.quorum.request.timeout.ms (the peer is cut off, as Kafka
// disconnects on a request timeout). Without the latter, messages to a peer
// behind a partition would wait in the kernel's retransmission queue, whose
// exponential backoff can delay them by seconds to minutes after the
// partition heals.
func (t *transport) runPeer(p *peer) {
	defer t.wg.Done()
	var (
		conn    net.Conn
		w       *bufio.Writer
		backoff = newRedialBackoff(t.backoffMin, t.backoffMax)
		batch   = make([]*raftpb.Message, 0, maxMessagesPerWrite)
	)
	defer func() {
		if conn != nil {
			t.untrack(conn, false)
		}
	}()
	for {
		select {
		case <-p.ctx.Done():
			return
		case m := <-p.queue:
			batch = append(batch[:0], m)
		}
	gather:
		for len(batch) < maxMessagesPerWrite {
			select {
			case m := <-p.queue:
				batch = append(batch, m)
			default:
				break gather
			}
		}
		if conn == nil {
			start := time.Now()
			if !backoff.mayDial(start) {
				t.dropBatch(p, batch)
				continue
			}
			c, err := t.dial(p)
			if err != nil {
				if backoff.failures == 0 && t.ctx.Err() == nil {
					t.logger.Warn("cannot reach quorum peer", "peer", p.id, "addr", p.addr, "err", err)
				}
				backoff.failed(start)
				t.dropBatch(p, batch)
				continue
			}
			if backoff.failures > 0 {
				t.logger.Info("reconnected to quorum peer", "peer", p.id, "addr", p.addr, "failed_attempts", backoff.failures)
			}
			backoff.succeeded()
			conn, w = c, bufio.NewWriterSize(c, frameBufferBytes)
		}
		if err := t.writeBatch(conn, w, batch); err != nil {
			if t.ctx.Err() == nil {
				t.logger.Info("quorum peer connection failed; redialing", "peer", p.id, "addr", p.addr, "err", err)
			}
			t.untrack(conn, false)
			conn = nil
			t.dropBatch(p, batch)
			continue
		}
		for _, m := range batch {
			if m.GetType() == raftpb.MsgSnap {
				t.report(report{to: p.id, snapshot: true})
			}
		}
	}
}

// dropBatch reports messages that could not be sent.
func (t *transport) dropBatch(p *peer, batch []*raftpb.Message) {
	t.report(report{to: p.id})
	for _, m := range batch {
		if m.GetType() == raftpb.MsgSnap {
			t.report(report{to: p.id, snapshot: true, failed: true})
		}
	}
}

// dial connects to the peer and writes the preamble.
func (t *transport) dial(p *peer) (net.Conn, error) {
	dialer := net.Dialer{Timeout: t.requestTimeout, Control: t.dialControl}
	c, err := dialer.DialContext(p.ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if t.dialTLS != nil {
		if c, err = t.handshake(c, p.addr); err != nil {
			return nil, err
		}
	}
	if !t.track(c, false) {
		c.Close()
		return nil, net.ErrClosed
	}
	c.SetWriteDeadline(time.Now().Add(t.requestTimeout))
	if _, err := c.Write(appendPreamble(nil, t.self, p.id)); err != nil {
		t.untrack(c, false)
		return nil, err
	}
	return c, nil
}

// writeBatch frames and writes messages, then flushes, within a deadline
// that grows with the bytes written.
func (t *transport) writeBatch(c net.Conn, w *bufio.Writer, batch []*raftpb.Message) error {
	frames := make([][]byte, 0, len(batch))
	total := 0
	for _, m := range batch {
		b, err := proto.Marshal(m)
		if err != nil || len(b) > t.maxFrameBytes {
			// The message can never be sent: drop it; raft will not get an
			// answer and retries, and a snapshot is reported failed.
			t.logger.Error("quorum message cannot be sent", "type", m.GetType().String(), "to", m.GetTo(), "bytes", len(b), "max_bytes", t.maxFrameBytes, "err", err)
			if m.GetType() == raftpb.MsgSnap {
				t.report(report{to: m.GetTo(), snapshot: true, failed: true})
			}
			continue
		}
		frames = append(frames, b)
		total += frameHeaderSize + len(b)
	}
	c.SetWriteDeadline(time.Now().Add(t.requestTimeout + time.Duration(total/bytesPerWriteSecond)*time.Second))
	var header [frameHeaderSize]byte
	for _, b := range frames {
		binary.BigEndian.PutUint32(header[:], uint32(len(b)))
		if _, err := w.Write(header[:]); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Flush()
}

// acceptLoop accepts inbound connections until the listener closes.
func (t *transport) acceptLoop() {
	defer t.wg.Done()
	for {
		c, err := t.listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || t.ctx.Err() != nil {
				return
			}
			t.logger.Warn("quorum listener accept failed", "err", err)
			select {
			case <-time.After(t.backoffMin):
			case <-t.ctx.Done():
				return
			}
			continue
		}
		if !t.track(c, true) {
			c.Close()
			continue
		}
		t.wg.Add(1)
		go t.serve(c)
	}
}

// serve reads one inbound connection until it fails or is closed.
func (t *transport) serve(c net.Conn) {
	defer t.wg.Done()
	defer t.untrack(c, true)
	c.SetReadDeadline(time.Now().Add(t.requestTimeout))
	r := bufio.NewReaderSize(c, frameBufferBytes)
	var from *peer
	err := readStream(r, t.self, t.maxFrameBytes,
		func(id uint64) bool {
			from = t.peer(id)
			return from != nil
		},
		func() { c.SetReadDeadline(time.Now().Add(t.idleTimeout)) },
		func(m *raftpb.Message) {
			from.lastContactNanos.Store(time.Now().UnixNano())
			t.deliver(m)
		})
	switch {
	case err == nil || errors.Is(err, io.EOF) || t.ctx.Err() != nil:
	case errors.Is(err, ErrCorrupt):
		t.logger.Warn("closing quorum connection after bad input", "remote", c.RemoteAddr().String(), "err", err)
	default:
		t.logger.Debug("quorum connection failed", "remote", c.RemoteAddr().String(), "err", err)
	}
}

// appendPreamble appends the connection preamble.
func appendPreamble(dst []byte, from, to uint64) []byte {
	dst = append(dst, preambleMagic...)
	dst = binary.BigEndian.AppendUint16(dst, preambleVersion)
	dst = binary.BigEndian.AppendUint32(dst, uint32(from))
	return binary.BigEndian.AppendUint32(dst, uint32(to))
}

// readStream reads a connection's preamble and then its frames, calling
// deliver with each message, until r fails or holds something invalid.
// isPeer says whether a node id may send to self; beforeFrame runs before
// each frame is awaited (to extend a read deadline).
func readStream(r io.Reader, self uint64, maxFrameBytes int, isPeer func(uint64) bool, beforeFrame func(), deliver func(*raftpb.Message)) error {
	var pre [preambleBytes]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return fmt.Errorf("read preamble: %w", err)
	}
	if string(pre[:4]) != preambleMagic || binary.BigEndian.Uint16(pre[4:]) != preambleVersion {
		return fmt.Errorf("%w: bad preamble %x", ErrCorrupt, pre)
	}
	from, to := uint64(binary.BigEndian.Uint32(pre[6:])), uint64(binary.BigEndian.Uint32(pre[10:]))
	if to != self || from == self || !isPeer(from) {
		return fmt.Errorf("%w: connection from node %d to node %d; this is node %d", ErrCorrupt, from, to, self)
	}
	buf := make([]byte, frameBufferBytes)
	for {
		beforeFrame()
		var header [frameHeaderSize]byte
		if _, err := io.ReadFull(r, header[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(header[:])
		if n == 0 || uint64(n) > uint64(maxFrameBytes) {
			return fmt.Errorf("%w: frame of %d bytes from node %d (max %d)", ErrCorrupt, n, from, maxFrameBytes)
		}
		frame := buf[:min(int(n), len(buf))]
		if int(n) > len(buf) {
			frame = make([]byte, n)
		}
		if _, err := io.ReadFull(r, frame); err != nil {
			return fmt.Errorf("read frame of %d bytes: %w", n, err)
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(frame, m); err != nil {
			return fmt.Errorf("%w: message from node %d: %v", ErrCorrupt, from, err)
		}
		if err := checkMessage(m, from, self); err != nil {
			return err
		}
		deliver(m)
	}
}

// checkMessage rejects messages a peer must not send: wrong addressing,
// local messages, and proposals (only the leader's own clients propose).
func checkMessage(m *raftpb.Message, from, self uint64) error {
	switch {
	case m.GetFrom() != from || m.GetTo() != self:
		return fmt.Errorf("%w: message from %d to %d on the connection from %d to %d", ErrCorrupt, m.GetFrom(), m.GetTo(), from, self)
	case raft.IsLocalMsg(m.GetType()) || m.GetType() == raftpb.MsgProp:
		return fmt.Errorf("%w: node %d sent a %s message", ErrCorrupt, from, m.GetType())
	case m.GetType() != raftpb.MsgSnap && m.Snapshot != nil && m.GetSnapshot().GetMetadata().GetIndex() != 0:
		return fmt.Errorf("%w: node %d sent a snapshot in a %s message", ErrCorrupt, from, m.GetType())
	}
	return nil
}
