package network

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// pipelinedKey is the API key the ordering tests pipeline (Produce's).
const pipelinedKey = 0

// orderedConfig is a server that reads up to five requests of a connection
// ahead and pipelines pipelinedKey, on more handler goroutines than one, so
// that only the ordering rule keeps a connection's requests one at a time.
func orderedConfig() Config {
	return Config{MaxInFlightRequestsPerConnection: 5, NumIOThreads: 4, PipelinedAPIKeys: []int16{pipelinedKey}}
}

// gatedHandler holds every Handle call until the test releases it, and
// records the order calls began in and how many ran at once.
type gatedHandler struct {
	entered chan *Request
	release chan struct{}
	// respond says whether Handle responds (with the body) before returning.
	respond bool

	mu struct {
		sync.Mutex
		running    int
		runningMax int
		order      []int32
	}
}

func newGatedHandler(respond bool) *gatedHandler {
	return &gatedHandler{entered: make(chan *Request, 64), release: make(chan struct{}), respond: respond}
}

func (h *gatedHandler) Handle(ctx context.Context, req *Request) {
	h.mu.Lock()
	h.mu.running++
	h.mu.runningMax = max(h.mu.runningMax, h.mu.running)
	h.mu.order = append(h.mu.order, req.CorrelationID)
	h.mu.Unlock()
	h.entered <- req
	<-h.release
	if h.respond {
		req.Respond(BytesResponse(req.Body))
	}
	h.mu.Lock()
	h.mu.running--
	h.mu.Unlock()
}

func (h *gatedHandler) next(t *testing.T) *Request {
	t.Helper()
	select {
	case req := <-h.entered:
		return req
	case <-time.After(testTimeout):
		t.Fatal("no request reached the handler")
		return nil
	}
}

// TestPipelinedRequestsHandledOneAtATimeInOrder sends five pipelined
// requests at once: the reader reads ahead while the first is handled, yet
// Handle runs for one request of the connection at a time, in arrival order,
// though four handler goroutines are free; responses come back in order.
func TestPipelinedRequestsHandledOneAtATimeInOrder(t *testing.T) {
	handler := newGatedHandler(true)
	s := startServer(t, orderedConfig(), handler)
	client := dial(t, s)
	const requests = 5
	for i := int32(1); i <= requests; i++ {
		client.send(pipelinedKey, 3, i, []byte(fmt.Sprint("p", i)))
	}
	first := handler.next(t)
	// While the first request is in Handle, the next is read off the socket.
	waitFor(t, "the second request read ahead", func() bool { return s.Stats().RequestsReceived >= 2 })
	if first.CorrelationID != 1 {
		t.Fatalf("first request handled is %d, want 1", first.CorrelationID)
	}
	for i := int32(1); i <= requests; i++ {
		handler.release <- struct{}{}
		if i < requests {
			if req := handler.next(t); req.CorrelationID != i+1 {
				t.Fatalf("request %d handled after %d", req.CorrelationID, i)
			}
		}
	}
	for i := int32(1); i <= requests; i++ {
		client.expectResponse(false, i, fmt.Sprint("p", i))
	}
	handler.mu.Lock()
	defer handler.mu.Unlock()
	if handler.mu.runningMax != 1 {
		t.Fatalf("%d Handle calls of one connection ran at once, want 1", handler.mu.runningMax)
	}
	t.Logf("handled in order %v", handler.mu.order)
}

// TestParkedPipelinedRequestHoldsBackTheNext: a pipelined request whose
// Handle returned without answering (a parked acks=-1 produce, its batches
// appended, waiting for its replicas) holds back the next pipelined request
// of its connection until it answers, as Kafka's muted channel does: were
// the next appended meanwhile, a producer could have up to five batches
// appended that it has not heard of, and its retries after a producer state
// reload (which keeps each producer's last batch only) would answer
// OUT_OF_ORDER_SEQUENCE_NUMBER and make it append them again under a new
// epoch. The requests are still read ahead meanwhile.
func TestParkedPipelinedRequestHoldsBackTheNext(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, orderedConfig(), handler)
	client := dial(t, s)
	const requests = 3
	for i := int32(1); i <= requests; i++ {
		client.send(pipelinedKey, 3, i, []byte(fmt.Sprint("p", i)))
	}
	for i := int32(1); i <= requests; i++ {
		req := handler.next(t)
		if req.CorrelationID != i {
			t.Fatalf("request %d handed on as number %d", req.CorrelationID, i)
		}
		if i < requests {
			waitFor(t, "the next request read ahead", func() bool { return s.Stats().RequestsReceived >= uint64(i+1) })
			select {
			case early := <-handler.requests:
				t.Fatalf("request %d handed on while request %d was parked unanswered", early.CorrelationID, i)
			case <-time.After(50 * time.Millisecond):
			}
		}
		req.Respond(BytesResponse(req.Body))
		client.expectResponse(false, i, fmt.Sprint("p", i))
	}
}

