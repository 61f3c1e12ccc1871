package api

// SaslAuthenticate (key 36), versions 0-2.
//
// Behavior:
//   - Carries one token of the mechanism chosen by SaslHandshake v1 each
//     way. When the exchange completes the connection's principal is the
//     authenticated user and other requests are served.
//   - A failure answers SASL_AUTHENTICATION_FAILED with a message that does
//     not say whether the user exists, after
//     connection.failed.authentication.delay.ms, and closes the connection;
//     a request out of order answers ILLEGAL_SASL_STATE the same way.
//   - On a listener without SASL, or after authentication without a new
//     handshake, it answers ILLEGAL_SASL_STATE and the connection stays.
//   - v1+: session_lifetime_ms is the time until the session expires
//     (connections.max.reauth.ms, or sooner a credential's expiry); 0 when
//     it does not (KIP-368). v2 is the flexible encoding.

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/security"
)

func init() {
	register(36, 0, 2, handleSaslAuthenticate)
	registerController(36, 0, 2, handleSaslAuthenticate)
}

func handleSaslAuthenticate(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.SASLAuthenticateRequest)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	session, _ := c.req.Conn.SASL.(*security.SASLSession)
	if session == nil || session.Gate() == network.GateOpen {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		resp.ErrorMessage = strptr("SaslAuthenticate request received after successful authentication")
		c.reply(resp)
		return
	}
	reply, lifetimeMs, err := session.Authenticate(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		message := err.Error()
		if errors.Is(err, security.ErrAuthenticationFailed) {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			if trimmed, ok := strings.CutPrefix(message, security.ErrAuthenticationFailed.Error()+": "); ok {
				message = trimmed
			}
		}
		resp.ErrorMessage = &message
		reason := message
		var failure *security.AuthenticationFailure
		if errors.As(err, &failure) {
			reason = failure.Reason
		}
		b.Logger.Info("SASL authentication failed", "listener", c.req.Conn.Listener, "client", c.req.Conn.RemoteAddr, "reason", reason)
		c.replyAndCloseAfter(resp, session.FailureDelay())
		return
	}
	resp.SASLAuthBytes = reply
	if reply == nil {
		resp.SASLAuthBytes = []byte{}
	}
	resp.SessionLifetimeMillis = lifetimeMs
	if session.Gate() == network.GateOpen {
		b.Logger.Debug("SASL authenticated", "listener", c.req.Conn.Listener, "client", c.req.Conn.RemoteAddr, "principal", c.req.Conn.Principal)
	}
	c.reply(resp)
}
