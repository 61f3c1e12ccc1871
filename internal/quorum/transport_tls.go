package quorum

import (
	"crypto/tls"
	"net"
	"time"
)

// handshake runs the TLS client handshake on a fresh connection to addr,
// within the request timeout; on failure the connection is closed.
func (t *transport) handshake(c net.Conn, addr string) (net.Conn, error) {
	config := t.dialTLS
	if config.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		config = config.Clone()
		config.ServerName = host
	}
	tlsConn := tls.Client(c, config)
	tlsConn.SetDeadline(time.Now().Add(t.requestTimeout))
	if err := tlsConn.HandshakeContext(t.ctx); err != nil {
		c.Close()
		return nil, err
	}
	tlsConn.SetDeadline(time.Time{})
	return tlsConn, nil
}
