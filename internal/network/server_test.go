package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestFramingRoundTrip(t *testing.T) {
	type seen struct {
		key, version int16
		clientID     *string
		body         string
		conn         ConnInfo
	}
	requests := make(chan seen, 16)
	handler := HandlerFunc(func(ctx context.Context, req *Request) {
		requests <- seen{req.APIKey, req.APIVersion, req.ClientID, string(req.Body), *req.Conn}
		req.Respond(BytesResponse(append([]byte("re:"), req.Body...)))
	})
	s := startServer(t, Config{}, handler)
	client := dial(t, s)

	for _, tc := range []struct {
		name         string
		key, version int16
		clientID     *string
		tags         []byte
		taggedReply  bool
	}{
		{"header v1", 3, 1, stringPointer("app"), nil, false},
		{"null client id", 3, 1, nil, nil, false},
		{"header v2 with tags", 3, 12, stringPointer("app"), []byte{1, 7, 2, 0xaa, 0xbb}, true},
		{"ApiVersions v3 answers header v0", 18, 3, stringPointer("app"), []byte{0}, false},
		{"ApiVersions v0", 18, 0, stringPointer("app"), nil, false},
		{"unknown key passes through", 30000, 0, stringPointer("app"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "payload " + tc.name
			client.write(requestFrame(tc.key, tc.version, 42, tc.clientID, tc.tags, []byte(body)))
			client.expectResponse(tc.taggedReply, 42, "re:"+body)
			got := <-requests
			if got.key != tc.key || got.version != tc.version || got.body != body {
				t.Errorf("handler saw %+v", got)
			}
			if (got.clientID == nil) != (tc.clientID == nil) || got.clientID != nil && *got.clientID != *tc.clientID {
				t.Errorf("client id = %v, want %v", got.clientID, tc.clientID)
			}
			if got.conn.Listener != "PLAINTEXT" || got.conn.Principal != "User:ANONYMOUS" || got.conn.ID == 0 ||
				got.conn.RemoteAddr.String() != client.conn.LocalAddr().String() {
				t.Errorf("conn info = %+v", got.conn)
			}
		})
	}
}

func TestMultipleListeners(t *testing.T) {
	s := startServer(t, Config{Listeners: []ListenerSpec{
		{Name: "CLIENT", Address: "127.0.0.1:0"}, {Name: "REPLICATION", Address: "127.0.0.1:0"},
	}}, HandlerFunc(func(ctx context.Context, req *Request) {
		req.Respond(BytesResponse([]byte(req.Conn.Listener)))
	}))
	for i, name := range []string{"CLIENT", "REPLICATION"} {
		conn, err := net.Dial("tcp", s.Addrs()[i].String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		client := &testClient{t: t, conn: conn.(*net.TCPConn)}
		client.send(3, 1, int32(i), nil)
		client.expectResponse(false, int32(i), name)
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Listeners: []ListenerSpec{{Name: "A", Address: "nonsense"}}},
		{Listeners: []ListenerSpec{{Name: "A", Address: ":0"}, {Name: "A", Address: ":0"}}},
		{Listeners: []ListenerSpec{{Name: "A", Address: ":0"}}, SocketRequestMaxBytes: 4},
		{Listeners: []ListenerSpec{{Name: "A", Address: ":0"}}, MaxInFlightRequestsPerConnection: 1000},
	} {
		if _, err := NewServer(cfg, echoHandler, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("NewServer(%+v) err = %v, want ErrConfig", cfg, err)
		}
	}
}

// TestOneRequestInFlightByDefault checks Kafka's ordering guarantee: the
// second request of a connection is not read until the first is answered.
func TestOneRequestInFlightByDefault(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, Config{}, handler)
	client := dial(t, s)
	client.send(3, 1, 1, []byte("a"))
	client.send(3, 1, 2, []byte("b"))
	first := handler.next(t)
	// A negative can only be checked over some time; a short wait suffices
	// because with more than one request in flight allowed, the second
	// request reaches the handler within microseconds.
	select {
	case req := <-handler.requests:
		t.Fatalf("request %d dispatched while request 1 was in flight", req.CorrelationID)
	case <-time.After(50 * time.Millisecond):
	}
	if got := s.Stats().RequestsReceived; got != 1 {
		t.Fatalf("RequestsReceived = %d, want 1", got)
	}
	first.Respond(BytesResponse(first.Body))
	second := handler.next(t)
	second.Respond(BytesResponse(second.Body))
	client.expectResponse(false, 1, "a")
	client.expectResponse(false, 2, "b")
}

