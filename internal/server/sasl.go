package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/security"
)

// imageCredentials reads SCRAM credentials from the newest metadata image:
// an atomic load and a map lookup, no lock.
type imageCredentials struct {
	image func() *metadata.Image
	// tokens derives delegation token credentials (tokens.go); nil when
	// delegation.token.secret.key is not set.
	tokens *security.TokenCredentials
}

func (s imageCredentials) ScramCredential(user string, m security.ScramMechanism) (security.ScramCredential, bool) {
	c, ok := s.image().ScramCredential(user, int8(m))
	if !ok {
		return security.ScramCredential{}, false
	}
	return security.ScramCredential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}, true
}

// isSASLProtocol reports whether a listener security protocol authenticates
// with SASL.
func isSASLProtocol(protocol string) bool {
	return protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL"
}

// attachAuthenticators gives every SASL_PLAINTEXT and SASL_SSL listener its
// authenticator, from sasl.enabled.mechanisms and the listener's JAAS
// configs (listener.name.<listener>.<mechanism>.sasl.jaas.config).
func attachAuthenticators(cfg *config.Broker, specs []network.ListenerSpec, image func() *metadata.Image) error {
	for i := range specs {
		protocol := cfg.ListenerSecurityProtocolMap[specs[i].Name]
		if !isSASLProtocol(protocol) {
			continue
		}
		authenticator, err := saslAuthenticator(cfg, specs[i].Name, protocol, image)
		if err != nil {
			return err
		}
		specs[i].Authenticator = authenticator
	}
	return nil
}

func saslAuthenticator(cfg *config.Broker, listener, protocol string, image func() *metadata.Image) (*security.SASLAuthenticator, error) {
	value := func(key string) string {
		v, _ := cfg.ListenerValue(listener, key)
		return v
	}
	mechanisms := splitList(value("sasl.enabled.mechanisms"))
	sc := security.SASLConfig{
		Listener:    listener,
		Mechanisms:  mechanisms,
		Credentials: imageCredentials{image: image, tokens: tokenCredentials(cfg)},
	}
	var err error
	if sc.MaxReauthMs, err = strconv.ParseInt(value("connections.max.reauth.ms"), 10, 64); err != nil {
		return nil, fmt.Errorf("listener %s: connections.max.reauth.ms: %w", listener, err)
	}
	if sc.FailureDelayMs, err = strconv.ParseInt(value("connection.failed.authentication.delay.ms"), 10, 64); err != nil {
		return nil, fmt.Errorf("listener %s: connection.failed.authentication.delay.ms: %w", listener, err)
	}
	maxReceive, err := strconv.ParseInt(value("sasl.server.max.receive.size"), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("listener %s: sasl.server.max.receive.size: %w", listener, err)
	}
	sc.MaxReceiveBytes = int32(maxReceive)
	if slices.Contains(mechanisms, security.MechanismPlain) {
		if protocol == "SASL_PLAINTEXT" && value("samsa.sasl.plain.allow.plaintext") != "true" {
			return nil, fmt.Errorf("listener %s: SASL PLAIN on a SASL_PLAINTEXT listener sends passwords unencrypted; use SASL_SSL, or set samsa.sasl.plain.allow.plaintext=true", listener)
		}
		if jaas := value("plain.sasl.jaas.config"); jaas != "" {
			module, err := security.ParseJAAS(jaas)
			if err != nil {
				return nil, fmt.Errorf("listener %s: plain.sasl.jaas.config: %w", listener, err)
			}
			sc.PlainUsers = module.PlainUsers()
		}
	}
	if slices.Contains(mechanisms, security.MechanismOAuthBearer) {
		if sc.OAuth, err = oauthValidator(listener, value); err != nil {
			return nil, err
		}
	}
	return security.NewSASLAuthenticator(sc)
}

// oauthValidator builds the OAUTHBEARER validator of a listener: JWKS
// validation when sasl.oauthbearer.jwks.endpoint.url is set, else Kafka's
// unsecured validator with the options of the listener's
// oauthbearer.sasl.jaas.config.
func oauthValidator(listener string, value func(string) string) (security.TokenValidator, error) {
	if url := value("sasl.oauthbearer.jwks.endpoint.url"); url != "" {
		jwks := security.JWKSConfig{
			URL:              url,
			ExpectedAudience: splitList(value("sasl.oauthbearer.expected.audience")),
			ExpectedIssuer:   value("sasl.oauthbearer.expected.issuer"),
			SubjectClaimName: value("sasl.oauthbearer.sub.claim.name"),
			ScopeClaimName:   value("sasl.oauthbearer.scope.claim.name"),
		}
		var err error
		if jwks.RefreshMs, err = strconv.ParseInt(value("sasl.oauthbearer.jwks.endpoint.refresh.ms"), 10, 64); err != nil {
			return nil, fmt.Errorf("listener %s: sasl.oauthbearer.jwks.endpoint.refresh.ms: %w", listener, err)
		}
		if jwks.ClockSkewSeconds, err = strconv.ParseInt(value("sasl.oauthbearer.clock.skew.seconds"), 10, 64); err != nil {
			return nil, fmt.Errorf("listener %s: sasl.oauthbearer.clock.skew.seconds: %w", listener, err)
		}
		validator, err := security.NewJWKSValidator(jwks)
		if err != nil {
			return nil, fmt.Errorf("listener %s: %w", listener, err)
		}
		return validator, nil
	}
	options := map[string]string{}
	if jaas := value("oauthbearer.sasl.jaas.config"); jaas != "" {
		module, err := security.ParseJAAS(jaas)
		if err != nil {
			return nil, fmt.Errorf("listener %s: oauthbearer.sasl.jaas.config: %w", listener, err)
		}
		options = module.Options
	}
	return security.NewUnsecuredValidator(options)
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
