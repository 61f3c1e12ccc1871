package api

// What the delegation token APIs (38-41, KIP-48) share: the secret key and
// limits from the configuration, who may ask, and finding a token by the
// HMAC a client presents.

import (
	"crypto/subtle"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/security"
)

// tokenSecretKey is delegation.token.secret.key; nil when delegation tokens
// are disabled.
func (b *Broker) tokenSecretKey() []byte {
	if b.StaticConfig == nil {
		return nil
	}
	key, ok := b.Config().Get("delegation.token.secret.key")
	if !ok || key == "" {
		return nil
	}
	return []byte(key)
}

// tokenLimits are delegation.token.max.lifetime.ms and
// delegation.token.expiry.time.ms.
func (b *Broker) tokenLimits() controller.TokenLimits {
	limits := controller.TokenLimits{MaxLifetimeMs: 604800000, RenewMs: 86400000}
	cfg := b.Config()
	if v, ok := cfg.Get("delegation.token.max.lifetime.ms"); ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			limits.MaxLifetimeMs = ms
		}
	}
	if v, ok := cfg.Get("delegation.token.expiry.time.ms"); ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			limits.RenewMs = ms
		}
	}
	return limits
}

// allowTokenRequests is Kafka's check before every token request: not on
// a connection a delegation token authenticated, not on PLAINTEXT, not on
// SSL without a client certificate. An enveloped request's connection was
// checked by the broker that forwarded it.
func (b *Broker) allowTokenRequests(c *call) bool {
	conn := c.req.Conn
	switch {
	case conn.TokenAuthenticated:
		return false
	case c.enveloped:
		return true
	case conn.SecurityProtocol == "PLAINTEXT" || conn.SecurityProtocol == "":
		return false
	case conn.SecurityProtocol == "SSL" && c.principal() == anonymous:
		return false
	}
	return true
}

// tokenByHMAC finds the token whose HMAC is hmac.
func tokenByHMAC(img *metadata.Image, secretKey, hmac []byte) (metadata.DelegationToken, bool) {
	for _, t := range img.DelegationTokens() {
		if subtle.ConstantTimeCompare(security.TokenHMAC(secretKey, t.TokenID), hmac) == 1 {
			return t, true
		}
	}
	return metadata.DelegationToken{}, false
}

// splitPrincipal splits "Type:Name".
func splitPrincipal(principal string) (principalType, name string) {
	principalType, name, _ = strings.Cut(principal, ":")
	return principalType, name
}

// mayDescribeToken is Kafka's DelegationTokenManager.filterToken without
// the owner filter: the principal owns, requested or may renew the token,
// or may DESCRIBE it, or may DESCRIBE_TOKENS of its owner (KIP-373).
func (b *Broker) mayDescribeToken(c *call, t metadata.DelegationToken) bool {
	return t.OwnerOrRenewer(c.principal()) ||
		b.authorizeQuiet(c, authz.OpDescribe, authz.ResourceDelegationToken, t.TokenID) ||
		b.authorizeQuiet(c, authz.OpDescribeTokens, authz.ResourceUser, t.Owner)
}
