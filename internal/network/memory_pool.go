package network

import (
	"bufio"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// The bytes of queued requests (queued.max.request.bytes), as Kafka's
// SocketServer bounds them with its memory pool. A reader that has read a
// frame's size prefix takes the frame's size from the pool before it reads
// the rest; the request gives it back once a handler is done with it
// (Handle has returned, or the request was skipped), or at once if it never
// reaches the queue. So the pool counts the requests read and waiting for
// their turn, waiting in the queue, and being handled.
//
// As Kafka's pool in its non-strict mode, an allocation succeeds while any
// memory is left, even one larger than what is left (the pool then goes
// below zero), so one request larger than the bound, or larger than what
// several smaller ones left, is admitted and cannot wait forever. A reader
// that finds the pool spent stops reading its socket, which pushes back on
// the client through TCP, and waits until more than a tenth of the pool is
// available again (Kafka's Selector unmutes channels muted for memory at
// that mark) before it tries again.
//
// Kafka gives the memory of most requests back as soon as the network
// thread has parsed them, before they are queued, and keeps it until the
// handler returns only for APIs whose parsed form points into the buffer
// (Produce among them). Samsa's handlers decode the bodies they are given,
// so every request keeps its bytes until its handler returns.
//
// A frame read ahead of an unanswered request of its connection
// (Config.MaxInFlightRequestsPerConnection above one) waits for its turn
// holding its bytes, and its turn may depend on another connection's
// request (an acks=-1 produce answers once a follower has fetched). So such
// a frame is admitted only if, after it, more than a tenth of the pool is
// still available; otherwise its reader waits until its connection has
// nothing unanswered. The frames read ahead then never hold more than nine
// tenths of the pool, every other holder gives its bytes back once a
// handler returns, and a reader waiting for memory is always woken.

// memoryPoolResumeDivisor sets the mark readers wait for after finding the
// pool spent: more than size / memoryPoolResumeDivisor available.
const memoryPoolResumeDivisor = 10

// memoryPool counts the bytes of requests read and not yet handled. Its
// methods are safe for concurrent use; time enters as an argument.
type memoryPool struct {
	// sizeBytes is queued.max.request.bytes; 0 counts the bytes without
	// bounding them (Kafka's default of -1).
	sizeBytes int64
	// resumeBytes is the availability readers wait for after a refusal.
	resumeBytes int64
	// used is the bytes allocated and not released.
	// Invariant: used >= 0; used may exceed sizeBytes by less than one
	// allocation (an allocation succeeds while used < sizeBytes).
	used atomic.Int64

	// waiters counts readers waiting for memory; releases wake them only
	// when it is positive, so the common case takes no lock.
	waiters atomic.Int32
	mu      struct {
		sync.Mutex
		// wakeup is closed, and replaced, when memory rises above
		// resumeBytes while readers wait.
		wakeup chan struct{}
	}

	// depletedSinceNanos is when the pool first refused an allocation
	// since it last succeeded one or released memory (Unix nanoseconds,
	// 0 when not depleted); depletedNanos totals the closed depleted
	// periods (Kafka's MemoryPoolDepletedTimeTotal).
	depletedSinceNanos atomic.Int64
	depletedNanos      atomic.Int64
	// refusals counts allocations refused because nothing was left.
	refusals atomic.Uint64
}

func newMemoryPool(sizeBytes int64) *memoryPool {
	p := &memoryPool{}
	if sizeBytes > 0 {
		p.sizeBytes = sizeBytes
		p.resumeBytes = sizeBytes / memoryPoolResumeDivisor
	}
	p.mu.wakeup = make(chan struct{})
	return p
}

// bounded reports whether queued.max.request.bytes is set.
func (p *memoryPool) bounded() bool { return p.sizeBytes > 0 }

// available is the bytes left, negative after an allocation larger than
// what was left; 0 for an unbounded pool.
func (p *memoryPool) available() int64 {
	if !p.bounded() {
		return 0
	}
	return p.sizeBytes - p.used.Load()
}

// tryAllocate takes n bytes if any memory is left (Kafka's non-strict
// mode), or, with ahead, only if more than resumeBytes stay available
// after it (a frame read ahead; see the top of this file). An unbounded
// pool always succeeds (readers do not ask one; see awaitQueuedBytes).
func (p *memoryPool) tryAllocate(n int64, ahead bool, now time.Time) bool {
	if !p.bounded() {
		p.used.Add(n)
		return true
	}
	for {
		used := p.used.Load()
		left := p.sizeBytes - used
		if left < 1 {
			p.refusals.Add(1)
			p.depletedSinceNanos.CompareAndSwap(0, now.UnixNano())
			return false
		}
		if ahead && left-n <= p.resumeBytes {
			return false
		}
		if p.used.CompareAndSwap(used, used+n) {
			p.endDepletion(now)
			return true
		}
	}
}

// release gives back n bytes of an allocation and wakes waiting readers
// once more than resumeBytes are available.
func (p *memoryPool) release(n int64, now time.Time) {
	used := p.used.Add(-n)
	if invariantsEnabled && used < 0 {
		panic("network: request memory released more than allocated")
	}
	if !p.bounded() {
		return
	}
	p.endDepletion(now)
	if p.waiters.Load() > 0 && p.sizeBytes-used > p.resumeBytes {
		p.mu.Lock()
		close(p.mu.wakeup)
		p.mu.wakeup = make(chan struct{})
		p.mu.Unlock()
	}
}

// endDepletion closes a depleted period, if one is open, into the total.
func (p *memoryPool) endDepletion(now time.Time) {
	if since := p.depletedSinceNanos.Swap(0); since != 0 {
		p.depletedNanos.Add(max(now.UnixNano()-since, 0))
	}
}

// wait registers a waiting reader and returns the channel that is closed
// when memory rises above resumeBytes; the caller must look at the pool
// again after registering (a release in between may have missed it) and
// call done when it stops waiting.
func (p *memoryPool) wait() (wakeup <-chan struct{}, done func()) {
	p.waiters.Add(1)
	p.mu.Lock()
	wakeup = p.mu.wakeup
	p.mu.Unlock()
	return wakeup, func() { p.waiters.Add(-1) }
}

// depletedTime is the total time allocations were refused, the period in
// progress included.
func (p *memoryPool) depletedTime(now time.Time) time.Duration {
	total := p.depletedNanos.Load()
	if since := p.depletedSinceNanos.Load(); since != 0 {
		total += max(now.UnixNano()-since, 0)
	}
	return time.Duration(total)
}

// awaitQueuedBytes is called with the connection's in-flight token taken
// and the next frame's first byte arrived. It peeks the frame's size and
// takes as many bytes from the server's memory pool, waiting without
// reading the socket while the pool is spent (see the top of this file).
// It returns the bytes taken, 0 for a size the frame's read refuses (the
// read reports it), and false when the connection closed or the server
// stopped reading meanwhile.
func (c *connection) awaitQueuedBytes(reader *bufio.Reader, maxBytes int32) (int64, bool) {
	if !c.memoryPool.bounded() {
		// Kafka's default of -1: nothing to count on the hot path, as
		// Kafka's MemoryPool.NONE counts nothing.
		return 0, true
	}
	s := c.server
	prefix, err := reader.Peek(4)
	if err != nil {
		return 0, true // the frame's read reports it
	}
	size := int64(int32(binary.BigEndian.Uint32(prefix)))
	if size < minFrameBytes || size > int64(maxBytes) {
		return 0, true
	}
	pool := c.memoryPool
	// The reader's own token is in inFlight: more than one means earlier
	// requests of the connection are unanswered, so this frame reads ahead.
	readsAhead := func() bool { return len(c.inFlight) > 1 }
	if pool.tryAllocate(size, readsAhead(), time.Now()) {
		return size, true
	}
	s.counters.memoryPoolWaits.Add(1)
	s.counters.readersWaitingForMemory.Add(1)
	defer s.counters.readersWaitingForMemory.Add(-1)
	for {
		wakeup, done := pool.wait()
		// Look again: memory released before wait registered woke nobody.
		if pool.tryAllocate(size, readsAhead(), time.Now()) {
			done()
			return size, true
		}
		select {
		case <-wakeup:
		case <-c.turn:
			// An earlier request of the connection was answered: the frame
			// may no longer be reading ahead. addPending checks its own
			// condition, so taking the signal here is safe.
		case <-c.closed:
			done()
			return 0, false
		case <-s.stopReading:
			done()
			c.stopReading()
			return 0, false
		}
		done()
	}
}

// releaseQueuedBytes gives the request's bytes back to the server's memory
// pool, once: when a handler is done with it, or when it will never reach
// one.
func (r *Request) releaseQueuedBytes() {
	if r.queuedBytes == 0 || r.connection == nil {
		return
	}
	n := r.queuedBytes
	r.queuedBytes = 0
	r.connection.memoryPool.release(n, time.Now())
}
