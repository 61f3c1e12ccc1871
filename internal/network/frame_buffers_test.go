package network

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

func TestFrameBufferClasses(t *testing.T) {
	for _, tc := range []struct{ size, class int }{
		{1, 0}, {1 << 10, 0}, {1<<10 + 1, 1}, {1536, 1}, {1537, 2}, {2 << 10, 2}, {3000, 3}, {3 << 10, 3}, {3<<10 + 1, 4},
		{12 << 20, frameBufferClasses - 2}, {12<<20 + 1, frameBufferClasses - 1},
		{frameBufferPooledBytesMax, frameBufferClasses - 1},
	} {
		if got := frameBufferClass(tc.size); got != tc.class {
			t.Errorf("class of %d bytes = %d, want %d", tc.size, got, tc.class)
		}
		buffer := getFrameBuffer(tc.size)
		if len(buffer.bytes) < tc.size || len(buffer.bytes)*3 > tc.size*4+3<<10 || buffer.class != tc.class {
			t.Errorf("buffer for %d bytes: %d bytes, class %d", tc.size, len(buffer.bytes), buffer.class)
		}
		putFrameBuffer(buffer)
	}
	if getFrameBuffer(frameBufferPooledBytesMax+1) != nil {
		t.Error("a frame above the pooled maximum got a pooled buffer")
	}
}

// TestFreeFrameBuffersBounded: a released buffer is reused by the next frame
// of its class, even across garbage collections, and no more than the
// per-class and total limits stay free and resident.
func TestFreeFrameBuffersBounded(t *testing.T) {
	drainFreeFrameBuffers()
	t.Cleanup(drainFreeFrameBuffers)
	buffer := getFrameBuffer(5000)
	putFrameBuffer(buffer)
	runtime.GC()
	runtime.GC()
	if again := getFrameBuffer(5000); again != buffer {
		t.Error("a released buffer was not reused after two garbage collections")
	}

	small := make([]*frameBuffer, 2*frameBuffersFreePerClassMax)
	for i := range small {
		small[i] = getFrameBuffer(1 << 10)
	}
	for _, b := range small {
		putFrameBuffer(b)
	}
	if free, _ := freeFrameBuffers(0); free != frameBuffersFreePerClassMax {
		t.Errorf("%d free buffers in a class, want the limit %d", free, frameBuffersFreePerClassMax)
	}
	large := make([]*frameBuffer, frameBuffersFreePerClassMax)
	for i := range large {
		large[i] = getFrameBuffer(frameBufferPooledBytesMax)
	}
	for _, b := range large {
		putFrameBuffer(b)
	}
	held := int64(0)
	for class := range frameBufferPools {
		resident, _ := freeFrameBuffers(class)
		held += int64(resident * frameBufferClassBytes(class))
	}
	if held > frameBuffersFreeBytesMax || held != frameBuffersFreeBytes.Load() {
		t.Errorf("free buffers hold %d bytes, counted %d, limit %d", held, frameBuffersFreeBytes.Load(), frameBuffersFreeBytesMax)
	}
	if _, released := freeFrameBuffers(frameBufferClasses - 1); mapsFrameBuffers && released == 0 {
		t.Error("no large buffer beyond the limit kept for reuse with its pages given back")
	}
	t.Logf("%d bytes of free buffers kept resident", held)
}