func TestPipelinedResponsesInRequestOrder(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, Config{MaxInFlightRequestsPerConnection: 5, NumIOThreads: 3}, handler)
	client := dial(t, s)
	for i := int32(1); i <= 5; i++ {
		client.send(3, 12, i, []byte(fmt.Sprint("r", i)))
	}
	parked := make([]*Request, 0, 5)
	for range 5 {
		parked = append(parked, handler.next(t))
	}
	// Answer in reverse order, each from its own goroutine.
	var wg sync.WaitGroup
	for i := len(parked) - 1; i >= 0; i-- {
		wg.Go(func() { parked[i].Respond(BytesResponse(parked[i].Body)) })
		wg.Wait()
	}
	for i := int32(1); i <= 5; i++ {
		client.expectResponse(true, i, fmt.Sprint("r", i))
	}
}

func TestNoResponseKeepsOrder(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, Config{MaxInFlightRequestsPerConnection: 3}, handler)
	client := dial(t, s)
	for i := int32(1); i <= 3; i++ {
		client.send(0, 3, i, []byte(fmt.Sprint("r", i)))
	}
	byID := map[int32]*Request{}
	for range 3 {
		req := handler.next(t)
		byID[req.CorrelationID] = req
	}
	byID[3].Respond(BytesResponse(byID[3].Body))
	byID[2].Respond(NoResponse)
	byID[1].Respond(BytesResponse(byID[1].Body))
	client.expectResponse(false, 1, "r1")
	client.expectResponse(false, 3, "r3")
	// The connection goes on.
	client.send(0, 3, 4, []byte("r4"))
	req := handler.next(t)
	req.Respond(BytesResponse(req.Body))
	client.expectResponse(false, 4, "r4")
	waitFor(t, "three responses counted", func() bool { return s.Stats().ResponsesSent == 3 })
}

func TestCloseResponse(t *testing.T) {
	s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
		req.Respond(Response{Chunks: []Chunk{{Bytes: []byte("bye")}}, Close: true})
	}))
	client := dial(t, s)
	client.send(3, 1, 9, nil)
	client.expectResponse(false, 9, "bye")
	client.expectClosed()

	s2 := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
		req.Respond(Response{None: true, Close: true})
	}))
	client = dial(t, s2)
	client.send(3, 1, 9, nil)
	client.expectClosed()
}

// TestBadFramesCloseOnlyTheirConnection sends each kind of bad frame on its
// own connection while another connection keeps being served.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	var handled atomic.Int64
	s := startServer(t, Config{SocketRequestMaxBytes: 1024}, HandlerFunc(func(ctx context.Context, req *Request) {
		handled.Add(1)
		req.Respond(BytesResponse(req.Body))
	}))
	good := dial(t, s)
	for i, tc := range []struct {
		name  string
		bytes []byte
		// closeWrite ends the client's side after the bytes: a truncated frame.
		closeWrite bool
	}{
		{name: "oversize", bytes: []byte{0, 0, 0x07, 0xd0}}, // 2000 > 1024, nothing else sent
		{name: "oversize max int", bytes: []byte{0x7f, 0xff, 0xff, 0xff}},
		{name: "negative size", bytes: []byte{0xff, 0xff, 0xff, 0xfe}},
		{name: "size below a header", bytes: []byte{0, 0, 0, 4, 0, 3, 0, 1}},
		{name: "truncated frame", bytes: requestFrame(3, 1, 1, nil, nil, []byte("body"))[:10], closeWrite: true},
		{name: "client id past end", bytes: []byte{0, 0, 0, 11, 0, 3, 0, 1, 0, 0, 0, 7, 0, 9, 'x'}},
		{name: "bad tagged fields", bytes: requestFrame(3, 12, 1, nil, []byte{5, 1}, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := dial(t, s)
			bad.write(tc.bytes)
			if tc.closeWrite {
				bad.conn.CloseWrite()
			}
			bad.expectClosed()
			waitFor(t, "rejection counted", func() bool { return s.Stats().RequestsRejected == uint64(i+1) })
			good.send(3, 1, int32(i), []byte("still here"))
			good.expectResponse(false, int32(i), "still here")
		})
	}
	if got := handled.Load(); got != 7 {
		t.Errorf("handler called %d times, want 7 (only the good connection)", got)
	}
}

