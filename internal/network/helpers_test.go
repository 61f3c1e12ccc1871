package network

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"
)

// testTimeout bounds every wait in these tests; they poll, never sleep.
const testTimeout = 10 * time.Second

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startServer starts a server on a loopback port and shuts it down when the
// test ends.
func startServer(t testing.TB, cfg Config, handler Handler) *Server {
	t.Helper()
	if len(cfg.Listeners) == 0 {
		cfg.Listeners = []ListenerSpec{{Name: "PLAINTEXT", Address: "127.0.0.1:0"}}
	}
	s, err := NewServer(cfg, handler, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// waitFor polls condition until it holds or the test timeout passes.
func waitFor(t testing.TB, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// testClient speaks raw Kafka framing over TCP.
type testClient struct {
	t    testing.TB
	conn *net.TCPConn
}

func dial(t testing.TB, s *Server) *testClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", s.Addrs()[0].String(), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &testClient{t: t, conn: conn.(*net.TCPConn)}
}

func stringPointer(s string) *string { return &s }

// requestFrame builds a size-prefixed request. tags is the raw tagged-field
// section for flexible versions, nil for header v1.
func requestFrame(key, version int16, correlationID int32, clientID *string, tags, body []byte) []byte {
	frame := make([]byte, 4, 64+len(body))
	frame = binary.BigEndian.AppendUint16(frame, uint16(key))
	frame = binary.BigEndian.AppendUint16(frame, uint16(version))
	frame = binary.BigEndian.AppendUint32(frame, uint32(correlationID))
	if clientID == nil {
		frame = binary.BigEndian.AppendUint16(frame, 0xffff)
	} else {
		frame = binary.BigEndian.AppendUint16(frame, uint16(len(*clientID)))
		frame = append(frame, *clientID...)
	}
	frame = append(frame, tags...)
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame
}

func (c *testClient) write(b []byte) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(testTimeout))
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send writes a non-flexible request (Metadata v1 unless key says otherwise).
func (c *testClient) send(key, version int16, correlationID int32, body []byte) {
	c.t.Helper()
	var tags []byte
	if DefaultIsFlexible(key, version) {
		tags = []byte{0}
	}
	c.write(requestFrame(key, version, correlationID, stringPointer("test"), tags, body))
}

// readResponse reads one response frame and returns its correlation id and
// body. taggedFields says whether the header carries an empty tag section.
func (c *testClient) readResponse(taggedFields bool) (int32, []byte) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(testTimeout))
	var sizeBuffer [4]byte
	if _, err := io.ReadFull(c.conn, sizeBuffer[:]); err != nil {
		c.t.Fatalf("reading response size: %v", err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(sizeBuffer[:]))
	if _, err := io.ReadFull(c.conn, frame); err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	correlationID := int32(binary.BigEndian.Uint32(frame))
	body := frame[4:]
	if taggedFields {
		if len(body) == 0 || body[0] != 0 {
			c.t.Fatalf("response header v1 without an empty tag section: % x", frame)
		}
		body = body[1:]
	}
	return correlationID, body
}

// expectResponse reads one response and checks its correlation id and body.
func (c *testClient) expectResponse(taggedFields bool, correlationID int32, body string) {
	c.t.Helper()
	gotID, gotBody := c.readResponse(taggedFields)
	if gotID != correlationID || string(gotBody) != body {
		c.t.Fatalf("response = (%d, %q), want (%d, %q)", gotID, gotBody, correlationID, body)
	}
}

// expectClosed reads until the server closes the connection, then closes
// the client's side as a Kafka client would.
func (c *testClient) expectClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(testTimeout))
	_, err := io.Copy(io.Discard, c.conn)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		c.t.Fatal("connection still open")
	}
	c.conn.Close()
}

// echoHandler answers every request with its own body.
var echoHandler = HandlerFunc(func(ctx context.Context, req *Request) {
	req.Respond(BytesResponse(req.Body))
})

// parkingHandler hands every request to the test, which responds later.
type parkingHandler struct {
	requests chan *Request
}

func newParkingHandler() *parkingHandler {
	return &parkingHandler{requests: make(chan *Request, 1024)}
}

func (h *parkingHandler) Handle(ctx context.Context, req *Request) { h.requests <- req }

func (h *parkingHandler) next(t testing.TB) *Request {
	t.Helper()
	select {
	case req := <-h.requests:
		return req
	case <-time.After(testTimeout):
		t.Fatal("no request reached the handler")
		return nil
	}
}