// TestOtherRequestsWaitForEarlierAnswers: a request of a key that is not
// pipelined is handed on only once every earlier request of its connection
// has been answered, as Kafka mutes a connection; and a pipelined request
// behind it waits for its answer too.
func TestOtherRequestsWaitForEarlierAnswers(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, orderedConfig(), handler)
	client := dial(t, s)
	client.send(pipelinedKey, 3, 1, []byte("p1"))
	client.send(3, 1, 2, []byte("m2"))
	client.send(pipelinedKey, 3, 3, []byte("p3"))
	first := handler.next(t)
	waitFor(t, "the second request read ahead", func() bool { return s.Stats().RequestsReceived >= 2 })
	select {
	case req := <-handler.requests:
		t.Fatalf("request %d handed on while request 1 was unanswered", req.CorrelationID)
	case <-time.After(50 * time.Millisecond):
	}
	first.Respond(BytesResponse(first.Body))
	client.expectResponse(false, 1, "p1")
	second := handler.next(t)
	if second.CorrelationID != 2 {
		t.Fatalf("request %d handed on second", second.CorrelationID)
	}
	waitFor(t, "the third request read ahead", func() bool { return s.Stats().RequestsReceived >= 3 })
	select {
	case req := <-handler.requests:
		t.Fatalf("request %d handed on while request 2 was unanswered", req.CorrelationID)
	case <-time.After(50 * time.Millisecond):
	}
	second.Respond(BytesResponse(second.Body))
	client.expectResponse(false, 2, "m2")
	third := handler.next(t)
	third.Respond(BytesResponse(third.Body))
	client.expectResponse(false, 3, "p3")
}

// TestPipelinedConnectionsAreIndependent: one connection's request held in
// Handle does not hold back another connection's.
func TestPipelinedConnectionsAreIndependent(t *testing.T) {
	handler := newGatedHandler(true)
	s := startServer(t, orderedConfig(), handler)
	a, b := dial(t, s), dial(t, s)
	a.send(pipelinedKey, 3, 1, []byte("a1"))
	handler.next(t)
	b.send(pipelinedKey, 3, 1, []byte("b1"))
	handler.next(t)
	handler.release <- struct{}{}
	handler.release <- struct{}{}
	a.expectResponse(false, 1, "a1")
	b.expectResponse(false, 1, "b1")
}

// preparingHandler is a gatedHandler that also prepares requests: Prepare
// records the body, and panics for a body "panic".
type preparingHandler struct {
	*gatedHandler
	prepared chan int32
}

func (h *preparingHandler) Prepare(req *Request) {
	if string(req.Body) == "panic" {
		panic("test panic in Prepare")
	}
	req.Prepared = "prepared " + string(req.Body)
	h.prepared <- req.CorrelationID
}

// TestPrepareRunsWhilePreviousIsHandled: a pipelined request is prepared as
// soon as it is read, while the previous request of its connection is still
// in Handle, and Handle finds what Prepare left.
func TestPrepareRunsWhilePreviousIsHandled(t *testing.T) {
	handler := &preparingHandler{gatedHandler: newGatedHandler(false), prepared: make(chan int32, 8)}
	s := startServer(t, orderedConfig(), handler)
	client := dial(t, s)
	client.send(pipelinedKey, 3, 1, []byte("p1"))
	client.send(pipelinedKey, 3, 2, []byte("p2"))
	first := handler.next(t)
	for want := int32(1); want <= 2; want++ {
		select {
		case id := <-handler.prepared:
			if id != want {
				t.Fatalf("request %d prepared, want %d", id, want)
			}
		case <-time.After(testTimeout):
			t.Fatalf("request %d not prepared while request 1 was in Handle", want)
		}
	}
	if first.Prepared != "prepared p1" {
		t.Fatalf("Handle found Prepared = %v", first.Prepared)
	}
	handler.release <- struct{}{}
	first.Respond(BytesResponse([]byte(first.Prepared.(string))))
	second := handler.next(t)
	handler.release <- struct{}{}
	second.Respond(BytesResponse([]byte(second.Prepared.(string))))
	client.expectResponse(false, 1, "prepared p1")
	client.expectResponse(false, 2, "prepared p2")

	// A Prepare that panics closes only its connection.
	client.send(pipelinedKey, 3, 3, []byte("panic"))
	client.expectClosed()
	other := dial(t, s)
	other.send(pipelinedKey, 3, 1, []byte("p1"))
	req := handler.next(t)
	handler.release <- struct{}{}
	req.Respond(BytesResponse(req.Body))
	other.expectResponse(false, 1, "p1")
}