func TestClientCloseAfterRequestsIsAnswered(t *testing.T) {
	s := startServer(t, Config{}, echoHandler)
	client := dial(t, s)
	client.send(3, 1, 5, []byte("x"))
	client.conn.CloseWrite()
	client.expectResponse(false, 5, "x")
	client.expectClosed()
	waitFor(t, "connection closed", func() bool { return s.Stats().ConnectionsActive == 0 })
}

func TestIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := startServer(t, Config{ConnectionsMaxIdleMs: idle.Milliseconds()}, echoHandler)

	// A busy connection outlives the idle timeout.
	busy := dial(t, s)
	ticker := time.NewTicker(idle / 4)
	defer ticker.Stop()
	for i := range int32(8) {
		<-ticker.C
		busy.send(3, 1, i, []byte("tick"))
		busy.expectResponse(false, i, "tick")
	}

	idleClient := dial(t, s)
	start := time.Now()
	idleClient.expectClosed()
	if elapsed := time.Since(start); elapsed < idle*3/4 {
		t.Errorf("idle connection closed after %v, want about %v", elapsed, idle)
	}
}

// TestIdleTimeoutWaitsForSlowHandler checks that a connection waiting for a
// response is not idle, however long the handler takes.
func TestIdleTimeoutWaitsForSlowHandler(t *testing.T) {
	const idle = 100 * time.Millisecond
	handler := newParkingHandler()
	s := startServer(t, Config{ConnectionsMaxIdleMs: idle.Milliseconds()}, handler)
	client := dial(t, s)
	client.send(3, 1, 1, []byte("slow"))
	req := handler.next(t)
	deadline := time.Now().Add(3 * idle)
	for time.Now().Before(deadline) { // several idle periods pass with the request parked
		time.Sleep(idle / 2)
		if s.Stats().ConnectionsActive != 1 {
			t.Fatal("connection closed while its request was in flight")
		}
	}
	req.Respond(BytesResponse(req.Body))
	client.expectResponse(false, 1, "slow")
	client.expectClosed() // and idle again afterwards
}

func TestGracefulShutdown(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, Config{MaxInFlightRequestsPerConnection: 2}, handler)
	working := dial(t, s)
	idle := dial(t, s)
	working.send(3, 1, 1, []byte("in flight"))
	inFlight := handler.next(t)

	shutdownDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shutdownDone <- s.Shutdown(ctx)
	}()
	waitFor(t, "reading to stop", s.isStopping)
	if conn, err := net.DialTimeout("tcp", s.Addrs()[0].String(), time.Second); err == nil {
		conn.Close()
		t.Fatal("listener still accepting after Shutdown")
	}
	// A request sent now is not read.
	working.send(3, 1, 2, []byte("too late"))
	idle.expectClosed()

	inFlight.Respond(BytesResponse(inFlight.Body))
	working.expectResponse(false, 1, "in flight")
	working.expectClosed()
	if err := <-shutdownDone; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	select {
	case req := <-handler.requests:
		t.Fatalf("request %d handled after shutdown began", req.CorrelationID)
	default:
	}
	if st := s.Stats(); st.ConnectionsActive != 0 {
		t.Errorf("%d connections still open", st.ConnectionsActive)
	}
}

func TestShutdownDeadlineClosesConnections(t *testing.T) {
	handlerContexts := make(chan context.Context, 1)
	s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
		handlerContexts <- ctx // never responds
	}))
	client := dial(t, s)
	client.send(3, 1, 1, nil)
	handlerContext := <-handlerContexts

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	client.expectClosed()
	select {
	case <-handlerContext.Done():
	case <-time.After(testTimeout):
		t.Fatal("handler context not cancelled")
	}
}

func TestShutdownBeforeStart(t *testing.T) {
	s, err := NewServer(Config{Listeners: []ListenerSpec{{Name: "A", Address: "127.0.0.1:0"}}}, echoHandler, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); !errors.Is(err, ErrServerState) {
		t.Fatalf("Start after Shutdown = %v", err)
	}
}

