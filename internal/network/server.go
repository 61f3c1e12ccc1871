package network

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrServerState marks Start or Shutdown called out of order.
var ErrServerState = errors.New("network: server state")

// Principal of connections on plaintext listeners, as Kafka names it.
const anonymousPrincipal = "User:ANONYMOUS"

// acceptBackoffMax bounds the pause after a failed Accept (EMFILE and the
// like), so that an acceptor neither spins nor sleeps long.
const acceptBackoffMax = time.Second

type serverState int

const (
	serverNew serverState = iota
	serverRunning
	serverStopping
)

// Server is Samsa's socket server: it accepts connections on its listeners,
// frames requests onto one bounded queue, runs the handler pool over it, and
// writes responses back in request order.
//
// Shutdown order: stop accepting, stop reading, let the handler pool drain
// the queue, let every connection's writer send its outstanding responses,
// close. Goroutines: one per listener (acceptor), num.io.threads handlers,
// and a reader and a writer per connection.
type Server struct {
	cfg         Config
	handler     Handler
	logger      *slog.Logger
	idleTimeout time.Duration

	// queue is the request queue, capacity queued.max.requests. Readers send,
	// handlers receive. It is closed once every reader has exited.
	queue    chan *Request
	counters counters
	// memoryPool counts, and with queued.max.request.bytes bounds, the
	// bytes of requests read and not yet handled; listenerPools are the
	// pools of listeners with ListenerSpec.OwnMemoryPool, by name.
	memoryPool    *memoryPool
	listenerPools map[string]*memoryPool
	// reuseBody is indexed by API key: whether its frames are pooled
	// (Config.ReuseBodyAPIKeys).
	reuseBody []bool
	// ordered is set when Config.PipelinedAPIKeys is: requests are handed to
	// handlers in Kafka's per-connection order; pipelined is indexed by API
	// key.
	ordered   bool
	pipelined []bool
	handlers  []*handlerClock

	// connectionSlots holds a token per open connection when max.connections
	// is set; nil when unlimited.
	connectionSlots chan struct{}
	// acceptGate, when set (Config.AcceptAfterOpen), holds the accept loops
	// until OpenForClients closes it.
	acceptGate chan struct{}
	openOnce   sync.Once
	// stopAccepting and stopReading are closed by Shutdown, in that order.
	stopAccepting chan struct{}
	stopReading   chan struct{}
	// baseContext is the parent of every connection's context; cancelled when
	// Shutdown gives up waiting.
	baseContext context.Context
	cancelBase  context.CancelFunc
	// stopped is closed when Shutdown has finished waiting for everything.
	stopped chan struct{}

	startTime        time.Time
	nextConnectionID atomic.Uint64
	acceptors        sync.WaitGroup
	readers          sync.WaitGroup
	writers          sync.WaitGroup
	handlerPool      sync.WaitGroup

	mu struct {
		sync.Mutex
		state     serverState
		listeners []net.Listener
		// connections are the open connections by ID.
		connections map[uint64]*connection
		// connectionsPerIP counts open connections per remote IP, for
		// max.connections.per.ip. Invariant: no zero entries.
		connectionsPerIP map[string]int
	}
}

// NewServer validates cfg, fills Kafka's defaults and returns a server that
// has not bound anything yet. logger may be nil.
func NewServer(cfg Config, handler Handler, logger *slog.Logger) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if handler == nil {
		return nil, fmt.Errorf("%w: nil handler", ErrConfig)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:           cfg,
		handler:       handler,
		logger:        logger,
		idleTimeout:   cfg.idleTimeout(),
		queue:         make(chan *Request, cfg.QueuedMaxRequests),
		memoryPool:    newMemoryPool(cfg.QueuedMaxRequestBytes),
		stopAccepting: make(chan struct{}),
		acceptGate:    acceptGate(cfg),
		stopReading:   make(chan struct{}),
		stopped:       make(chan struct{}),
	}
	s.listenerPools = make(map[string]*memoryPool)
	for _, spec := range cfg.Listeners {
		if spec.OwnMemoryPool {
			s.listenerPools[spec.Name] = newMemoryPool(cfg.QueuedMaxRequestBytes)
		}
	}
	s.reuseBody = apiKeySet(cfg.ReuseBodyAPIKeys)
	s.pipelined = apiKeySet(cfg.PipelinedAPIKeys)
	s.ordered = len(cfg.PipelinedAPIKeys) > 0
	s.baseContext, s.cancelBase = context.WithCancel(context.Background())
	if cfg.MaxConnections > 0 {
		s.connectionSlots = make(chan struct{}, cfg.MaxConnections)
	}
	s.mu.connections = make(map[uint64]*connection)
	s.mu.connectionsPerIP = make(map[string]int)
	return s, nil
}

