package network

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"time"
)

// Bounds on draining a closing connection's unread input (lingerAndClose).
const (
	lingerTimeout  = time.Second
	lingerBytesMax = 1 << 20
)

// errResponseTooLarge marks a response body whose size does not fit the
// 4-byte size prefix, or a chunk with a negative region.
var errResponseTooLarge = errors.New("network: response size out of range")

// writeLoop sends answered requests' responses in request order until the
// connection closes.
func (c *connection) writeLoop() {
	defer c.server.writers.Done()
	w := responseWriter{c: c}
	var ready []*Request
	for {
		select {
		case <-c.wake:
		case <-c.closed:
			return
		}
		for {
			var closeAfter, drained bool
			c.mu.Lock()
			ready, closeAfter, drained = c.takeReadyLocked(ready[:0])
			c.mu.Unlock()
			if len(ready) == 0 {
				if drained {
					c.lingerAndClose()
					return
				}
				break
			}
			err := w.write(ready)
			c.finish(ready, err == nil)
			switch {
			case err != nil:
				c.close(slog.LevelDebug, "write failed", err)
				return
			case closeAfter:
				// Closed before the answered requests let the next one be
				// handed on: nothing after a closing response is handled.
				c.close(slog.LevelDebug, "response asked to close the connection", nil)
				return
			}
			c.answered(ready)
			clear(ready)
		}
	}
}

// lingerAndClose closes a connection whose reader has stopped and whose
// responses have all been written. If the client sent bytes that will never
// be read (a request that arrived after Shutdown began), close(2) would
// answer them with a reset, which destroys response bytes still unsent or
// unread; so the write side is shut first and the unread input drained, for
// at most lingerTimeout and lingerBytesMax.
func (c *connection) lingerAndClose() {
	if tcpConn, ok := c.netConn.(*net.TCPConn); ok {
		if err := tcpConn.CloseWrite(); err == nil {
			tcpConn.SetReadDeadline(time.Now().Add(lingerTimeout))
			io.Copy(io.Discard, io.LimitReader(tcpConn, lingerBytesMax))
		}
	}
	c.close(slog.LevelDebug, "reading stopped and every response sent", nil)
}

// finish returns the in-flight tokens of written requests to the reader,
// tells the observer, and ends the response side's hold on pooled bodies
// (after a failed write too: the connection closes and nothing more is sent).
func (c *connection) finish(written []*Request, ok bool) {
	s := c.server
	now := time.Now()
	for _, req := range written {
		select {
		case <-c.inFlight:
		default:
			if invariantsEnabled {
				panic("network: response sent without an in-flight token")
			}
		}
		if ok {
			req.timings.Sent = now
			if !req.response.None {
				s.counters.responsesSent.Add(1)
			}
			if s.cfg.Observer != nil {
				s.cfg.Observer.RequestCompleted(req, req.timings)
			}
		}
		req.releaseBody()
	}
}

// responseWriter turns a run of responses into as few syscalls as it can:
// the prefixes and byte chunks of consecutive responses go out in one
// writev; file regions go out with sendfile between them.
type responseWriter struct {
	c *connection
	// prefixes holds the size and header bytes of the responses in a batch;
	// its capacity is reserved up front so that appending never moves the
	// bytes that iovecs already point at.
	prefixes []byte
	iovecs   net.Buffers
}

func (w *responseWriter) write(ready []*Request) error {
	c := w.c
	start := time.Now()
	defer func() { c.server.counters.networkBusyNanos.Add(int64(time.Since(start))) }()
	if idle := c.server.idleTimeout; idle > 0 {
		// A client that stops reading its responses is idle too.
		c.netConn.SetWriteDeadline(start.Add(idle))
	}
	if need := responseHeaderBytesMax * len(ready); cap(w.prefixes) < need {
		w.prefixes = make([]byte, 0, need)
	}
	prefixes := w.prefixes[:0]
	w.iovecs = w.iovecs[:0]
	for _, req := range ready {
		resp := &req.response
		if resp.None {
			continue
		}
		bodyBytes, err := responseBodyBytes(resp.Chunks)
		if err != nil {
			return fmt.Errorf("api key %d correlation id %d: %w", req.APIKey, req.CorrelationID, err)
		}
		prefixStart := len(prefixes)
		prefixes = appendResponsePrefix(prefixes, req.CorrelationID, req.taggedFields, bodyBytes)
		w.iovecs = append(w.iovecs, prefixes[prefixStart:])
		for i := range resp.Chunks {
			chunk := &resp.Chunks[i]
			if chunk.File == nil {
				if len(chunk.Bytes) > 0 {
					w.iovecs = append(w.iovecs, chunk.Bytes)
				}
				continue
			}
			if err := w.flush(); err != nil {
				return err
			}
			if err := c.writeFileRegion(chunk); err != nil {
				return err
			}
		}
	}
	return w.flush()
}

// flush writes the gathered byte chunks with one writev.
func (w *responseWriter) flush() error {
	if len(w.iovecs) == 0 {
		return nil
	}
	if w.c.isTLS {
		return w.flushCoalesced()
	}
	iovecs := w.iovecs
	n, err := iovecs.WriteTo(w.c.netConn)
	w.c.server.counters.bytesSent.Add(uint64(n))
	clear(w.iovecs)
	w.iovecs = w.iovecs[:0]
	return err
}

// responseBodyBytes is the body's total length, checked to fit the size prefix.
func responseBodyBytes(chunks []Chunk) (int64, error) {
	var total int64
	for i := range chunks {
		chunk := &chunks[i]
		length := int64(len(chunk.Bytes))
		if chunk.File != nil {
			if chunk.Offset < 0 || chunk.Length < 0 {
				return 0, fmt.Errorf("%w: file region offset %d length %d", errResponseTooLarge, chunk.Offset, chunk.Length)
			}
			length = chunk.Length
		}
		total += length
		if total > math.MaxInt32-responseHeaderBytesMax {
			return 0, fmt.Errorf("%w: %d bytes", errResponseTooLarge, total)
		}
	}
	return total, nil
}