func TestRespondAfterConnectionClosed(t *testing.T) {
	handler := newParkingHandler()
	s := startServer(t, Config{MaxInFlightRequestsPerConnection: 2}, handler)

	// The server closes the connection (a bad frame) while a request is parked.
	client := dial(t, s)
	client.send(3, 1, 1, nil)
	req := handler.next(t)
	client.write([]byte{0xff, 0xff, 0xff, 0xff})
	client.expectClosed()
	waitFor(t, "connection closed", func() bool { return s.Stats().ConnectionsActive == 0 })
	select {
	case <-req.connection.ctx.Done():
	default:
		t.Error("handler context not cancelled by the close")
	}
	req.Respond(BytesResponse([]byte("nobody listens")))
	req.Respond(BytesResponse([]byte("twice"))) // a handler bug, logged and ignored
	if got := s.Stats().ResponsesDropped; got != 1 {
		t.Errorf("ResponsesDropped = %d, want 1", got)
	}
}

// TestClientResetCancelsHandlerContext checks that a client that goes away
// while its only request is parked is noticed before the response is due.
func TestClientResetCancelsHandlerContext(t *testing.T) {
	handlerContexts := make(chan context.Context, 1)
	parked := make(chan *Request, 1)
	s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
		handlerContexts <- ctx
		parked <- req
	}))
	client := dial(t, s)
	client.send(3, 1, 1, nil)
	ctx := <-handlerContexts
	client.conn.SetLinger(0) // close with a reset
	client.conn.Close()
	select {
	case <-ctx.Done():
	case <-time.After(testTimeout):
		t.Fatal("handler context not cancelled after the client reset")
	}
	waitFor(t, "connection closed", func() bool { return s.Stats().ConnectionsActive == 0 })
	(<-parked).Respond(BytesResponse(nil))
}

func TestHandlerPanicClosesConnection(t *testing.T) {
	s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
		if string(req.Body) == "panic" {
			panic("handler bug")
		}
		req.Respond(BytesResponse(req.Body))
	}))
	bad := dial(t, s)
	bad.send(3, 1, 1, []byte("panic"))
	bad.expectClosed()
	good := dial(t, s)
	good.send(3, 1, 2, []byte("fine"))
	good.expectResponse(false, 2, "fine")
}

func TestMaxConnectionsPerIP(t *testing.T) {
	s := startServer(t, Config{MaxConnectionsPerIP: 2}, echoHandler)
	first, second := dial(t, s), dial(t, s)
	third := dial(t, s)
	third.expectClosed()
	for i, client := range []*testClient{first, second} {
		client.send(3, 1, int32(i), []byte("ok"))
		client.expectResponse(false, int32(i), "ok")
	}
	if got := s.Stats().ConnectionsRejected; got != 1 {
		t.Errorf("ConnectionsRejected = %d", got)
	}
	first.conn.Close()
	waitFor(t, "first connection gone", func() bool { return s.Stats().ConnectionsActive == 1 })
	fourth := dial(t, s)
	fourth.send(3, 1, 4, []byte("ok"))
	fourth.expectResponse(false, 4, "ok")
}

func TestMaxConnectionsWaitsForASlot(t *testing.T) {
	s := startServer(t, Config{MaxConnections: 1}, echoHandler)
	first := dial(t, s)
	first.send(3, 1, 1, []byte("one"))
	first.expectResponse(false, 1, "one")
	// The second connection completes its TCP handshake in the backlog but is
	// not accepted, so its request waits.
	second := dial(t, s)
	second.send(3, 1, 2, []byte("two"))
	if got := s.Stats().ConnectionsAccepted; got != 1 {
		t.Fatalf("ConnectionsAccepted = %d, want 1", got)
	}
	first.conn.Close()
	second.expectResponse(false, 2, "two")
}

