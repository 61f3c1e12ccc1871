package network

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// handlerClock accounts one handler goroutine's idle and busy time, so that
// Stats can include the wait in progress without the totals ever going
// backwards between two snapshots (Prometheus would read that as a reset).
type handlerClock struct {
	mu struct {
		sync.Mutex
		idle time.Duration
		busy time.Duration
		// idleSince is when the current wait began; zero while handling.
		idleSince time.Time
		// busySince is when the current Handle began; zero while waiting.
		busySince time.Time
	}
}

func (clock *handlerClock) startWaiting(now time.Time) {
	clock.mu.Lock()
	defer clock.mu.Unlock()
	if !clock.mu.busySince.IsZero() {
		clock.mu.busy += now.Sub(clock.mu.busySince)
		clock.mu.busySince = time.Time{}
	}
	clock.mu.idleSince = now
}

func (clock *handlerClock) startHandling(now time.Time) {
	clock.mu.Lock()
	defer clock.mu.Unlock()
	clock.mu.idle += now.Sub(clock.mu.idleSince)
	clock.mu.idleSince = time.Time{}
	clock.mu.busySince = now
}

// totals returns the idle and busy time up to now, the current span included.
func (clock *handlerClock) totals(now time.Time) (idle, busy time.Duration) {
	clock.mu.Lock()
	defer clock.mu.Unlock()
	idle, busy = clock.mu.idle, clock.mu.busy
	if !clock.mu.idleSince.IsZero() {
		idle += now.Sub(clock.mu.idleSince)
	}
	if !clock.mu.busySince.IsZero() {
		busy += now.Sub(clock.mu.busySince)
	}
	return idle, busy
}

// runHandler is one of the num.io.threads handler goroutines: it takes
// requests off the shared queue until the queue is closed and drained.
func (s *Server) runHandler(clock *handlerClock) {
	defer s.handlerPool.Done()
	for {
		clock.startWaiting(time.Now())
		req, ok := <-s.queue
		now := time.Now()
		clock.startHandling(now)
		if !ok {
			return
		}
		s.dispatch(req, now)
	}
}

// dispatch hands one request to the Handler. Requests of connections that
// closed while queued are skipped, as their responses could not be sent.
func (s *Server) dispatch(req *Request, dequeued time.Time) {
	// The handler side's hold on a pooled body ends when Handle returns (or
	// panics), or at once for a skipped request.
	defer req.releaseBody()
	// Its bytes of queued.max.request.bytes too (memory_pool.go).
	defer req.releaseQueuedBytes()
	c := req.connection
	if c.isClosed() {
		return
	}
	req.timings.Dequeued = dequeued
	if s.cfg.Observer != nil {
		s.cfg.Observer.RequestDequeued(req, dequeued.Sub(req.timings.Received))
	}
	// Once Handle has returned and Respond has been called, a pipelined
	// request lets the next one of its connection be handed on
	// (Config.PipelinedAPIKeys).
	defer c.handled(req)
	defer func() {
		if recovered := recover(); recovered != nil {
			s.logger.Error("handler panicked; closing connection",
				"connection", c.info.ID, "api_key", req.APIKey, "api_version", req.APIVersion,
				"panic", recovered, "stack", string(debug.Stack()))
			c.close(slog.LevelWarn, "handler panicked", fmt.Errorf("panic: %v", recovered))
		}
	}()
	s.handler.Handle(c.ctx, req)
}

// enqueue puts req on the request queue, blocking while the queue is full.
// While it blocks, this connection's socket is not read: TCP pushes back on
// the client. It returns false when the connection closed meanwhile.
func (c *connection) enqueue(req *Request) bool {
	s := c.server
	select {
	case s.queue <- req:
		s.counters.noteQueueSize(int64(len(s.queue)))
		return true
	default:
	}
	s.counters.queueFullWaits.Add(1)
	s.counters.readersBlocked.Add(1)
	defer s.counters.readersBlocked.Add(-1)
	select {
	case s.queue <- req:
		s.counters.noteQueueSize(int64(len(s.queue)))
		return true
	case <-c.closed:
		return false
	}
}
