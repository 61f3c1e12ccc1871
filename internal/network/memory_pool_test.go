package network

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// TestMemoryPoolAllocation steps the pool through Kafka's non-strict
// allocation: any memory left admits an allocation however large, the pool
// then goes below zero and refuses until memory is given back, and the
// time it spent refusing is totalled.
func TestMemoryPoolAllocation(t *testing.T) {
	at := func(ms int64) time.Time { return time.UnixMilli(1_000_000 + ms) }
	p := newMemoryPool(1000)
	steps := []struct {
		what      string
		allocate  int64 // > 0 allocates, < 0 releases
		ahead     bool
		ok        bool
		available int64
	}{
		{"a first request", 600, false, true, 400},
		{"one larger than what is left, while anything is", 700, false, true, -300},
		{"nothing left: refused", 1, false, false, -300},
		{"still refused", 10, false, false, -300},
		{"the large one handled", -700, false, true, 400},
		{"read ahead, leaving more than a tenth", 250, true, true, 150},
		{"read ahead, leaving a tenth or less: refused", 50, true, false, 150},
		{"not ahead, the same size: admitted", 50, false, true, 100},
	}
	for i, step := range steps {
		now := at(int64(i) * 10)
		ok := true
		if step.allocate > 0 {
			ok = p.tryAllocate(step.allocate, step.ahead, now)
		} else {
			p.release(-step.allocate, now)
		}
		if ok != step.ok || p.available() != step.available {
			t.Fatalf("%s: ok %v available %d, want %v and %d", step.what, ok, p.available(), step.ok, step.available)
		}
	}
	// Refused from step 2 (20 ms) until the release at step 4 (40 ms).
	if got := p.depletedTime(at(1000)); got != 20*time.Millisecond {
		t.Fatalf("depleted %v, want 20ms", got)
	}
	if p.refusals.Load() != 2 {
		t.Fatalf("refusals %d, want 2 (the read-ahead refusal is not a depletion)", p.refusals.Load())
	}

	unbounded := newMemoryPool(-1)
	if !unbounded.tryAllocate(1<<40, false, at(0)) || unbounded.used.Load() != 1<<40 || unbounded.available() != 0 {
		t.Fatal("an unbounded pool refused or did not count")
	}
}

// TestMemoryPoolWakesWaitersAboveATenth: a waiting reader is woken once a
// release leaves more than a tenth of the pool available, not before.
func TestMemoryPoolWakesWaitersAboveATenth(t *testing.T) {
	p := newMemoryPool(1000)
	now := time.Unix(1, 0)
	p.tryAllocate(1000, false, now)
	wakeup, done := p.wait()
	defer done()
	p.release(50, now) // 50 available: a twentieth
	select {
	case <-wakeup:
		t.Fatal("woken with a twentieth of the pool available")
	default:
	}
	p.release(60, now) // 110 available
	select {
	case <-wakeup:
	default:
		t.Fatal("not woken with more than a tenth available")
	}
}

// memoryPoolServer is a server bounding queued request bytes to maxBytes,
// with a handler that holds every request until the test lets it go.
func memoryPoolServer(t *testing.T, maxBytes int64) (*Server, *gatedHandler) {
	handler := newGatedHandler(true)
	s := startServer(t, Config{QueuedMaxRequestBytes: maxBytes, NumIOThreads: 8}, handler)
	return s, handler
}

// frameBytes is the size prefix of a Metadata v1 request from the test
// client with a body of n bytes.
func frameBytes(n int) int64 {
	return int64(len(requestFrame(3, 1, 0, stringPointer("test"), nil, make([]byte, n))) - 4)
}

// TestQueuedMaxRequestBytesPausesAndResumesReading: with the pool full of
// requests being handled, the readers of further connections stop before
// reading a request's body; as handlers finish they resume, and every
// request is answered with its own bytes.
func TestQueuedMaxRequestBytesPausesAndResumesReading(t *testing.T) {
	const bodyBytes = 1000
	s, handler := memoryPoolServer(t, 3*frameBytes(bodyBytes))
	const connections = 6
	clients := make([]*testClient, connections)
	for i := range clients {
		clients[i] = dial(t, s)
	}
	body := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, bodyBytes) }
	for i := range 3 {
		clients[i].send(3, 1, int32(i), body(i))
		handler.next(t)
	}
	if used := s.Stats().MemoryPoolUsedBytes; used != 3*frameBytes(bodyBytes) {
		t.Fatalf("%d bytes used with three requests in Handle, want %d", used, 3*frameBytes(bodyBytes))
	}
	for i := 3; i < connections; i++ {
		clients[i].send(3, 1, int32(i), body(i))
	}
	waitFor(t, "three readers waiting for memory", func() bool { return s.Stats().ReadersWaitingMemory == 3 })
	select {
	case req := <-handler.entered:
		t.Fatalf("request %d was handled with the pool spent", req.CorrelationID)
	default:
	}
	stats := s.Stats()
	if stats.MemoryPoolWaits != 3 || stats.MemoryPoolAvailable != 0 {
		t.Fatalf("waits %d available %d, want 3 and 0", stats.MemoryPoolWaits, stats.MemoryPoolAvailable)
	}

	// Each request handled frees room for one more.
	for range connections {
		handler.release <- struct{}{}
	}
	for i, client := range clients {
		client.expectResponse(false, int32(i), string(body(i)))
	}
	waitFor(t, "the pool to empty", func() bool { return s.Stats().MemoryPoolUsedBytes == 0 })
	if stats := s.Stats(); stats.MemoryPoolDepleted <= 0 || stats.ReadersWaitingMemory != 0 {
		t.Fatalf("depleted %v, readers waiting %d after the run", stats.MemoryPoolDepleted, stats.ReadersWaitingMemory)
	}
}

