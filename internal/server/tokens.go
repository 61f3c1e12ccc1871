package server

import (
	"context"
	"strconv"
	"time"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/security"
)

// tokenCredentials is the delegation token credential cache of
// delegation.token.secret.key; nil when tokens are disabled.
func tokenCredentials(cfg *config.Broker) *security.TokenCredentials {
	key, ok := cfg.Get("delegation.token.secret.key")
	if !ok || key == "" {
		return nil
	}
	return security.NewTokenCredentials([]byte(key))
}

// DelegationTokenCredential implements security.TokenCredentialStore: a
// token authenticates while it is in the image and not past its expiry.
func (s imageCredentials) DelegationTokenCredential(tokenID string, m security.ScramMechanism) (security.ScramCredential, security.TokenInfo, bool) {
	if s.tokens == nil {
		return security.ScramCredential{}, security.TokenInfo{}, false
	}
	t, ok := s.image().DelegationToken(tokenID)
	if !ok || t.ExpirationTimestamp < time.Now().UnixMilli() {
		return security.ScramCredential{}, security.TokenInfo{}, false
	}
	c, err := s.tokens.Credential(tokenID, m)
	if err != nil {
		return security.ScramCredential{}, security.TokenInfo{}, false
	}
	valid := func() bool {
		current, ok := s.image().DelegationToken(tokenID)
		return ok && current.ExpirationTimestamp >= time.Now().UnixMilli()
	}
	return c, security.TokenInfo{Owner: t.Owner, ExpiresAt: time.UnixMilli(t.ExpirationTimestamp), Valid: valid}, true
}

// runTokenExpiry removes expired delegation tokens every
// delegation.token.expiry.check.interval.ms while this node is the active
// controller.
func (n *Node) runTokenExpiry(ctx context.Context) {
	if !n.cfg.IsController() {
		return
	}
	intervalMs := int64(3600000)
	if v, ok := n.cfg.Get("delegation.token.expiry.check.interval.ms"); ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			intervalMs = ms
		}
	}
	ticker := time.NewTicker(time.Duration(intervalMs) * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if leader, _ := n.metadata.Leader(); leader != n.cfg.NodeID {
				continue
			}
			sweepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			removed, err := n.controller.RemoveExpiredDelegationTokens(sweepCtx, time.Now().UnixMilli())
			cancel()
			if err != nil {
				n.logger.Debug("delegation token expiry", "err", err)
				continue
			}
			if removed > 0 {
				n.logger.Info("removed expired delegation tokens", "tokens", removed)
			}
		}
	}
}