// Start binds every listener and starts the handler pool and the acceptors.
// If any listener fails to bind, none stays bound.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.state != serverNew {
		return fmt.Errorf("%w: Start called twice or after Shutdown", ErrServerState)
	}
	listenConfig := net.ListenConfig{Control: s.controlListenSocket}
	listeners := make([]net.Listener, 0, len(s.cfg.Listeners))
	for _, spec := range s.cfg.Listeners {
		listener, err := spec.Listener, error(nil)
		if listener == nil {
			listener, err = listenConfig.Listen(context.Background(), "tcp", spec.Address)
		}
		if err != nil {
			for _, bound := range listeners {
				bound.Close()
			}
			return fmt.Errorf("network: listener %s on %s: %w", spec.Name, spec.Address, err)
		}
		listeners = append(listeners, listener)
	}
	s.mu.listeners = listeners
	s.mu.state = serverRunning
	s.startTime = time.Now()

	s.handlers = make([]*handlerClock, s.cfg.NumIOThreads)
	for i := range s.handlers {
		s.handlers[i] = &handlerClock{}
		s.handlerPool.Add(1)
		go s.runHandler(s.handlers[i])
	}
	for i, listener := range listeners {
		s.acceptors.Add(1)
		go s.accept(listener, &s.cfg.Listeners[i])
		s.logger.Info("listening", "listener", s.cfg.Listeners[i].Name, "address", listener.Addr().String())
	}
	return nil
}

// controlListenSocket sets socket.receive.buffer.bytes on the listening
// socket before listen(2), so that accepted connections inherit it and TCP
// window scaling is negotiated for it.
func (s *Server) controlListenSocket(network, address string, raw syscall.RawConn) error {
	if s.cfg.SocketReceiveBufferBytes <= 0 {
		return nil
	}
	var setErr error
	err := raw.Control(func(fd uintptr) {
		setErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, s.cfg.SocketReceiveBufferBytes)
	})
	return errors.Join(err, setErr)
}

// OpenForClients starts accepting connections on a server created with
// Config.AcceptAfterOpen. It is safe to call more than once.
func (s *Server) OpenForClients() {
	if s.acceptGate != nil {
		s.openOnce.Do(func() { close(s.acceptGate) })
	}
}

// Addrs returns the bound address of each listener, in Config order; empty
// before Start. With port 0 in the config, this is where the port is found.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]net.Addr, 0, len(s.mu.listeners))
	for _, listener := range s.mu.listeners {
		addrs = append(addrs, listener.Addr())
	}
	return addrs
}

// accept runs one listener's accept loop until Shutdown.
func (s *Server) accept(listener net.Listener, spec *ListenerSpec) {
	defer s.acceptors.Done()
	listenerName := spec.Name
	if s.acceptGate != nil && !spec.OpenAtStart {
		// Bound but not yet open: clients wait in the accept backlog.
		select {
		case <-s.acceptGate:
		case <-s.stopAccepting:
			return
		}
	}
	var backoff time.Duration
	for {
		if s.connectionSlots != nil {
			// At max.connections, wait for a connection to close rather than
			// accept and drop: the client waits in the accept backlog.
			select {
			case s.connectionSlots <- struct{}{}:
			case <-s.stopAccepting:
				return
			}
		}
		netConn, err := listener.Accept()
		if err != nil {
			s.releaseConnectionSlot()
			select {
			case <-s.stopAccepting:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), acceptBackoffMax)
			s.logger.Warn("accept failed", "listener", listenerName, "error", err, "retry_in", backoff)
			timer := time.NewTimer(backoff)
			select {
			case <-timer.C:
			case <-s.stopAccepting:
				timer.Stop()
				return
			}
			continue
		}
		backoff = 0
		s.serve(netConn, spec)
		if !s.awaitListenerRate(listenerName) {
			return
		}
	}
}

