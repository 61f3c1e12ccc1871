package network

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// Request is one decoded request frame: the parsed request header and the
// undecoded body that follows it.
type Request struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      *string
	// Body is the request body after the header (and after the header's
	// tagged fields for flexible versions), ready for kmsg's ReadFrom.
	//
	// For the API keys in Config.ReuseBodyAPIKeys, Body lives in a pooled
	// buffer that is reused for a later request once this one is finished,
	// which is when both
	//   - Handle has returned (or the request was skipped because its
	//     connection closed before a handler took it), and
	//   - its response has been written, or dropped: the connection closed,
	//     and Respond was called (a response given to Respond after the close
	//     is dropped at once).
	// So the handler of such an API, and every delayed operation it parks,
	// may read Body and anything decoded from it (kmsg decodes []byte fields,
	// such as produce records, as sub-slices of Body) until it has both
	// returned from Handle and called Respond, and must not keep a reference
	// after that; copy what must outlive the request. A Respond that never
	// comes leaves the buffer to the garbage collector (a mapped one goes
	// back to its pool, with its pages given back, once the garbage
	// collector finds the request unreachable; frame_buffers.go).
	// Bodies of other API keys are never reused.
	Body []byte
	// Conn describes the connection the request arrived on.
	Conn *ConnInfo
	// Prepared is whatever Preparer.Prepare left for Handle; nil if the
	// request was not prepared.
	Prepared any

	// respond is the whole of Respond for requests made by NewRequest.
	respond func(Response)
	// connection is the connection the request came from; nil for requests
	// made by NewRequest.
	connection *connection
	// taggedFields selects response header v1 for the response.
	taggedFields bool
	// pipelined is set for the API keys in Config.PipelinedAPIKeys.
	pipelined bool
	// readAhead is set when the request was read before an earlier one of
	// its connection had its response written.
	readAhead bool
	// turnHolds counts what a pipelined request handed on in an ordered
	// server still waits for before the next request of its connection may
	// be handed on: Handle to return, Respond to be called (see
	// connection.letGoLocked). Guarded by connection.mu.
	turnHolds int
	// queuedBytes is what the request holds of the server's memory pool
	// (queued.max.request.bytes; memory_pool.go). The reader sets it; the
	// handler side gives it back when Handle returns or the request is
	// skipped, the reader if the request never reaches the queue.
	queuedBytes int64
	// timings is written by the reader, the handler pool and the writer, each
	// before handing the request on, so no lock is needed.
	timings RequestTimings

	// The response, guarded by connection.mu.
	response  Response
	responded bool

	// frame is the pooled buffer Body aliases; nil when Body is not pooled.
	frame *frameBuffer
	// bodyHolders counts the parties that may still read Body: the handler
	// side (until Handle returns or the request is skipped) and the response
	// side (until it is written or dropped). The one that brings it to zero
	// returns frame to its pool.
	// Invariant: 0 <= bodyHolders <= 2, and frame is released exactly once.
	bodyHolders atomic.Int32
}

// bodyHoldersPooled is bodyHolders of a request with a pooled body when the
// reader creates it: the handler side and the response side.
const bodyHoldersPooled = 2

// releaseBody drops one holder of a pooled body; the last returns the buffer
// to its pool. It does nothing for bodies that are not pooled.
func (r *Request) releaseBody() {
	if r.frame == nil {
		return
	}
	remaining := r.bodyHolders.Add(-1)
	if invariantsEnabled && remaining < 0 {
		panic("network: request body released more often than held")
	}
	if remaining == 0 {
		putFrameBuffer(r.frame)
	}
}

// NewRequest makes a request outside any connection, so that API handlers can
// be tested without sockets: Respond calls respond.
func NewRequest(header RequestHeader, body []byte, conn *ConnInfo, respond func(Response)) *Request {
	return &Request{
		APIKey:        header.APIKey,
		APIVersion:    header.APIVersion,
		CorrelationID: header.CorrelationID,
		ClientID:      header.ClientID,
		Body:          body,
		Conn:          conn,
		respond:       respond,
	}
}

// ConnInfo describes a client connection. Principal is the authenticated
// identity ("User:ANONYMOUS" on plaintext listeners), kept for the authorizer.
// ID is unique within a Server.
//
// The fields are set before the connection's first request is read and do
// not change after it (SASL re-authentication aside), so handlers may read
// them without a lock.
type ConnInfo struct {
	ID         uint64
	Listener   string
	LocalAddr  net.Addr
	RemoteAddr net.Addr
	Principal  string
	// TokenAuthenticated is set with Principal when a delegation token
	// authenticated it (SCRAM with tokenauth=true).
	TokenAuthenticated bool
	// SecurityProtocol is the listener's PLAINTEXT, SSL, SASL_PLAINTEXT or
	// SASL_SSL.
	SecurityProtocol string
	// TLS is the completed handshake's state on SSL and SASL_SSL listeners
	// (the peer's verified chain among it); nil on plaintext ones.
	TLS *tls.ConnectionState
	// SASL is the connection's authentication session on SASL listeners,
	// nil elsewhere. Principal changes only while the session gates the
	// connection, when no other request of it is being handled.
	SASL Session
	// Software is the client software name and version the connection's
	// ApiVersions request (v3+, KIP-511) named; nil-safe.
	Software *ClientSoftware
}

