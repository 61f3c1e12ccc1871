package controller

// Delegation tokens (KIP-48) as Kafka's DelegationTokenControlManager
// decides them. The caller has authenticated and authorized the requester
// and resolved a token's HMAC to its id; times are Unix milliseconds passed
// in, so the decisions are deterministic.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// TokenLimits are delegation.token.max.lifetime.ms and
// delegation.token.expiry.time.ms.
type TokenLimits struct {
	MaxLifetimeMs int64
	RenewMs       int64
}

// TokenCreation is a CreateDelegationToken request, principals as
// "Type:Name".
type TokenCreation struct {
	Owner, Requester string
	Renewers         []string
	// MaxLifetimeMs <= 0 takes TokenLimits.MaxLifetimeMs.
	MaxLifetimeMs int64
}

// CreateDelegationToken writes a new token and returns it; a failure is
// a Kafka error code.
func (c *Controller) CreateDelegationToken(ctx context.Context, nowMs int64, limits TokenLimits, create TokenCreation) (metadata.DelegationToken, int16) {
	maxLifetime := limits.MaxLifetimeMs
	if create.MaxLifetimeMs > 0 {
		maxLifetime = min(create.MaxLifetimeMs, maxLifetime)
	}
	token := metadata.DelegationToken{
		TokenID: metadata.RandomUUID().String(), Owner: create.Owner, Requester: create.Requester,
		Renewers: create.Renewers, IssueTimestamp: nowMs, MaxTimestamp: nowMs + maxLifetime,
	}
	token.ExpirationTimestamp = min(token.MaxTimestamp, nowMs+limits.RenewMs)
	if err := c.beginTimed(ctx); err != nil {
		return metadata.DelegationToken{}, commitError(err).Code
	}
	defer c.mu.Unlock()
	if err := c.commitLocked(ctx, []metadata.Record{tokenRecord(token)}); err != nil {
		return metadata.DelegationToken{}, commitError(err).Code
	}
	return token, 0
}

// RenewDelegationToken moves the token's expiry to now + periodMs
// (TokenLimits.RenewMs when negative), never past its maximum, and returns
// the new expiry.
func (c *Controller) RenewDelegationToken(ctx context.Context, nowMs int64, limits TokenLimits, tokenID, principal string, periodMs int64) (int64, int16) {
	if periodMs < 0 {
		periodMs = limits.RenewMs
	}
	return c.changeTokenExpiry(ctx, nowMs, tokenID, principal, periodMs, false)
}

// ExpireDelegationToken moves the token's expiry to now + periodMs, never
// past its maximum; a negative period removes the token at once. It
// returns the new expiry.
func (c *Controller) ExpireDelegationToken(ctx context.Context, nowMs int64, tokenID, principal string, periodMs int64) (int64, int16) {
	return c.changeTokenExpiry(ctx, nowMs, tokenID, principal, periodMs, true)
}

func (c *Controller) changeTokenExpiry(ctx context.Context, nowMs int64, tokenID, principal string, periodMs int64, expiring bool) (int64, int16) {
	if err := c.beginTimed(ctx); err != nil {
		return 0, commitError(err).Code
	}
	defer c.mu.Unlock()
	token, ok := c.image.Load().DelegationToken(tokenID)
	switch {
	case !ok:
		return 0, kerr.DelegationTokenNotFound.Code
	case !token.OwnerOrRenewer(principal):
		return 0, kerr.DelegationTokenOwnerMismatch.Code
	case token.MaxTimestamp < nowMs || token.ExpirationTimestamp < nowMs:
		return 0, kerr.DelegationTokenExpired.Code
	}
	expiry := min(token.MaxTimestamp, nowMs+periodMs)
	var rec metadata.Record
	if expiring && expiry < nowMs {
		rec = &metadata.RemoveDelegationTokenRecord{TokenID: tokenID}
	} else {
		token.ExpirationTimestamp = expiry
		rec = tokenRecord(token)
	}
	if err := c.commitLocked(ctx, []metadata.Record{rec}); err != nil {
		return 0, commitError(err).Code
	}
	return expiry, 0
}

// maxTokenRemovalsPerEntry bounds the records one expiry sweep writes; the
// next sweep takes the rest.
const maxTokenRemovalsPerEntry = maxRecordsPerUserOp

// RemoveExpiredDelegationTokens removes the tokens whose expiry has
// passed, as the controller's periodic sweep
// (delegation.token.expiry.check.interval.ms), and returns how many.
func (c *Controller) RemoveExpiredDelegationTokens(ctx context.Context, nowMs int64) (int, error) {
	if err := c.beginTimed(ctx); err != nil {
		return 0, err
	}
	defer c.mu.Unlock()
	var recs []metadata.Record
	for _, t := range c.image.Load().DelegationTokens() {
		if t.ExpirationTimestamp < nowMs && len(recs) < maxTokenRemovalsPerEntry {
			recs = append(recs, &metadata.RemoveDelegationTokenRecord{TokenID: t.TokenID})
		}
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		return 0, err
	}
	return len(recs), nil
}

func tokenRecord(t metadata.DelegationToken) *metadata.DelegationTokenRecord {
	return &metadata.DelegationTokenRecord{Owner: t.Owner, Requester: t.Requester, Renewers: t.Renewers,
		IssueTimestamp: t.IssueTimestamp, MaxTimestamp: t.MaxTimestamp, ExpirationTimestamp: t.ExpirationTimestamp,
		TokenID: t.TokenID}
}
