package server

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/httpserve"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/security"
)

// basicAuthenticator checks HTTP basic credentials as SASL/PLAIN checks a
// PLAIN message: against the PLAIN JAAS users of the node's SASL client
// listeners, then against the SCRAM credentials in the metadata image.
// The password is never logged or kept.
type basicAuthenticator struct {
	// plainUsers holds one map per SASL listener with a PLAIN JAAS config;
	// a user name may sit on several listeners with different passwords,
	// and any of them is accepted, as a client could log in on any.
	plainUsers  []map[string]string
	credentials security.CredentialStore
}

// errBasicAuthMissing is a request without Basic credentials.
var errBasicAuthMissing = fmt.Errorf("%w: no basic credentials", security.ErrAuthenticationFailed)

// registryAuthenticator returns the HTTP authenticator of the node's HTTP
// services: nil (every request anonymous, as before) when no client
// listener uses SASL_PLAINTEXT or SASL_SSL, else basic auth against the
// node's SASL users.
func registryAuthenticator(cfg *config.Broker, image func() *metadata.Image) (httpserve.Authenticator, error) {
	authenticator := &basicAuthenticator{credentials: imageCredentials{image: image}}
	saslOn := false
	for _, listener := range cfg.Listeners {
		if slices.Contains(cfg.ControllerListenerNames, listener.Name) {
			continue
		}
		if !isSASLProtocol(cfg.ListenerSecurityProtocolMap[listener.Name]) {
			continue
		}
		saslOn = true
		jaas, _ := cfg.ListenerValue(listener.Name, "plain.sasl.jaas.config")
		if jaas == "" {
			continue
		}
		module, err := security.ParseJAAS(jaas)
		if err != nil {
			return nil, fmt.Errorf("listener %s: plain.sasl.jaas.config: %w", listener.Name, err)
		}
		if users := module.PlainUsers(); len(users) > 0 {
			authenticator.plainUsers = append(authenticator.plainUsers, users)
		}
	}
	if !saslOn {
		return nil, nil
	}
	return authenticator, nil
}

// Authenticate implements httpserve.Authenticator.
func (a *basicAuthenticator) Authenticate(r *http.Request) (httpserve.Principal, error) {
	user, password, ok := r.BasicAuth()
	if !ok {
		return "", errBasicAuthMissing
	}
	for _, users := range a.plainUsers {
		if security.CheckPlainPassword(users, nil, user, password) == nil {
			return httpserve.Principal("User:" + user), nil
		}
	}
	if err := security.CheckPlainPassword(nil, a.credentials, user, password); err != nil {
		return "", err
	}
	return httpserve.Principal("User:" + user), nil
}