// ClientSoftware is a connection's client software name and version, set
// by its ApiVersions request and read by any request after it.
type ClientSoftware struct {
	nameVersion atomic.Pointer[[2]string]
}

// Set records the name and version.
func (s *ClientSoftware) Set(name, version string) {
	if s != nil {
		s.nameVersion.Store(&[2]string{name, version})
	}
}

// Get returns the name and version, empty before Set.
func (s *ClientSoftware) Get() (name, version string) {
	if s == nil {
		return "", ""
	}
	if p := s.nameVersion.Load(); p != nil {
		return p[0], p[1]
	}
	return "", ""
}

// Respond delivers the response to this request. It may be called from any
// goroutine, at most once, possibly after Handle has returned (a delayed
// operation). The connection writes responses in request order.
// Calling Respond with NoResponse sends nothing (produce with acks=0) but
// still releases the request's place in the order.
// Calls after the connection has closed are dropped.
func (r *Request) Respond(resp Response) {
	if r.connection != nil {
		r.connection.complete(r, resp)
		return
	}
	if r.respond != nil {
		r.respond(resp)
	}
}

// RequestTimings are the moments a request passed through the network layer,
// from which Kafka's RequestQueueTimeMs, LocalTimeMs+RemoteTimeMs,
// ResponseQueueTimeMs, ResponseSendTimeMs and TotalTimeMs follow.
type RequestTimings struct {
	// Received is when the whole frame had been read.
	Received time.Time
	// Dequeued is when a handler took the request off the request queue.
	Dequeued time.Time
	// Responded is when Respond was called.
	Responded time.Time
	// Sent is when the response had been written (or dropped, for NoResponse).
	Sent time.Time
}

// Response is a response body: the bytes after the response header. The
// network layer writes the size, correlation id and (for flexible versions
// other than ApiVersions) the empty tagged-field header.
type Response struct {
	// Chunks are written in order. A chunk holds either Bytes or a file region.
	Chunks []Chunk
	// None means no response is sent for the request (acks=0 produce).
	None bool
	// Close asks the connection to close after this response (or at once when None).
	Close bool
	// ThrottleMs, when positive, mutes the connection once the response is
	// sent (or, with None, at once): its reader reads no further request
	// for that long (KIP-219), so a client that ignores throttle_time_ms
	// still cannot go faster or pile up requests.
	ThrottleMs int32
}

// NoResponse is the response for requests that get no reply.
var NoResponse = Response{None: true}

// BytesResponse wraps one byte slice as a response body.
func BytesResponse(b []byte) Response { return Response{Chunks: []Chunk{{Bytes: b}}} }

// Chunk is a piece of a response body: either in-memory bytes or a region of
// a file sent with sendfile(2) on plaintext connections.
type Chunk struct {
	Bytes []byte
	// File, Offset and Length describe a file region when File is non-nil.
	File   RegionFile
	Offset int64
	Length int64
}

// RegionFile is a file whose region can be sent. When it also implements
// Fd() uintptr (as *os.File does) the region goes out with sendfile;
// otherwise it is copied through ReadAt. A file that implements
// SyscallConn() (syscall.RawConn, error), as *os.File does, is preferred over
// Fd: the descriptor is then held open for the duration of the sendfile call
// even if the log closes the segment concurrently.
// If the file holds fewer bytes than the region promises (a segment
// truncated under the fetch), the connection is closed: the size prefix has
// already gone out.
type RegionFile interface {
	io.ReaderAt
}

// Handler handles requests. Handle is called from the handler pool; it must
// eventually call req.Respond exactly once, either before returning or later
// from another goroutine (for parked, delayed operations).
// ctx is cancelled when the request's connection closes or the server is
// stopped forcefully; a handler that parks a request may use it to give up.
// A handler that panics gets its connection closed, as Kafka closes a
// connection on an unexpected error, and the broker keeps running.
type Handler interface {
	Handle(ctx context.Context, req *Request)
}

// Preparer is a Handler that can do the work of a pipelined request
// (Config.PipelinedAPIKeys) that depends on nothing but its own bytes, such
// as decoding it and checking its checksums, before the request's turn
// comes: the connection's reader calls Prepare as soon as the request is
// read, while the previous request of the connection is still in Handle, and
// Handle later finds the result in Request.Prepared. Prepare must not change
// anything another request could see, must not call Respond, and must not
// block; Body may be read as in Handle. A Prepare that panics closes the
// connection.
type Preparer interface {
	Prepare(req *Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) { f(ctx, req) }