// TestBackpressureBoundsQueuedRequests fills the one-slot queue behind a
// blocked handler and checks that every reader stops with exactly one framed
// request, so that pipelining clients cannot grow the broker's memory.
func TestBackpressureBoundsQueuedRequests(t *testing.T) {
	const (
		clients            = 10
		requestsPerClient  = 8
		inFlightPerConnect = 4
	)
	gate := make(chan struct{})
	s := startServer(t, Config{
		QueuedMaxRequests:                1,
		NumIOThreads:                     1,
		MaxInFlightRequestsPerConnection: inFlightPerConnect,
	}, HandlerFunc(func(ctx context.Context, req *Request) {
		<-gate
		req.Respond(BytesResponse(req.Body))
	}))
	var opened []*testClient
	for c := range clients {
		client := dial(t, s)
		opened = append(opened, client)
		for i := range requestsPerClient {
			client.send(3, 1, int32(i), []byte(fmt.Sprint(c, "-", i)))
		}
	}
	waitFor(t, "every reader blocked on the full queue", func() bool {
		return s.Stats().ReadersBlocked == clients
	})
	st := s.Stats()
	// One request in the handler, one in the queue, one held by each blocked reader.
	if want := uint64(1 + 1 + clients); st.RequestsReceived != want {
		t.Fatalf("RequestsReceived = %d with every reader blocked, want %d", st.RequestsReceived, want)
	}
	close(gate)
	for c, client := range opened {
		for i := range requestsPerClient {
			client.expectResponse(false, int32(i), fmt.Sprint(c, "-", i))
		}
	}
	st = s.Stats()
	if st.RequestQueueSizeMax > 1 || st.RequestQueueCapacity != 1 {
		t.Errorf("queue high-water %d over capacity %d", st.RequestQueueSizeMax, st.RequestQueueCapacity)
	}
	if st.QueueFullWaits == 0 {
		t.Error("no reader ever waited for the queue")
	}
}

type recordingObserver struct {
	mu         sync.Mutex
	dequeued   int
	completed  []RequestTimings
	queueTimes []time.Duration
}

func (o *recordingObserver) RequestDequeued(req *Request, queueTime time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dequeued++
	o.queueTimes = append(o.queueTimes, queueTime)
}

func (o *recordingObserver) RequestCompleted(req *Request, timings RequestTimings) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.completed = append(o.completed, timings)
}

func TestObserverAndStats(t *testing.T) {
	observer := &recordingObserver{}
	s := startServer(t, Config{Observer: observer, NumIOThreads: 2, NumNetworkThreads: 2}, echoHandler)
	client := dial(t, s)
	for i := range int32(3) {
		client.send(3, 1, i, []byte("x"))
		client.expectResponse(false, i, "x")
	}
	waitFor(t, "completions observed", func() bool {
		observer.mu.Lock()
		defer observer.mu.Unlock()
		return len(observer.completed) == 3
	})
	observer.mu.Lock()
	for _, timings := range observer.completed {
		if timings.Received.IsZero() || timings.Dequeued.Before(timings.Received) ||
			timings.Responded.Before(timings.Dequeued) || timings.Sent.Before(timings.Responded) {
			t.Errorf("timings out of order: %+v", timings)
		}
	}
	observer.mu.Unlock()

	st := s.Stats()
	if st.RequestsReceived != 3 || st.ResponsesSent != 3 || st.BytesSent == 0 || st.BytesReceived == 0 {
		t.Errorf("stats = %+v", st)
	}
	// The idle and busy times are measured, so how large they are depends
	// on the machine; what holds everywhere is that some of each was
	// counted and neither exceeds what the threads had since Start.
	if handlers := time.Duration(st.NumIOThreads) * st.Uptime; st.HandlerIdle <= 0 || st.HandlerIdle > handlers {
		t.Errorf("handler idle %v of %v handler time", st.HandlerIdle, handlers)
	}
	if network := time.Duration(st.NumNetworkThreads) * st.Uptime; st.NetworkBusy <= 0 || st.NetworkBusy > network {
		t.Errorf("network busy %v of %v network time", st.NetworkBusy, network)
	}
	if idle := st.HandlerIdleRatioSince(Stats{}); idle != float64(st.HandlerIdle)/float64(time.Duration(st.NumIOThreads)*st.Uptime) {
		t.Errorf("handler idle ratio %v is not idle time over handler time", idle)
	}

	registry := prometheus.NewPedanticRegistry()
	if err := registry.Register(s.Collector()); err != nil {
		t.Fatal(err)
	}
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, family := range families {
		names = append(names, family.GetName())
	}
	if joined := strings.Join(names, " "); !strings.Contains(joined, "samsa_network_request_queue_size") ||
		!strings.Contains(joined, "samsa_network_handler_idle_seconds_total") {
		t.Errorf("metrics = %s", joined)
	}
}

func TestNewRequestForHandlerTests(t *testing.T) {
	var got Response
	req := NewRequest(RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 5}, []byte("b"), &ConnInfo{ID: 1}, func(resp Response) { got = resp })
	echoHandler.Handle(context.Background(), req)
	if string(got.Chunks[0].Bytes) != "b" || req.APIVersion != 12 {
		t.Fatalf("response %+v", got)
	}
}
