package network

import (
	"context"
	"io"
	"net"
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
	Body []byte
	// Conn describes the connection the request arrived on.
	Conn *ConnInfo

	respond func(Response)
}

// ConnInfo describes a client connection. Principal is the authenticated
// identity ("User:ANONYMOUS" on plaintext listeners), kept for the authorizer.
type ConnInfo struct {
	ID         uint64
	Listener   string
	LocalAddr  net.Addr
	RemoteAddr net.Addr
	Principal  string
}

// Respond delivers the response to this request. It may be called from any
// goroutine, at most once, possibly after Handle has returned (a delayed
// operation). The connection writes responses in request order.
// Calling Respond with NoResponse sends nothing (produce with acks=0) but
// still releases the request's place in the order.
func (r *Request) Respond(resp Response) { r.respond(resp) }

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
// otherwise it is copied through ReadAt.
type RegionFile interface {
	io.ReaderAt
}

// Handler handles requests. Handle is called from the handler pool; it must
// eventually call req.Respond exactly once, either before returning or later
// from another goroutine (for parked, delayed operations).
type Handler interface {
	Handle(ctx context.Context, req *Request)
}