// TestFrameBufferFromLargerClass: a frame whose class has no resident free
// buffer takes one of a class at most frameBufferClassesUp above, rather
// than a released buffer whose pages would fault in again, and never one
// further up.
func TestFrameBufferFromLargerClass(t *testing.T) {
	drainFreeFrameBuffers()
	t.Cleanup(drainFreeFrameBuffers)
	const size = 6 << 20
	class := frameBufferClass(size)
	near := getFrameBuffer(frameBufferClassBytes(class + frameBufferClassesUp))
	far := getFrameBuffer(frameBufferClassBytes(class + frameBufferClassesUp + 1))
	putFrameBuffer(far)
	if got := getFrameBuffer(size); got == far {
		t.Fatalf("a %d-byte frame took a free buffer %d classes up", size, frameBufferClassesUp+1)
	} else {
		putFrameBuffer(got)
	}
	drainFreeFrameBuffers()
	putFrameBuffer(near)
	got := getFrameBuffer(size)
	if got != near {
		t.Fatalf("a %d-byte frame did not take the resident free buffer of %d bytes", size, len(near.bytes))
	}
	if len(got.bytes) < size {
		t.Fatalf("%d-byte buffer for a %d-byte frame", len(got.bytes), size)
	}
	putFrameBuffer(got)
	if resident, _ := freeFrameBuffers(near.class); resident != 1 {
		t.Fatalf("the borrowed buffer went back to class %d's pool %d times", near.class, resident)
	}
}

// freeFrameBuffers counts the free buffers of class: resident, and with
// their pages given back.
func freeFrameBuffers(class int) (resident, released int) {
	pool := &frameBufferPools[class]
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return len(pool.mu.resident), len(pool.mu.released)
}

// drainFreeFrameBuffers empties every pool, unmapping its mapped buffers.
func drainFreeFrameBuffers() {
	for class := range frameBufferPools {
		pool := &frameBufferPools[class]
		pool.mu.Lock()
		free := append(pool.mu.resident, pool.mu.released...)
		for _, b := range pool.mu.resident {
			frameBuffersFreeBytes.Add(-int64(len(b.bytes)))
		}
		pool.mu.resident, pool.mu.released = nil, nil
		pool.mu.Unlock()
		for _, b := range free {
			if b.mapped {
				discardFrameBuffer(b)
			}
		}
	}
}

// bodyKeepingHandler parks requests whose body starts with "park" and echoes
// the others.
type bodyKeepingHandler struct {
	parked chan *Request
}

func (h *bodyKeepingHandler) Handle(ctx context.Context, req *Request) {
	if bytes.HasPrefix(req.Body, []byte("park")) {
		h.parked <- req
		return
	}
	req.Respond(BytesResponse(req.Body))
}

// TestReusedBodyHeldUntilFinished: a pooled body stays intact while a parked
// request waits (Handle has returned, Respond not yet called), also when its
// connection closes meanwhile, although other requests of the same size
// class keep reusing buffers; and a response that aliases the body is
// written intact. Under the invariants tag released buffers are poisoned, so
// an early release fails the checks even without reuse (and -race reports
// it), and the test also checks that finished requests' buffers are
// released, not leaked.
func TestReusedBodyHeldUntilFinished(t *testing.T) {
	const key = 3
	handler := &bodyKeepingHandler{parked: make(chan *Request, 16)}
	s := startServer(t, Config{ReuseBodyAPIKeys: []int16{key}, MaxInFlightRequestsPerConnection: 2}, handler)
	body := func(prefix string, i int) []byte {
		return fmt.Appendf(nil, "%s-%d-%s", prefix, i, bytes.Repeat([]byte{byte('a' + i%26)}, 3000))
	}

	releasedBefore := frameBuffersReleased.Load()
	parkedClient := dial(t, s)
	parkedClient.send(key, 1, 1, body("park", 1))
	parked := <-handler.parked
	closingClient := dial(t, s)
	closingClient.send(key, 1, 2, body("park", 2))
	orphaned := <-handler.parked
	// A protocol violation closes the connection at once, dropping what is
	// pending (a client that just goes away is answered first, gracefully).
	closingClient.write([]byte{0, 0, 0, 1, 0})
	waitFor(t, "the closed connection to be noticed", func() bool { return s.Stats().ConnectionsActive == 1 })

	// Churn the pool from several connections at once.
	var wg sync.WaitGroup
	for client := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, s)
			for i := range 200 {
				want := body("echo", client*1000+i)
				c.send(key, 1, int32(i), want)
				if _, got := c.readResponse(false); !bytes.Equal(got, want) {
					t.Errorf("echo %d of client %d came back as %.20q", i, client, got)
					return
				}
			}
		}()
	}
	wg.Wait()

	if want := body("park", 2); !bytes.Equal(orphaned.Body, want) {
		t.Fatalf("body of a parked request whose connection closed was reused: %.20q", orphaned.Body)
	}
	orphaned.Respond(BytesResponse([]byte("dropped")))
	want := body("park", 1)
	if !bytes.Equal(parked.Body, want) {
		t.Fatalf("body of a parked request was reused: %.20q", parked.Body)
	}
	parked.Respond(BytesResponse(parked.Body))
	if _, got := parkedClient.readResponse(false); !bytes.Equal(got, want) {
		t.Fatalf("parked response came back as %.20q", got)
	}

	if invariantsEnabled {
		// Every echo has finished, so its buffer has gone back to the pool:
		// buffers are released, not leaked.
		waitFor(t, "finished bodies to be released", func() bool {
			return frameBuffersReleased.Load()-releasedBefore >= 4*200+1
		})
	}
}

