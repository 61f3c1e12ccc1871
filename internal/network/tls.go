package network

import (
	"crypto/tls"
	"log/slog"
	"net"
	"time"
)

// TLSHandshakeTimeoutMs bounds a TLS handshake on an SSL or SASL_SSL
// listener. Kafka has no key of its own for it (its handshake shares the
// connection's idle timeout); ten seconds keeps a client that opens a
// connection and sends nothing, or a plaintext client on a TLS port waiting
// for an answer, from holding a connection slot for long.
const TLSHandshakeTimeoutMs = 10_000

// wrapTLS makes netConn a TLS server connection when the listener has a
// TLS config. The handshake itself happens on the connection's reader
// goroutine (handshakeTLS), never in the accept loop.
func wrapTLS(netConn net.Conn, spec *ListenerSpec) net.Conn {
	if spec.TLS == nil {
		return netConn
	}
	return tls.Server(netConn, spec.TLS)
}

// handshakeTLS runs the server handshake of a TLS connection, bounded by
// TLSHandshakeTimeoutMs, and records its state and principal in ConnInfo
// before any request is read. It reports false when the connection was
// closed: a failed handshake (garbage, or a plaintext client) is logged at
// debug level, with the TLS error only, and the broker carries on.
func (c *connection) handshakeTLS() bool {
	if done, ok := c.netConn.(handshakenConn); ok {
		if _, raw := c.netConn.(*tls.Conn); !raw {
			return c.recordTLS(done.ConnectionState())
		}
	}
	tlsConn, ok := c.netConn.(*tls.Conn)
	if !ok {
		return true
	}
	tlsConn.SetDeadline(time.Now().Add(TLSHandshakeTimeoutMs * time.Millisecond))
	// Shutdown interrupts reads with a past deadline; one that came before
	// the deadline above would be undone by it.
	if c.server.isStopping() {
		c.close(slog.LevelDebug, "server shutting down before the TLS handshake", nil)
		return false
	}
	if err := tlsConn.HandshakeContext(c.ctx); err != nil {
		c.server.counters.tlsHandshakesFailed.Add(1)
		c.close(slog.LevelDebug, "TLS handshake failed", err)
		return false
	}
	tlsConn.SetDeadline(time.Time{})
	return c.recordTLS(tlsConn.ConnectionState())
}

// handshakenConn is a connection whose TLS handshake was done before it was
// handed to the Server (through ListenerSpec.Listener), such as the
// controller listener's, which sniffs the bytes inside TLS.
type handshakenConn interface {
	ConnectionState() tls.ConnectionState
}

// recordTLS stores the handshake's state and principal in ConnInfo.
func (c *connection) recordTLS(state tls.ConnectionState) bool {
	c.info.TLS = &state
	if c.tlsPrincipal != nil {
		principal, err := c.tlsPrincipal(state)
		if err != nil {
			c.server.counters.tlsHandshakesFailed.Add(1)
			c.close(slog.LevelInfo, "SSL authentication failed: no principal for the client certificate", err)
			return false
		}
		c.info.Principal = principal
	}
	return true
}

// flushCoalesced writes the gathered chunks of a TLS connection through
// pooled buffers: a *tls.Conn seals every Write as its own record (and
// syscall), so handing it the many small prefixes and bodies of a batch one
// by one, as net.Buffers does, would cost a record each.
func (w *responseWriter) flushCoalesced() error {
	bufferPointer := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bufferPointer)
	buffer := (*bufferPointer)[:0]
	var err error
	write := func() {
		if err != nil || len(buffer) == 0 {
			return
		}
		var n int
		n, err = w.c.netConn.Write(buffer)
		w.c.server.counters.bytesSent.Add(uint64(n))
		buffer = buffer[:0]
	}
	for _, chunk := range w.iovecs {
		if len(chunk) >= cap(buffer) {
			// Large chunks go out as they are, after what was gathered.
			write()
			if err == nil {
				var n int
				n, err = w.c.netConn.Write(chunk)
				w.c.server.counters.bytesSent.Add(uint64(n))
			}
			continue
		}
		if len(buffer)+len(chunk) > cap(buffer) {
			write()
		}
		buffer = append(buffer, chunk...)
	}
	write()
	clear(w.iovecs)
	w.iovecs = w.iovecs[:0]
	return err
}
