package api

// ExpireDelegationToken (key 40), versions 1-2 (Kafka 4 removed v0).
//
// Behavior:
//   - The checks and errors of RenewDelegationToken; forwarded to the
//     active controller.
//   - The new expiry is now + expiry_time_period_ms, never past the
//     token's maximum; a negative period removes the token at once, and
//     it authenticates no new session.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(40, 1, 2, handleExpireDelegationToken)
	registerController(40, 1, 2, handleExpireDelegationToken)
}

func handleExpireDelegationToken(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ExpireDelegationTokenRequest)
	resp := kmsg.NewPtrExpireDelegationTokenResponse()
	code := b.tokenRequestError(c)
	if code == 0 && b.forwarded(c, req) {
		return
	}
	if code == 0 {
		code = b.tokenSecretError()
	}
	if code == 0 {
		token, found := tokenByHMAC(b.Image(), b.tokenSecretKey(), req.HMAC)
		if !found {
			code = kerr.DelegationTokenNotFound.Code
		} else {
			ctx, cancel := requestContext(forwardTimeoutMs)
			defer cancel()
			resp.ExpiryTimestamp, code = b.Controller.ExpireDelegationToken(ctx, b.Now().UnixMilli(),
				token.TokenID, c.principal(), req.ExpiryPeriodMillis)
		}
	}
	resp.ErrorCode = code
	if code != 0 {
		resp.ExpiryTimestamp = -1 // as Kafka answers an error
	}
	c.reply(resp)
}