// TestPipelinedBodiesReleasedOnceWhenConnectionCloses: a connection has a
// pipelined request parked (Handle returned, Respond not yet called), the
// next read ahead and waiting for its turn, and three more sent. The parked
// body stays intact while other connections churn the pool; its response
// closes the connection; the request read ahead is never handed to the
// handler; and each of the two buffers goes back to the pool exactly once (a
// second release panics under the invariants tag, and a buffer released
// twice would be counted twice).
func TestPipelinedBodiesReleasedOnceWhenConnectionCloses(t *testing.T) {
	const key = 0
	handler := &bodyKeepingHandler{parked: make(chan *Request, 16)}
	s := startServer(t, Config{
		ReuseBodyAPIKeys: []int16{key}, PipelinedAPIKeys: []int16{key},
		MaxInFlightRequestsPerConnection: 5, NumIOThreads: 4,
	}, handler)
	body := func(prefix string, i int) []byte {
		return fmt.Appendf(nil, "%s-%d-%s", prefix, i, bytes.Repeat([]byte{byte('a' + i%26)}, 3000))
	}

	releasedBefore := frameBuffersReleased.Load()
	closing := dial(t, s)
	for i := range 5 {
		closing.send(key, 3, int32(i+1), body("park", i+1))
	}
	parked := <-handler.parked
	waitFor(t, "the next read ahead", func() bool { return s.Stats().RequestsReceived >= 2 })

	const echoes = 4 * 100
	var wg sync.WaitGroup
	for client := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, s)
			for i := range echoes / 4 {
				want := body("echo", client*1000+i)
				c.send(key, 3, int32(i), want)
				if _, got := c.readResponse(false); !bytes.Equal(got, want) {
					t.Errorf("echo %d of client %d came back as %.20q", i, client, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if want := body("park", 1); !bytes.Equal(parked.Body, want) {
		t.Fatalf("body of a parked request was reused: %.20q", parked.Body)
	}
	parked.Respond(Response{Chunks: []Chunk{{Bytes: parked.Body}}, Close: true})
	if _, got := closing.readResponse(false); !bytes.Equal(got, body("park", 1)) {
		t.Fatalf("parked response came back as %.20q", got)
	}
	closing.expectClosed()
	waitFor(t, "the closed connection to be gone", func() bool { return s.Stats().ConnectionsActive == 4 })
	select {
	case req := <-handler.parked:
		t.Fatalf("request %d of the closed connection was handed on", req.CorrelationID)
	default:
	}
	if invariantsEnabled {
		// The echoes and the two requests read of the closed connection; the
		// three it sent last were never read.
		const want = echoes + 2
		waitFor(t, "every body to be released", func() bool { return frameBuffersReleased.Load()-releasedBefore >= want })
		if got := frameBuffersReleased.Load() - releasedBefore; got != want {
			t.Fatalf("%d buffers released, want %d: one was released twice", got, want)
		}
	}
}
