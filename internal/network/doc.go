// Package network is Samsa's socket server: listeners, connections, Kafka
// request framing and header parsing, the one shared bounded request queue,
// the handler pool, and the ordered response writer (with sendfile for file
// regions). It knows nothing of individual APIs: it hands a Handler the
// parsed request header and the undecoded body, and writes back whatever
// body the handler responds with.
//
// # Request frame (all integers big-endian)
//
//	offset  size  field
//	     0     4  size            bytes after this field; 8 <= size <= socket.request.max.bytes
//	     4     2  request_api_key
//	     6     2  request_api_version
//	     8     4  correlation_id
//	    12     2  client_id length, -1 for null (a non-compact string even in header v2)
//	    14     n  client_id bytes
//	     .     .  header v2 only (flexible versions): tagged fields
//	                uvarint count, then count times: uvarint tag, uvarint size, size bytes
//	     .     .  request body (Request.Body)
//
// # Response frame
//
//	offset  size  field
//	     0     4  size            bytes after this field
//	     4     4  correlation_id  copied from the request
//	     8     1  header v1 only: 0x00, an empty tagged-field section; sent for
//	              flexible versions of every API except ApiVersions (key 18),
//	              whose response header is always v0 so that a client can read it
//	              before it knows which versions the broker speaks
//	     .     .  response body (Response.Chunks, in order)
//
// # The path of a request
//
// Each connection has a reader goroutine and a writer goroutine. The reader
// frames a request, parses its header and puts it on the server's one request
// queue (queued.max.requests); when the queue is full the reader blocks and so
// stops reading its socket, which pushes back on the client through TCP.
// num.io.threads handler goroutines take requests off the queue and call
// Handler.Handle. Request.Respond may be called from any goroutine; the writer
// sends responses strictly in the order the requests arrived.
//
// Like Kafka, which mutes a channel from the moment a request is read until
// its response is sent, a connection by default has one request in flight:
// the reader does not frame the next request until the writer has sent the
// previous response (it reads ahead at most its 8 KiB buffer, so that it
// notices a client that goes away and cancels the handler's context).
// Idempotent producers depend on this: five pipelined Produce requests to one
// partition must be appended in the order they were sent.
// Config.MaxInFlightRequestsPerConnection raises the limit for callers that
// know their requests are independent; responses stay in order either way.
//
// Config.PipelinedAPIKeys keeps the order while reading ahead: the reader
// frames and parses up to MaxInFlightRequestsPerConnection requests, but hands
// a request of those keys (the broker's: Produce) to a handler only once the
// previous one of its connection has returned from Handle and been given its
// response, so appends happen one at a time in arrival order, while the next
// request is read off the socket and earlier responses are written; any other
// request is handed on only once everything before it has been answered, as
// in Kafka. So at most one request per connection is ever in Handle, and a
// parked acks=-1 produce holds back the next one until it answers, as
// Kafka's muted channel does (else several batches of one producer could be
// appended that it has not heard of, which the producer state cannot
// deduplicate after a reload):
//
//	reader:   read 1 | read 2 ......... wait | read 3 ..... wait |
//	handler:         | handle 1 (append) |   | handle 2 |        | handle 3
//	writer:                              | write 1 |   | write 2 |
//
// # Memory bounds
//
// At most queued.max.requests requests wait in the queue, num.io.threads are
// being handled, and each connection holds at most
// MaxInFlightRequestsPerConnection requests read and not answered, each at
// most socket.request.max.bytes. Pooled frames (produce) read ahead of an
// unanswered request of their connection share one budget of 16 MiB for the
// process (read_ahead.go); past it a connection reads one request at a time,
// as Kafka's does, so produce frames take at most one frame per connection
// plus the budget.
//
// queued.max.request.bytes (Config.QueuedMaxRequestBytes, unbounded by
// default as in Kafka) bounds the bytes of all requests read and not yet
// handled: a reader takes a frame's size from one memory pool after reading
// its size prefix and before reading the rest, and while the pool is spent
// it reads nothing more from its socket, until more than a tenth of the
// pool is free again. A request gives its bytes back once Handle has
// returned. As in Kafka, a request is admitted while any memory is left,
// so one larger than what is left never waits forever; a frame read ahead
// of an unanswered request must leave a tenth of the pool free (see
// memory_pool.go).
//
// # Closing
//
// A protocol violation (bad size, truncated frame, malformed header), an
// idle connection, a write error or a Response with Close closes the
// connection at once, dropping responses not yet written. A client that ends
// its side cleanly, and every connection at Shutdown, is closed gracefully:
// pending responses are written, the write side is shut, unread input is
// drained briefly so that close(2) does not reset the responses away, then
// the socket is closed.
package network