// serve registers an accepted connection and starts its reader and writer,
// or closes it at once when its IP is over max.connections.per.ip.
func (s *Server) serve(netConn net.Conn, spec *ListenerSpec) {
	listenerName := spec.Name
	remoteIP := remoteIPOf(netConn)
	s.mu.Lock()
	if s.mu.state != serverRunning {
		s.mu.Unlock()
		netConn.Close()
		s.releaseConnectionSlot()
		return
	}
	if limit := s.perIPLimit(remoteIP); limit > 0 && s.mu.connectionsPerIP[remoteIP] >= limit {
		s.mu.Unlock()
		s.counters.connectionsRejected.Add(1)
		netConn.Close()
		s.releaseConnectionSlot()
		s.logger.Info("connection rejected: max.connections.per.ip reached",
			"listener", listenerName, "remote", remoteIP, "limit", limit)
		return
	}
	if s.cfg.ConnectionRates != nil {
		if throttleMs := s.cfg.ConnectionRates.AdmitIP(remoteIP, time.Now().UnixMilli()); throttleMs > 0 {
			s.mu.Unlock()
			s.releaseConnectionSlot()
			s.refuseForRate(netConn, listenerName, remoteIP, throttleMs)
			return
		}
	}
	s.mu.connectionsPerIP[remoteIP]++
	s.setSocketOptions(netConn)
	c := newConnection(s, wrapTLS(netConn, spec), listenerName, remoteIP)
	c.info.SecurityProtocol = spec.SecurityProtocol
	c.tlsPrincipal = spec.TLSPrincipal
	if pool := s.listenerPools[spec.Name]; pool != nil {
		c.memoryPool = pool
	}
	s.mu.connections[c.info.ID] = c
	s.readers.Add(1)
	s.writers.Add(1)
	s.mu.Unlock()

	s.counters.connectionsAccepted.Add(1)
	s.counters.connectionsActive.Add(1)
	go c.readLoop()
	go c.writeLoop()
}

// setSocketOptions applies the socket buffer sizes; failures only cost
// throughput, so they are logged, not fatal.
func (s *Server) setSocketOptions(netConn net.Conn) {
	tcpConn, ok := netConn.(*net.TCPConn)
	if !ok {
		return
	}
	if size := s.cfg.SocketSendBufferBytes; size > 0 {
		if err := tcpConn.SetWriteBuffer(size); err != nil {
			s.logger.Debug("setting socket.send.buffer.bytes", "error", err)
		}
	}
	if size := s.cfg.SocketReceiveBufferBytes; size > 0 {
		if err := tcpConn.SetReadBuffer(size); err != nil {
			s.logger.Debug("setting socket.receive.buffer.bytes", "error", err)
		}
	}
}

// unregister forgets a closed connection and frees its connection slots.
func (s *Server) unregister(c *connection) {
	s.mu.Lock()
	delete(s.mu.connections, c.info.ID)
	if s.mu.connectionsPerIP[c.remoteIP] <= 1 {
		delete(s.mu.connectionsPerIP, c.remoteIP)
	} else {
		s.mu.connectionsPerIP[c.remoteIP]--
	}
	s.mu.Unlock()
	s.counters.connectionsActive.Add(-1)
	s.releaseConnectionSlot()
}

func (s *Server) releaseConnectionSlot() {
	if s.connectionSlots != nil {
		<-s.connectionSlots
	}
}

func remoteIPOf(netConn net.Conn) string {
	if addr, ok := netConn.RemoteAddr().(*net.TCPAddr); ok {
		return addr.IP.String()
	}
	return netConn.RemoteAddr().String()
}

// Shutdown stops the server gracefully: it stops accepting connections and
// reading requests, lets the requests already read be handled and their
// responses be written, then closes every connection. When ctx ends first it
// closes every connection at once, cancels the handlers' contexts and returns
// ctx's error. Shutdown may be called more than once; later calls wait too.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	switch s.mu.state {
	case serverNew:
		s.mu.state = serverStopping
		s.mu.Unlock()
		close(s.stopped)
		s.cancelBase()
		return nil
	case serverRunning:
		s.mu.state = serverStopping
		listeners := s.mu.listeners
		s.mu.Unlock()
		go s.stopGracefully(listeners)
	default:
		s.mu.Unlock()
	}
	select {
	case <-s.stopped:
		s.cancelBase()
		return nil
	case <-ctx.Done():
		for _, c := range s.connectionsSnapshot() {
			c.close(slog.LevelDebug, "shutdown deadline passed", ctx.Err())
		}
		s.cancelBase()
		return ctx.Err()
	}
}

