package api

// RenewDelegationToken (key 39), versions 1-2 (Kafka 4 removed v0).
//
// Behavior:
//   - DELEGATION_TOKEN_REQUEST_NOT_ALLOWED and DELEGATION_TOKEN_AUTH_DISABLED
//     as for CreateDelegationToken; forwarded to the active controller.
//   - The token is named by its HMAC: none matching answers
//     DELEGATION_TOKEN_NOT_FOUND; a principal that is not its owner,
//     requester or a renewer gets DELEGATION_TOKEN_OWNER_MISMATCH; a token
//     past its expiry or maximum answers DELEGATION_TOKEN_EXPIRED.
//   - The new expiry is now + renew_period_ms (negative:
//     delegation.token.expiry.time.ms), never past the token's maximum.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(39, 1, 2, handleRenewDelegationToken)
	registerController(39, 1, 2, handleRenewDelegationToken)
}

func handleRenewDelegationToken(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.RenewDelegationTokenRequest)
	resp := kmsg.NewPtrRenewDelegationTokenResponse()
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
			resp.ExpiryTimestamp, code = b.Controller.RenewDelegationToken(ctx, b.Now().UnixMilli(), b.tokenLimits(),
				token.TokenID, c.principal(), req.RenewTimeMillis)
		}
	}
	resp.ErrorCode = code
	if code != 0 {
		resp.ExpiryTimestamp = -1 // as Kafka answers an error
	}
	c.reply(resp)
}

// tokenRequestError is DELEGATION_TOKEN_REQUEST_NOT_ALLOWED when the
// connection may not make token requests, else 0.
func (b *Broker) tokenRequestError(c *call) int16 {
	if !b.allowTokenRequests(c) {
		return kerr.DelegationTokenRequestNotAllowed.Code
	}
	return 0
}

// tokenSecretError is DELEGATION_TOKEN_AUTH_DISABLED without a secret key,
// else 0.
func (b *Broker) tokenSecretError() int16 {
	if b.tokenSecretKey() == nil {
		return kerr.DelegationTokenAuthDisabled.Code
	}
	return 0
}
