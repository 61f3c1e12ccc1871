package network

import (
	"net"
	"sync/atomic"
	"time"
)

// ConnectionRates decides on connection creation rates (KIP-612); the
// broker's quota package implements it.
type ConnectionRates interface {
	// AdmitIP is asked for every connection accepted from ip: 0 accepts it;
	// a positive throttle refuses it, and the connection is closed after
	// that many milliseconds, as Kafka closes a connection over an IP's
	// connection_creation_rate.
	AdmitIP(ip string, nowMs int64) (throttleMs int64)
	// AdmitListener is asked after every connection accepted on listener
	// and returns how long its acceptor waits before accepting the next
	// (max.connection.creation.rate).
	AdmitListener(listener string, nowMs int64) (waitMs int64)
}

// maxHeldConnections bounds the refused connections waiting for their
// delayed close; past it, a refused connection is closed at once.
const maxHeldConnections = 1024

// heldConnections counts them.
var heldConnections atomic.Int64

// refuseForRate closes a connection refused for its IP's creation rate
// after throttleMs.
func (s *Server) refuseForRate(netConn net.Conn, listener, remoteIP string, throttleMs int64) {
	s.counters.connectionsRateLimited.Add(1)
	s.logger.Debug("connection refused: connection_creation_rate exceeded",
		"listener", listener, "remote", remoteIP, "close_after_ms", throttleMs)
	if heldConnections.Add(1) > maxHeldConnections {
		heldConnections.Add(-1)
		netConn.Close()
		return
	}
	time.AfterFunc(time.Duration(throttleMs)*time.Millisecond, func() {
		heldConnections.Add(-1)
		netConn.Close()
	})
}

// awaitListenerRate waits as long as the listener's creation rate asks
// after a connection was accepted; false when the server stops first.
func (s *Server) awaitListenerRate(listener string) bool {
	if s.cfg.ConnectionRates == nil {
		return true
	}
	waitMs := s.cfg.ConnectionRates.AdmitListener(listener, time.Now().UnixMilli())
	if waitMs <= 0 {
		return true
	}
	s.logger.Debug("listener throttled: max.connection.creation.rate", "listener", listener, "wait_ms", waitMs)
	timer := time.NewTimer(time.Duration(waitMs) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.stopAccepting:
		return false
	}
}

// perIPLimit is the connection limit of remoteIP: its override, else
// max.connections.per.ip.
func (s *Server) perIPLimit(remoteIP string) int {
	if limit, ok := s.cfg.MaxConnectionsPerIPOverrides[remoteIP]; ok {
		return limit
	}
	return s.cfg.MaxConnectionsPerIP
}