// stopGracefully runs the shutdown steps in order and closes s.stopped.
func (s *Server) stopGracefully(listeners []net.Listener) {
	close(s.stopAccepting)
	for _, listener := range listeners {
		listener.Close()
	}
	s.acceptors.Wait()

	// No connection can be added now. Interrupt every reader's blocking read;
	// a reader that sets a fresh deadline afterwards sees stopReading closed.
	close(s.stopReading)
	past := time.Unix(1, 0)
	for _, c := range s.connectionsSnapshot() {
		c.netConn.SetReadDeadline(past)
	}
	s.readers.Wait()
	// Every request read has been queued; the handlers drain the queue and exit.
	close(s.queue)
	s.handlerPool.Wait()
	s.writers.Wait()
	close(s.stopped)
}

func (s *Server) connectionsSnapshot() []*connection {
	s.mu.Lock()
	defer s.mu.Unlock()
	connections := make([]*connection, 0, len(s.mu.connections))
	for _, c := range s.mu.connections {
		connections = append(connections, c)
	}
	return connections
}

// Stats returns a snapshot of the server's gauges and counters.
func (s *Server) Stats() Stats {
	now := time.Now()
	stats := Stats{
		ConnectionsActive:      s.counters.connectionsActive.Load(),
		ConnectionsAccepted:    s.counters.connectionsAccepted.Load(),
		ConnectionsRejected:    s.counters.connectionsRejected.Load(),
		ConnectionsThrottled:   s.counters.connectionsThrottled.Load(),
		ConnectionsRateLimited: s.counters.connectionsRateLimited.Load(),
		RequestQueueSize:       len(s.queue),
		RequestQueueSizeMax:    s.counters.requestQueueMax.Load(),
		RequestQueueCapacity:   cap(s.queue),
		ReadersBlocked:         s.counters.readersBlocked.Load(),
		QueueFullWaits:         s.counters.queueFullWaits.Load(),
		RequestsReceived:       s.counters.requestsReceived.Load(),
		RequestsReadAhead:      s.counters.requestsReadAhead.Load(),
		ReadAheadWaits:         s.counters.readAheadWaits.Load(),
		RequestsRejected:       s.counters.requestsRejected.Load(),
		ResponsesSent:          s.counters.responsesSent.Load(),
		ResponsesDropped:       s.counters.responsesDropped.Load(),
		BytesReceived:          s.counters.bytesReceived.Load(),
		BytesSent:              s.counters.bytesSent.Load(),
		SendfileBytes:          s.counters.sendfileBytes.Load(),
		CopiedFileBytes:        s.counters.copiedFileBytes.Load(),
		TLSHandshakesFailed:    s.counters.tlsHandshakesFailed.Load(),
		NetworkBusy:            time.Duration(s.counters.networkBusyNanos.Load()),
		MemoryPoolBytes:        s.memoryPool.sizeBytes,
		MemoryPoolUsedBytes:    s.memoryPool.used.Load(),
		MemoryPoolAvailable:    s.memoryPool.available(),
		MemoryPoolDepleted:     s.memoryPool.depletedTime(now),
		MemoryPoolWaits:        s.counters.memoryPoolWaits.Load(),
		ReadersWaitingMemory:   s.counters.readersWaitingForMemory.Load(),
		NumIOThreads:           s.cfg.NumIOThreads,
		NumNetworkThreads:      s.cfg.NumNetworkThreads,
	}
	s.mu.Lock()
	started := s.mu.state != serverNew && !s.startTime.IsZero()
	s.mu.Unlock()
	if !started {
		return stats
	}
	stats.Uptime = now.Sub(s.startTime)
	for _, clock := range s.handlers {
		idle, busy := clock.totals(now)
		stats.HandlerIdle += idle
		stats.HandlerBusy += busy
	}
	return stats
}

// reusesBody reports whether frames of apiKey are read into pooled buffers.
func (s *Server) reusesBody(apiKey int16) bool {
	return apiKey >= 0 && int(apiKey) < len(s.reuseBody) && s.reuseBody[apiKey]
}

// isPipelined reports whether apiKey is in Config.PipelinedAPIKeys.
func (s *Server) isPipelined(apiKey int16) bool {
	return apiKey >= 0 && int(apiKey) < len(s.pipelined) && s.pipelined[apiKey]
}

// apiKeySet turns a list of (non-negative) API keys into a table indexed by key.
func apiKeySet(keys []int16) []bool {
	var set []bool
	for _, key := range keys {
		for int(key) >= len(set) {
			set = append(set, false)
		}
		set[key] = true
	}
	return set
}

func acceptGate(cfg Config) chan struct{} {
	if cfg.AcceptAfterOpen {
		return make(chan struct{})
	}
	return nil
}
