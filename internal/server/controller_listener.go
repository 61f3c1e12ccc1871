package server

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"time"

	"github.com/samsa-streaming/samsa/internal/security"
)

// The controller listener (controller.listener.names) carries two protocols
// on one port, as KRaft's does: the Raft traffic between voters and the
// Kafka protocol that brokers and tools speak to controllers
// (BrokerRegistration, BrokerHeartbeat, forwarded admin requests, observers
// fetching the metadata log). A Raft connection opens with the transport's
// preamble "SQRM"; a Kafka connection opens with a request's 4-byte size,
// which can never spell those bytes (0x5351524D is more than any
// socket.request.max.bytes accepts). The first four bytes decide.

// raftPreamble is how the quorum transport opens a connection.
var raftPreamble = []byte("SQRM")

// sniffTimeoutMs bounds the wait for a new connection's first bytes.
const sniffTimeoutMs = 10000

// controllerListener splits one bound listener into the Raft and the Kafka
// side.
type controllerListener struct {
	inner net.Listener
	// tls, when set, is the listener's TLS side (SSL or SASL_SSL): each
	// connection's handshake is done before its first bytes are sniffed.
	tls         *security.ServerTLS
	raft, kafka *chanListener
	// open counts the sides not closed yet; the bound listener closes with
	// the last.
	open sync.WaitGroup
}

func newControllerListener(inner net.Listener, serverTLS *security.ServerTLS) *controllerListener {
	cl := &controllerListener{inner: inner, tls: serverTLS}
	cl.raft = newChanListener(inner.Addr(), &cl.open)
	cl.kafka = newChanListener(inner.Addr(), &cl.open)
	go cl.acceptLoop()
	go func() {
		cl.open.Wait()
		inner.Close()
	}()
	return cl
}

func (cl *controllerListener) acceptLoop() {
	for {
		c, err := cl.inner.Accept()
		if err != nil {
			cl.raft.Close()
			cl.kafka.Close()
			return
		}
		go cl.route(c)
	}
}

// route reads a connection's first bytes and hands it to its side.
func (cl *controllerListener) route(c net.Conn) {
	head := make([]byte, len(raftPreamble))
	c.SetReadDeadline(time.Now().Add(sniffTimeoutMs * time.Millisecond))
	if cl.tls != nil {
		tlsConn := tls.Server(c, cl.tls.Config())
		if err := tlsConn.Handshake(); err != nil {
			c.Close()
			return
		}
		c = tlsConn
	}
	if _, err := io.ReadFull(c, head); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	side := cl.kafka
	if bytes.Equal(head, raftPreamble) {
		side = cl.raft
	}
	select {
	case side.conns <- wrapPrefixed(c, head):
	case <-side.done:
		c.Close()
	}
}

// chanListener is one side of a controllerListener: the quorum and the
// network server each close theirs at shutdown.
type chanListener struct {
	addr      net.Addr
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
	open      *sync.WaitGroup
}

func newChanListener(addr net.Addr, open *sync.WaitGroup) *chanListener {
	open.Add(1)
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{}), open: open}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		l.open.Done()
	})
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// prefixedConn replays the bytes read to route a connection.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// tlsPrefixedConn is a prefixedConn over a TLS connection whose handshake is
// done; the network layer reads the handshake's state from it.
type tlsPrefixedConn struct {
	prefixedConn
	tls *tls.Conn
}

// ConnectionState is the completed handshake's state.
func (c *tlsPrefixedConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

func wrapPrefixed(c net.Conn, head []byte) net.Conn {
	if tlsConn, ok := c.(*tls.Conn); ok {
		return &tlsPrefixedConn{prefixedConn: prefixedConn{Conn: c, prefix: head}, tls: tlsConn}
	}
	return &prefixedConn{Conn: c, prefix: head}
}

// principal names the principal of a Kafka connection on an SSL controller
// listener from its client certificate; nil when the listener is not SSL.
func (cl *controllerListener) principalFunc(protocol string) func(tls.ConnectionState) (string, error) {
	if cl.tls == nil || protocol != "SSL" {
		return nil
	}
	return cl.tls.Principal
}
