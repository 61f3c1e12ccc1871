package api

// SaslHandshake (key 17), versions 0-1.
//
// Behavior:
//   - Served on SASL_PLAINTEXT and SASL_SSL listeners, where the network
//     gate admits it before authentication (and on an authenticated
//     connection, to start a re-authentication, KIP-368). Elsewhere it
//     answers ILLEGAL_SASL_STATE.
//   - The answer lists the enabled mechanisms. A mechanism not enabled
//     answers UNSUPPORTED_SASL_MECHANISM; a handshake out of order, or a
//     re-authentication with another mechanism, ILLEGAL_SASL_STATE. Both
//     are sent after connection.failed.authentication.delay.ms and close
//     the connection, as Kafka does.
//   - v0: the tokens that follow are bare size-prefixed frames, not
//     SaslAuthenticate requests (the network gate reads them); v1: they
//     come in SaslAuthenticate.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/security"
)

func init() {
	register(17, 0, 1, handleSaslHandshake)
	registerController(17, 0, 1, handleSaslHandshake)
}

func handleSaslHandshake(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.SASLHandshakeRequest)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	session, _ := c.req.Conn.SASL.(*security.SASLSession)
	if session == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		c.reply(resp)
		return
	}
	resp.SupportedMechanisms = session.Mechanisms()
	err := session.Handshake(req.Mechanism, c.version == 0)
	if err == nil {
		c.reply(resp)
		return
	}
	resp.ErrorCode = kerr.IllegalSaslState.Code
	if errors.Is(err, security.ErrUnsupportedMechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
	}
	b.Logger.Info("SASL handshake refused", "listener", c.req.Conn.Listener, "client", c.req.Conn.RemoteAddr, "mechanism", req.Mechanism, "err", err)
	c.replyAndCloseAfter(resp, session.FailureDelay())
}

// replyAndCloseAfter sends resp once delay has passed and closes the
// connection after it: a failed authentication's answer
// (connection.failed.authentication.delay.ms).
func (c *call) replyAndCloseAfter(resp kmsg.Response, delay time.Duration) {
	resp.SetVersion(c.version)
	body := resp.AppendTo(nil)
	time.AfterFunc(delay, func() {
		c.req.Respond(network.Response{Chunks: []network.Chunk{{Bytes: body}}, Close: true})
	})
}
