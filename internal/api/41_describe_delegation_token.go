package api

// DescribeDelegationToken (key 41), versions 1-3 (Kafka 4 removed v0).
//
// Behavior:
//   - DELEGATION_TOKEN_REQUEST_NOT_ALLOWED and DELEGATION_TOKEN_AUTH_DISABLED
//     as for CreateDelegationToken; answered by any broker from its
//     metadata image.
//   - owners null describes every token, an empty list none; otherwise the
//     tokens one of the owners owns, requested or may renew.
//   - Of those, only the tokens the principal owns, requested or may renew,
//     may DESCRIBE (DELEGATION_TOKEN resource, the token id), or whose
//     owner's tokens it may DESCRIBE_TOKENS (USER resource, KIP-373); the
//     rest are left out silently.
//   - v3 adds the token requester.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/security"
)

func init() {
	register(41, 1, 3, handleDescribeDelegationToken)
	registerController(41, 1, 3, handleDescribeDelegationToken)
}

func handleDescribeDelegationToken(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeDelegationTokenRequest)
	resp := kmsg.NewPtrDescribeDelegationTokenResponse()
	if resp.ErrorCode = b.tokenRequestError(c); resp.ErrorCode == 0 {
		resp.ErrorCode = b.tokenSecretError()
	}
	if resp.ErrorCode != 0 || (req.Owners != nil && len(req.Owners) == 0) {
		c.reply(resp)
		return
	}
	secretKey := b.tokenSecretKey()
	nowMs := b.Now().UnixMilli()
	for _, t := range b.Image().DelegationTokens() {
		if t.ExpirationTimestamp < nowMs || !ownedByAny(t.OwnerOrRenewer, req.Owners) || !b.mayDescribeToken(c, t) {
			continue
		}
		detail := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
		detail.PrincipalType, detail.PrincipalName = splitPrincipal(t.Owner)
		detail.TokenRequesterPrincipalType, detail.TokenRequesterPrincipalName = splitPrincipal(t.Requester)
		detail.IssueTimestamp, detail.ExpiryTimestamp, detail.MaxTimestamp = t.IssueTimestamp, t.ExpirationTimestamp, t.MaxTimestamp
		detail.TokenID, detail.HMAC = t.TokenID, security.TokenHMAC(secretKey, t.TokenID)
		for _, renewer := range t.Renewers {
			rr := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
			rr.PrincipalType, rr.PrincipalName = splitPrincipal(renewer)
			detail.Renewers = append(detail.Renewers, rr)
		}
		resp.TokenDetails = append(resp.TokenDetails, detail)
	}
	c.reply(resp)
}

// ownedByAny reports whether owners is nil (no filter) or names a principal
// for which ownerOrRenewer holds.
func ownedByAny(ownerOrRenewer func(string) bool, owners []kmsg.DescribeDelegationTokenRequestOwner) bool {
	if owners == nil {
		return true
	}
	for _, o := range owners {
		if ownerOrRenewer(o.PrincipalType + ":" + o.PrincipalName) {
			return true
		}
	}
	return false
}
