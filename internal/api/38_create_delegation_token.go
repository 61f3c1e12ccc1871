package api

// CreateDelegationToken (key 38), versions 1-3 (Kafka 4 removed v0).
//
// Behavior:
//   - Refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on PLAINTEXT
//     listeners, on SSL without a client certificate and on connections a
//     delegation token authenticated; checked by the broker the client is
//     connected to, which then forwards the request to the active
//     controller in an Envelope.
//   - DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key.
//   - v3's owner (KIP-373) defaults to the requester; creating a token for
//     another owner needs CREATE_TOKENS on the USER resource "Type:Name" of
//     the owner, else DELEGATION_TOKEN_AUTHORIZATION_FAILED.
//   - Renewers must be User principals, else INVALID_PRINCIPAL_TYPE.
//   - max_lifetime_ms <= 0 takes delegation.token.max.lifetime.ms, and no
//     more than it is granted; the first expiry is
//     delegation.token.expiry.time.ms after issue, capped by the maximum.
//   - The response carries the token id and its HMAC, the password a client
//     authenticates with (SCRAM, tokenauth=true).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/security"
)

func init() {
	register(38, 1, 3, handleCreateDelegationToken)
	registerController(38, 1, 3, handleCreateDelegationToken)
}

func handleCreateDelegationToken(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.CreateDelegationTokenRequest)
	requester := c.principal()
	owner := requester
	if req.OwnerPrincipalName != nil && *req.OwnerPrincipalName != "" {
		ownerType := "User"
		if req.OwnerPrincipalType != nil && *req.OwnerPrincipalType != "" {
			ownerType = *req.OwnerPrincipalType
		}
		owner = ownerType + ":" + *req.OwnerPrincipalName
	}
	resp := kmsg.NewPtrCreateDelegationTokenResponse()
	resp.PrincipalType, resp.PrincipalName = splitPrincipal(owner)
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = splitPrincipal(requester)
	// An error answers -1 timestamps, as Kafka's prepareResponse.
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
	fail := func(err *kerr.Error) {
		resp.ErrorCode = err.Code
		c.reply(resp)
	}
	if !b.allowTokenRequests(c) {
		fail(kerr.DelegationTokenRequestNotAllowed)
		return
	}
	if b.forwarded(c, req) {
		return
	}
	secretKey := b.tokenSecretKey()
	if secretKey == nil {
		fail(kerr.DelegationTokenAuthDisabled)
		return
	}
	renewers := make([]string, 0, len(req.Renewers))
	for _, renewer := range req.Renewers {
		if renewer.PrincipalType != "User" {
			fail(kerr.InvalidPrincipalType)
			return
		}
		renewers = append(renewers, renewer.PrincipalType+":"+renewer.PrincipalName)
	}
	if owner != requester && !b.authorize(c, authz.OpCreateTokens, authz.ResourceUser, owner) {
		fail(kerr.DelegationTokenAuthorizationFailed)
		return
	}
	ctx, cancel := requestContext(forwardTimeoutMs)
	defer cancel()
	token, code := b.Controller.CreateDelegationToken(ctx, b.Now().UnixMilli(), b.tokenLimits(),
		controller.TokenCreation{Owner: owner, Requester: requester, Renewers: renewers, MaxLifetimeMs: req.MaxLifetimeMillis})
	if code != 0 {
		resp.ErrorCode = code
		c.reply(resp)
		return
	}
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = token.IssueTimestamp, token.ExpirationTimestamp, token.MaxTimestamp
	resp.TokenID, resp.HMAC = token.TokenID, security.TokenHMAC(secretKey, token.TokenID)
	c.reply(resp)
}
