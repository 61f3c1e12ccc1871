package network

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// readBufferBytes is each connection's read buffer. Small requests, and
// pipelined ones, are framed from it without a syscall each; larger bodies
// are read straight into their own allocation, past the buffer.
const readBufferBytes = 8 << 10

// errReaderStopping is returned to the reader once Shutdown has begun.
var errReaderStopping = errors.New("network: server shutting down")

// connection is one client connection: a reader goroutine that frames
// requests onto the server's queue and a writer goroutine that sends the
// responses in request order.
type connection struct {
	server   *Server
	netConn  net.Conn
	info     ConnInfo
	remoteIP string
	// tlsPrincipal names the principal after a TLS handshake (ListenerSpec.TLSPrincipal).
	tlsPrincipal func(tls.ConnectionState) (string, error)
	// isTLS is set when netConn is a *tls.Conn: responses are coalesced
	// into few TLS records and file regions are copied (no sendfile).
	isTLS bool
	// memoryPool holds the bytes of the connection's requests read and not
	// yet handled (queued.max.request.bytes; memory_pool.go).
	memoryPool *memoryPool
	// ctx is passed to Handle; cancelled when the connection closes.
	ctx    context.Context
	cancel context.CancelFunc

	// inFlight holds a token for every request read or being read and not
	// yet answered: the reader puts one in before reading a frame, the writer
	// takes one out per response sent. Its capacity is
	// MaxInFlightRequestsPerConnection, so with the default of one the reader
	// does not read the next request until the last response has gone out.
	inFlight chan struct{}
	// wake tells the writer that a response may be ready or the reader has
	// stopped. Capacity one: signals coalesce.
	wake chan struct{}
	// turn tells a reader waiting for its request's turn (Config.PipelinedAPIKeys)
	// that an earlier request has let go. Capacity one: signals coalesce.
	turn chan struct{}
	// closed is closed when the connection closes.
	closed    chan struct{}
	closeOnce sync.Once

	mu struct {
		sync.Mutex
		// pending are the requests queued or being handled, in arrival order;
		// responses leave from the front.
		// Invariant: len(pending) <= cap(inFlight).
		pending []*Request
		// holding counts the requests handed on that still hold back the
		// next one in an ordered server (Config.PipelinedAPIKeys): pipelined
		// ones until Handle has returned and Respond has been called (see
		// Request.turnHolds), others until their response is written.
		// Invariant: holding <= 1 when the server is ordered.
		holding int
		// unanswered counts the requests handed on whose responses have not
		// been written yet.
		unanswered int
		// readerStopped means no request will be added: the client closed its
		// side or the server is shutting down. The writer closes the
		// connection once pending is empty.
		readerStopped bool
		closed        bool
		// mutedUntil is when the connection's quota throttle ends
		// (Response.ThrottleMs); the reader reads nothing before it.
		mutedUntil time.Time
	}
}

