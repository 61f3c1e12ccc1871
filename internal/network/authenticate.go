package network

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// The authentication gate of SASL_PLAINTEXT and SASL_SSL listeners.
//
// A connection on a listener with an Authenticator starts unauthenticated,
// with a Session that the SaslHandshake and SaslAuthenticate handlers drive.
// Until the session is open the reader serves the connection one request at
// a time and admits, as Kafka's SaslServerAuthenticator does:
//
//	GateHandshake     ApiVersions and SaslHandshake; anything else closes
//	                  the connection (Kafka's IllegalSaslStateException)
//	GateAuthenticate  SaslAuthenticate only (after SaslHandshake v1)
//	GateRawToken      one raw token: a size-prefixed frame without a request
//	                  header (after SaslHandshake v0), answered by a
//	                  size-prefixed frame without a response header
//	GateFailed        nothing: the connection closes
//	GateOpen          every request; a SaslHandshake starts re-authentication
//	                  (KIP-368) and gates the connection again
//
// Frames read while the session is not open are bounded by
// sasl.server.max.receive.size (Session.MaxReceiveBytes); a larger one
// closes the connection before anything is allocated. Once the session's
// lifetime has passed (connections.max.reauth.ms, or a credential's expiry)
// the next request other than SaslHandshake closes the connection.
//
// Each gated request is answered before the next frame is read, so the
// handler's change of the gate, and of ConnInfo.Principal, is seen by the
// reader and by the handlers of later requests. On listeners without an
// Authenticator none of this runs: the reader checks ConnInfo.SASL for nil.

// Authenticator starts the SASL sessions of one listener's connections.
type Authenticator interface {
	// NewSession returns the session of a newly accepted connection.
	NewSession(info *ConnInfo) Session
}

// GateState is what a connection's session lets through.
type GateState int8

// Gate states; see the comment above.
const (
	GateHandshake GateState = iota
	GateAuthenticate
	GateRawToken
	GateFailed
	GateOpen
)

// Session is one connection's SASL state, shared by the connection reader
// and the SaslHandshake and SaslAuthenticate handlers (which know its
// concrete type). Its methods may be called from the reader and from
// handlers, one at a time (see the ordering above).
type Session interface {
	// Gate is the session's current state.
	Gate() GateState
	// RawToken handles one token of SaslHandshake v0's raw mode and returns
	// the token to send back (nil: send nothing). An error means the
	// authentication failed; the reader closes the connection after
	// FailureDelay.
	RawToken(token []byte) ([]byte, error)
	// ExpiresAt is when the session's lifetime ends; zero for never.
	ExpiresAt() time.Time
	// FailureDelay is connection.failed.authentication.delay.ms.
	FailureDelay() time.Duration
	// MaxReceiveBytes is sasl.server.max.receive.size.
	MaxReceiveBytes() int32
}

// API keys the gate knows.
const (
	saslHandshakeKey    int16 = 17
	apiVersionsKeyGate  int16 = 18
	saslAuthenticateKey int16 = 36
)

// startSession gives the connection its session when its listener
// authenticates.
func (c *connection) startSession() {
	for i := range c.server.cfg.Listeners {
		spec := &c.server.cfg.Listeners[i]
		if spec.Name == c.info.Listener && spec.Authenticator != nil {
			c.info.SASL = spec.Authenticator.NewSession(&c.info)
			return
		}
	}
}

// gateVerdict is what the gate does with a frame.
type gateVerdict int8

const (
	// gatePass hands the frame on as usual.
	gatePass gateVerdict = iota
	// gateSerialize hands it on and waits for its answer before the next
	// frame is read.
	gateSerialize
	// gateClose closes the connection.
	gateClose
)

// frameLimit is the largest frame the reader accepts next.
func (c *connection) frameLimit() int32 {
	limit := c.server.cfg.SocketRequestMaxBytes
	if session := c.info.SASL; session != nil && session.Gate() != GateOpen {
		limit = min(limit, session.MaxReceiveBytes())
	}
	return limit
}

// admit decides on a request frame of a connection with a session, from
// its API key (the frame's first two bytes).
func (c *connection) admit(frame []byte) (gateVerdict, string) {
	session := c.info.SASL
	apiKey := int16(binary.BigEndian.Uint16(frame))
	switch session.Gate() {
	case GateOpen:
		if apiKey == saslHandshakeKey {
			return gateSerialize, ""
		}
		if expiresAt := session.ExpiresAt(); !expiresAt.IsZero() && !time.Now().Before(expiresAt) {
			return gateClose, "SASL session expired without re-authentication"
		}
		return gatePass, ""
	case GateHandshake:
		if apiKey == apiVersionsKeyGate || apiKey == saslHandshakeKey {
			return gateSerialize, ""
		}
		return gateClose, fmt.Sprintf("unexpected request (api key %d) during SASL handshake", apiKey)
	case GateAuthenticate:
		if apiKey == saslAuthenticateKey {
			return gateSerialize, ""
		}
		return gateClose, fmt.Sprintf("unexpected request (api key %d) during SASL authentication", apiKey)
	default:
		return gateClose, "SASL authentication failed"
	}
}

// awaitAnswered waits until every request handed on has been answered;
// false if the connection closed first.
func (c *connection) awaitAnswered() bool {
	for {
		c.mu.Lock()
		unanswered, closed := c.mu.unanswered, c.mu.closed
		c.mu.Unlock()
		if closed {
			return false
		}
		if unanswered == 0 {
			return true
		}
		select {
		case <-c.turn:
		case <-c.closed:
			return false
		}
	}
}

// rawTokenExchange reads one raw token frame of SaslHandshake v0's mode,
// hands it to the session and writes the session's answer as a bare
// size-prefixed frame. Nothing else is in flight (the handshake was
// awaited), so the reader may write to the socket. False when the
// connection is closed.
func (c *connection) rawTokenExchange(reader *bufio.Reader) bool {
	session := c.info.SASL
	token, err := readRawToken(reader, session.MaxReceiveBytes())
	if err != nil {
		c.readFailed(err)
		return false
	}
	c.server.counters.requestsReceived.Add(1)
	response, err := session.RawToken(token)
	if err != nil {
		c.closeAfterFailedAuthentication(session.FailureDelay(), err)
		return false
	}
	if response == nil {
		return true
	}
	out := make([]byte, 4+len(response))
	binary.BigEndian.PutUint32(out, uint32(len(response)))
	copy(out[4:], response)
	n, err := c.netConn.Write(out)
	c.server.counters.bytesSent.Add(uint64(n))
	if err != nil {
		c.close(slog.LevelDebug, "write failed", err)
		return false
	}
	return true
}

// closeAfterFailedAuthentication closes the connection once delay has
// passed (connection.failed.authentication.delay.ms), so a client guessing
// passwords gains nothing by reconnecting at once.
func (c *connection) closeAfterFailedAuthentication(delay time.Duration, err error) {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-c.closed:
	}
	c.close(slog.LevelInfo, "SASL authentication failed", err)
}

// readRawToken reads a size-prefixed frame of at most maxBytes.
func readRawToken(r io.Reader, maxBytes int32) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxBytes {
		return nil, fmt.Errorf("%w: SASL token of %d bytes (sasl.server.max.receive.size %d)", ErrFrameTooLarge, n, maxBytes)
	}
	token := make([]byte, n)
	if _, err := io.ReadFull(r, token); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return token, nil
}