// TestQueuedMaxRequestBytesAdmitsALargerRequest: a request larger than the
// whole bound is admitted while memory is left, as Kafka's pool does, and
// so is one larger than what is left; the next waits until they are
// handled, and nothing deadlocks.
func TestQueuedMaxRequestBytesAdmitsALargerRequest(t *testing.T) {
	s, handler := memoryPoolServer(t, 1000)
	small, large, next := dial(t, s), dial(t, s), dial(t, s)
	small.send(3, 1, 1, make([]byte, 600))
	handler.next(t)
	large.send(3, 1, 2, make([]byte, 5000))
	handler.next(t)
	if available := s.Stats().MemoryPoolAvailable; available >= 0 {
		t.Fatalf("available %d after a request larger than the bound, want below zero", available)
	}
	next.send(3, 1, 3, []byte("next"))
	waitFor(t, "the next reader to wait", func() bool { return s.Stats().ReadersWaitingMemory == 1 })
	for range 3 {
		handler.release <- struct{}{}
	}
	small.expectResponse(false, 1, string(make([]byte, 600)))
	large.expectResponse(false, 2, string(make([]byte, 5000)))
	next.expectResponse(false, 3, "next")
	waitFor(t, "the pool to empty", func() bool { return s.Stats().MemoryPoolUsedBytes == 0 })
}

// TestQueuedMaxRequestBytesReadAheadLeavesATenth: a frame read ahead of
// an unanswered request of its connection waits while taking its bytes
// would leave a tenth of the pool or less, where a frame not read ahead is
// admitted while anything is left, so that other connections (a
// follower's fetch that an acks=-1 produce waits for) always find memory;
// the held-back frame is read once its connection's earlier request has
// been answered.
func TestQueuedMaxRequestBytesReadAheadLeavesATenth(t *testing.T) {
	handler := newGatedHandler(true)
	request := frameBytes(3000)
	cfg := orderedConfig()
	cfg.QueuedMaxRequestBytes = 2 * request
	s := startServer(t, cfg, handler)
	client := dial(t, s)
	payload := func(i int32) []byte { return bytes.Repeat([]byte{byte('0' + i)}, 3000) }
	const requests = 3
	for i := int32(1); i <= requests; i++ {
		client.send(pipelinedKey, 3, i, payload(i))
	}
	if first := handler.next(t); first.CorrelationID != 1 {
		t.Fatalf("request %d handled first", first.CorrelationID)
	}
	waitFor(t, "the second frame's reader to wait", func() bool { return s.Stats().ReadersWaitingMemory == 1 })
	if used := s.Stats().MemoryPoolUsedBytes; used != request {
		t.Fatalf("%d bytes used, want the first request's %d", used, request)
	}
	// Another connection still gets memory.
	other := dial(t, s)
	other.send(3, 1, 99, []byte("other"))
	if otherRequest := handler.next(t); otherRequest.CorrelationID != 99 {
		t.Fatalf("request %d handled, want the other connection's", otherRequest.CorrelationID)
	}
	for range requests + 1 {
		handler.release <- struct{}{}
	}
	for i := int32(1); i <= requests; i++ {
		client.expectResponse(false, i, string(payload(i)))
	}
	other.expectResponse(false, 99, "other")
	waitFor(t, "the pool to empty", func() bool { return s.Stats().MemoryPoolUsedBytes == 0 })
}

// TestQueuedMaxRequestBytesOwnPoolPerListener: a listener with a pool of
// its own (the controller listener) is served while the shared pool is
// spent by another listener's requests.
func TestQueuedMaxRequestBytesOwnPoolPerListener(t *testing.T) {
	handler := newGatedHandler(true)
	s := startServer(t, Config{
		QueuedMaxRequestBytes: frameBytes(1000),
		NumIOThreads:          4,
		Listeners: []ListenerSpec{
			{Name: "CLIENTS", Address: "127.0.0.1:0"},
			{Name: "CONTROLLER", Address: "127.0.0.1:0", OwnMemoryPool: true},
		},
	}, handler)
	dialListener := func(i int) *testClient {
		conn, err := net.DialTimeout("tcp", s.Addrs()[i].String(), testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return &testClient{t: t, conn: conn.(*net.TCPConn)}
	}
	holder, waiter, controller := dialListener(0), dialListener(0), dialListener(1)
	holder.send(3, 1, 1, make([]byte, 1000))
	handler.next(t)
	waiter.send(3, 1, 2, []byte("waits"))
	waitFor(t, "the second client to wait", func() bool { return s.Stats().ReadersWaitingMemory == 1 })
	controller.send(3, 1, 3, []byte("controller"))
	if req := handler.next(t); req.CorrelationID != 3 {
		t.Fatalf("request %d handled, want the controller listener's", req.CorrelationID)
	}
	for range 3 {
		handler.release <- struct{}{}
	}
	holder.expectResponse(false, 1, string(make([]byte, 1000)))
	waiter.expectResponse(false, 2, "waits")
	controller.expectResponse(false, 3, "controller")
}