func newConnection(s *Server, netConn net.Conn, listenerName, remoteIP string) *connection {
	c := &connection{
		server:   s,
		netConn:  netConn,
		remoteIP: remoteIP,
		info: ConnInfo{
			ID:         s.nextConnectionID.Add(1),
			Listener:   listenerName,
			LocalAddr:  netConn.LocalAddr(),
			RemoteAddr: netConn.RemoteAddr(),
			Principal:  anonymousPrincipal,
			Software:   &ClientSoftware{},
		},
		inFlight: make(chan struct{}, s.cfg.MaxInFlightRequestsPerConnection),
		wake:     make(chan struct{}, 1),
		turn:     make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
	_, c.isTLS = netConn.(handshakenConn)
	c.memoryPool = s.memoryPool
	c.ctx, c.cancel = context.WithCancel(s.baseContext)
	return c
}

// readLoop frames requests and queues them until the connection closes, the
// client ends it, or the server stops reading.
func (c *connection) readLoop() {
	defer c.server.readers.Done()
	s := c.server
	if !c.handshakeTLS() {
		return
	}
	c.startSession()
	reader := bufio.NewReaderSize(&socketReader{c: c}, readBufferBytes)
	sizeBuffer := make([]byte, 4)
	// pooled is the pooled buffer of the frame being read, if its API key
	// reuses bodies; frameFor chooses it.
	var pooled *frameBuffer
	// reserved is the read-ahead budget the frame being read may use.
	var reserved int64
	defer func() {
		if reserved > 0 {
			releaseReadAhead(reserved)
		}
	}()
	frameFor := func(size int, apiKey int16) []byte {
		if s.reusesBody(apiKey) {
			pooled = getFrameBuffer(size)
		}
		if pooled != nil {
			pooled.readAhead, reserved = reserved, 0
		}
		if pooled == nil {
			return make([]byte, size)
		}
		return pooled.bytes[:size]
	}
	for {
		pooled = nil
		// Wait for the next frame's first byte before waiting for an
		// in-flight token, so that a client that goes away while its request
		// is handled is noticed (and the handler's context cancelled) at once.
		// At most the read buffer is read ahead; backpressure is intact.
		if err := c.awaitFrame(reader); err != nil {
			c.readFailed(err)
			return
		}
		if c.info.SASL != nil && c.info.SASL.Gate() == GateRawToken {
			if !c.rawTokenExchange(reader) {
				return
			}
			continue
		}
		var ok bool
		if reserved, ok = c.awaitReadAheadRoom(reader); !ok {
			return
		}
		// The frame is read ahead when a request before it has not had
		// its response written: the same test, on the same in-flight
		// tokens, that decided its read-ahead reservation, so that every
		// pooled frame counted read ahead holds its share of the budget.
		// Only this reader adds tokens, so the answer cannot turn true
		// until the frame is read.
		readAhead := reserved > 0 || c.hasUnanswered()
		select {
		case c.inFlight <- struct{}{}:
		case <-c.closed:
			return
		case <-s.stopReading:
			c.stopReading()
			return
		}
		if !c.awaitUnmuted() {
			<-c.inFlight
			return
		}
		maxBytes := s.cfg.SocketRequestMaxBytes
		if c.info.SASL != nil {
			maxBytes = c.frameLimit()
		}
		// queuedBytes are the frame's bytes in the memory pool
		// (queued.max.request.bytes), given back by the request or, if
		// none is made, by dropQueuedBytes.
		queuedBytes, ok := c.awaitQueuedBytes(reader, maxBytes)
		if !ok {
			<-c.inFlight
			return
		}
		dropQueuedBytes := func() {
			if queuedBytes > 0 {
				c.memoryPool.release(queuedBytes, time.Now())
			}
		}
		start := time.Now()
		frame, err := readFrameInto(reader, maxBytes, sizeBuffer, frameFor)
		s.counters.networkBusyNanos.Add(int64(time.Since(start)))
		if reserved > 0 {
			// Not read into a pooled buffer after all.
			releaseReadAhead(reserved)
			reserved = 0
		}
		if err != nil {
			if pooled != nil {
				putFrameBuffer(pooled)
			}
			dropQueuedBytes()
			c.readFailed(err)
			return
		}
		received := time.Now()
		verdict := gatePass
		if c.info.SASL != nil {
			var reason string
			if verdict, reason = c.admit(frame); verdict == gateClose {
				if pooled != nil {
					putFrameBuffer(pooled)
				}
				dropQueuedBytes()
				s.counters.requestsRejected.Add(1)
				c.close(slog.LevelInfo, reason, nil)
				return
			}
		}
		header, body, err := ParseRequestHeader(frame, s.cfg.IsFlexible)
		if err != nil {
			if pooled != nil {
				putFrameBuffer(pooled)
			}
			dropQueuedBytes()
			s.counters.requestsRejected.Add(1)
			c.close(slog.LevelWarn, "malformed request header", err)
			return
		}
		s.counters.requestsReceived.Add(1)
		if readAhead {
			s.counters.requestsReadAhead.Add(1)
		}
		req := &Request{
			APIKey:        header.APIKey,
			APIVersion:    header.APIVersion,
			CorrelationID: header.CorrelationID,
			ClientID:      header.ClientID,
			Body:          body,
			Conn:          &c.info,
			connection:    c,
			taggedFields:  responseHasTaggedFields(&header),
			timings:       RequestTimings{Received: received},
			frame:         pooled,
			pipelined:     s.isPipelined(header.APIKey),
			readAhead:     readAhead,
			queuedBytes:   queuedBytes,
		}
		if pooled != nil {
			req.bodyHolders.Store(bodyHoldersPooled)
		}
		if req.pipelined && !c.prepare(req) {
			req.releaseQueuedBytes()
			req.releaseBody()
			req.releaseBody()
			return
		}
		if !c.addPending(req) {
			// Nobody else has seen the request.
			req.releaseQueuedBytes()
			req.releaseBody()
			req.releaseBody()
			return
		}
		if !c.enqueue(req) {
			// No handler will see it, and as nobody will call Respond, the
			// closed connection will not release it either.
			req.releaseQueuedBytes()
			req.releaseBody()
			req.releaseBody()
			return
		}
		if verdict == gateSerialize && !c.awaitAnswered() {
			return
		}
	}
}

// awaitFrame waits until the next frame's first byte has arrived. A read
// deadline that passes while requests are still in flight does not make the
// connection idle, so the wait goes on.
func (c *connection) awaitFrame(reader *bufio.Reader) error {
	for {
		_, err := reader.Peek(1)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || c.server.isStopping() || !c.hasUnanswered() {
			return err
		}
	}
}

// readFailed ends the reader after a failed read: gracefully (answer what is
// pending, then close) when the client ended cleanly between frames or the
// server is stopping, at once otherwise.
func (c *connection) readFailed(err error) {
	s := c.server
	switch {
	case errors.Is(err, errReaderStopping),
		errors.Is(err, os.ErrDeadlineExceeded) && s.isStopping():
		c.stopReading()
	case errors.Is(err, io.EOF):
		c.stopReading()
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.close(slog.LevelDebug, "idle longer than connections.max.idle.ms", nil)
	case errors.Is(err, ErrFrameTooLarge), errors.Is(err, ErrFrameTooSmall):
		s.counters.requestsRejected.Add(1)
		c.close(slog.LevelWarn, "invalid frame size", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.counters.requestsRejected.Add(1)
		c.close(slog.LevelInfo, "connection ended inside a frame", err)
	default:
		c.close(slog.LevelDebug, "read failed", err)
	}
}

// stopReading records that no more requests will come and lets the writer
// close the connection once the pending responses are out.
func (c *connection) stopReading() {
	c.mu.Lock()
	c.mu.readerStopped = true
	c.mu.Unlock()
	c.signalWriter()
}

// addPending appends req to the response order once it is req's turn to be
// handed on; false if the connection has closed. In an ordered server
// (Config.PipelinedAPIKeys) the turn of a pipelined request comes when no
// earlier request holds on (see connection.mu.holding), of any other request
// when every earlier one has been answered; otherwise at once.
func (c *connection) addPending(req *Request) bool {
	ordered := c.server.ordered
	for {
		c.mu.Lock()
		if c.mu.closed {
			c.mu.Unlock()
			return false
		}
		if !ordered || c.mu.holding == 0 && (req.pipelined || c.mu.unanswered == 0) {
			// A request read ahead while the one before it was throttled
			// waits out the mute too (throttle.go).
			if muted := time.Until(c.mu.mutedUntil); muted > 0 {
				c.mu.Unlock()
				if !c.awaitUnmuted() {
					return false
				}
				continue
			}
			break
		}
		c.mu.Unlock()
		select {
		case <-c.turn:
		case <-c.closed:
		}
	}
	defer c.mu.Unlock()
	c.mu.pending = append(c.mu.pending, req)
	c.mu.holding++
	if ordered && req.pipelined {
		req.turnHolds = pipelinedTurnHolds
	}
	c.mu.unanswered++
	if invariantsEnabled && len(c.mu.pending) > cap(c.inFlight) {
		panic("network: more requests pending than in-flight tokens")
	}
	if invariantsEnabled && ordered && c.mu.holding > 1 {
		panic("network: two requests of one connection handed on at once")
	}
	return true
}

// prepare runs the handler's Preparer on req, if it has one; false if
// Prepare panicked, which closes the connection.
func (c *connection) prepare(req *Request) (ok bool) {
	preparer, isPreparer := c.server.handler.(Preparer)
	if !isPreparer {
		return true
	}
	defer func() {
		if recovered := recover(); recovered != nil {
			c.server.logger.Error("Prepare panicked; closing connection",
				"connection", c.info.ID, "api_key", req.APIKey, "api_version", req.APIVersion,
				"panic", recovered, "stack", string(debug.Stack()))
			c.close(slog.LevelWarn, "Prepare panicked", fmt.Errorf("panic: %v", recovered))
			ok = false
		}
	}()
	preparer.Prepare(req)
	return true
}

// pipelinedTurnHolds is Request.turnHolds of a pipelined request when it is
// handed on in an ordered server: it holds back the next request of its
// connection until Handle has returned and Respond has been called.
const pipelinedTurnHolds = 2

// handled records that Handle of req has returned: a pipelined request that
// has also been answered no longer holds back the next one.
func (c *connection) handled(req *Request) {
	c.mu.Lock()
	let := c.letGoLocked(req)
	c.mu.Unlock()
	if let {
		c.signalTurn()
	}
}

// letGoLocked drops one of req's holds on the next request's turn (Handle
// returned, or Respond called); true when that was the last, so the next
// request may be handed on.
//
// Both are needed, not Handle returning alone: an acks=-1 produce returns
// from Handle with its batches appended but waits for its replicas before
// it answers, and a connection that appended its next requests meanwhile
// would leave up to five batches of one producer appended that the producer
// has not heard of. Kafka never does (it mutes a connection until the
// response is sent), and the producer state relies on it: a replica that
// becomes leader opens its producer state from a snapshot, which keeps each
// producer's last batch only (as Kafka's do), so the producer's retry of
// the first of those batches would answer OUT_OF_ORDER_SEQUENCE_NUMBER, and
// the producer, bumping its epoch and resending them, would append them
// twice.
func (c *connection) letGoLocked(req *Request) bool {
	if req.turnHolds == 0 {
		return false
	}
	req.turnHolds--
	if req.turnHolds > 0 {
		return false
	}
	c.mu.holding--
	return true
}

// answered records that the responses of written have gone out (or failed
// to): they no longer hold back later requests.
func (c *connection) answered(written []*Request) {
	c.mu.Lock()
	c.mu.unanswered -= len(written)
	for _, req := range written {
		if !req.pipelined {
			c.mu.holding--
		}
	}
	c.mu.Unlock()
	c.signalTurn()
}

func (c *connection) signalTurn() {
	select {
	case c.turn <- struct{}{}:
	default:
	}
}

// hasUnanswered reports whether a request read has not had its response
// written yet. The in-flight tokens count that, not pending: the writer takes
// a request off pending before writing its response, and the response being
// written keeps the connection busy.
func (c *connection) hasUnanswered() bool {
	return len(c.inFlight) > 0
}

// complete records req's response and wakes the writer. A second call for
// the same request is a handler bug; it is logged and ignored. After the
// connection has closed the response is dropped.
func (c *connection) complete(req *Request, resp Response) {
	c.mu.Lock()
	if req.responded {
		c.mu.Unlock()
		c.server.logger.Error("Respond called twice; second response ignored",
			"connection", c.info.ID, "api_key", req.APIKey, "correlation_id", req.CorrelationID)
		return
	}
	req.responded = true
	// A response that closes the connection lets nothing after it be
	// handled.
	let := !resp.Close && c.letGoLocked(req)
	if c.mu.closed {
		c.mu.Unlock()
		c.server.counters.responsesDropped.Add(1)
		req.releaseBody()
		return
	}
	req.response = resp
	req.timings.Responded = time.Now()
	c.muteLocked(resp.ThrottleMs, req.timings.Responded)
	c.mu.Unlock()
	if let {
		c.signalTurn()
	}
	c.signalWriter()
}

func (c *connection) signalWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// takeReadyLocked moves the answered requests at the front of pending to
// ready, stopping after a response that closes the connection. drained
// reports that the reader has stopped and nothing is pending.
func (c *connection) takeReadyLocked(ready []*Request) (_ []*Request, closeAfter, drained bool) {
	taken := 0
	for _, req := range c.mu.pending {
		if !req.responded {
			break
		}
		ready = append(ready, req)
		taken++
		if req.response.Close {
			closeAfter = true
			break
		}
	}
	clear(c.mu.pending[:taken])
	c.mu.pending = c.mu.pending[taken:]
	if len(c.mu.pending) == 0 {
		c.mu.pending = c.mu.pending[:0:0]
	}
	return ready, closeAfter, c.mu.readerStopped && len(c.mu.pending) == 0
}

func (c *connection) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// close closes the connection at once, dropping pending responses, and
// logs why at level. Later calls do nothing.
func (c *connection) close(level slog.Level, reason string, err error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.mu.closed = true
		var dropped []*Request
		for _, req := range c.mu.pending {
			if req.responded {
				dropped = append(dropped, req)
			}
		}
		c.mu.pending = nil
		c.mu.Unlock()
		// Responses given to Respond before the close are dropped here; those
		// given after it are dropped (and released) by complete.
		for _, req := range dropped {
			req.releaseBody()
		}
		c.server.counters.responsesDropped.Add(uint64(len(dropped)))

		close(c.closed)
		c.cancel()
		c.netConn.Close()
		attrs := []any{"connection", c.info.ID, "listener", c.info.Listener,
			"remote", c.info.RemoteAddr.String(), "reason", reason}
		if err != nil {
			attrs = append(attrs, "error", err)
		}
		c.server.logger.Log(context.Background(), level, "closing connection", attrs...)
		c.server.unregister(c)
	})
}

// socketReader reads the socket for the reader's buffer, keeping the read
// deadline at connections.max.idle.ms from the latest read and checking for
// shutdown after each deadline change (see Server.stopGracefully).
type socketReader struct {
	c *connection
	// deadlineSetAt is when the read deadline was last moved. Moving it on
	// every read would cost a timer update per syscall, so it is moved once
	// a sixteenth of the idle timeout has passed.
	deadlineSetAt time.Time
}

func (r *socketReader) Read(p []byte) (int, error) {
	s := r.c.server
	if idle := s.idleTimeout; idle > 0 {
		now := time.Now()
		if now.Sub(r.deadlineSetAt) > idle/16 {
			r.c.netConn.SetReadDeadline(now.Add(idle))
			r.deadlineSetAt = now
		}
	}
	if s.isStopping() {
		return 0, errReaderStopping
	}
	n, err := r.c.netConn.Read(p)
	s.counters.bytesReceived.Add(uint64(n))
	return n, err
}

// isStopping reports whether Shutdown has stopped reading.
func (s *Server) isStopping() bool {
	select {
	case <-s.stopReading:
		return true
	default:
		return false
	}
}
