package security

// SASL authentication on SASL_PLAINTEXT and SASL_SSL listeners.
//
// A SASLAuthenticator holds one listener's settings and hands every new
// connection a SASLSession (network.Session). The session is a small state
// machine the connection reader and the SaslHandshake (17) and
// SaslAuthenticate (36) handlers drive:
//
//	GateHandshake --SaslHandshake v1 (enabled mechanism)--> GateAuthenticate
//	GateHandshake --SaslHandshake v0 (enabled mechanism)--> GateRawToken
//	GateAuthenticate / GateRawToken --tokens--> ... --> GateOpen | GateFailed
//	GateOpen --SaslHandshake, same mechanism (KIP-368)--> GateAuthenticate
//
// Each mechanism is a serverExchange that consumes client tokens and
// returns server tokens until it succeeds with a principal, or fails. A
// failure's message never says whether the user exists; the handler sends
// it after connection.failed.authentication.delay.ms and closes.

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/network"
)

// SASL mechanism names.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// SupportedMechanisms are the mechanisms this build serves.
var SupportedMechanisms = []string{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer}

// ErrAuthenticationFailed is every failed authentication; its message is
// what the client is told, and never says whether the user exists.
var ErrAuthenticationFailed = errors.New("Authentication failed: Invalid username or password")

// ErrIllegalSASLState is a SASL request out of order.
var ErrIllegalSASLState = errors.New("security: illegal SASL state")

// ErrUnsupportedMechanism is a handshake naming a mechanism not enabled.
var ErrUnsupportedMechanism = errors.New("security: unsupported SASL mechanism")

// SASLConfig is one listener's SASL settings.
type SASLConfig struct {
	// Listener is the listener's name.
	Listener string
	// Mechanisms are the enabled mechanisms (sasl.enabled.mechanisms), in
	// the order the handshake lists them.
	Mechanisms []string
	// PlainUsers are the user_<name>="<password>" options of the
	// listener's PLAIN JAAS config. PLAIN also accepts SCRAM users
	// (Credentials), so passwords need not sit in config files.
	PlainUsers map[string]string
	// Credentials looks up SCRAM credentials and delegation tokens.
	Credentials CredentialStore
	// OAuth validates OAUTHBEARER tokens; nil when OAUTHBEARER is off.
	OAuth TokenValidator
	// MaxReauthMs is connections.max.reauth.ms (0: sessions do not expire).
	MaxReauthMs int64
	// FailureDelayMs is connection.failed.authentication.delay.ms (100).
	FailureDelayMs int64
	// MaxReceiveBytes is sasl.server.max.receive.size (524288).
	MaxReceiveBytes int32
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// SASLAuthenticator starts the SASL sessions of one listener.
type SASLAuthenticator struct {
	cfg SASLConfig
}

// NewSASLAuthenticator checks cfg and returns its authenticator.
func NewSASLAuthenticator(cfg SASLConfig) (*SASLAuthenticator, error) {
	if len(cfg.Mechanisms) == 0 {
		return nil, fmt.Errorf("security: listener %s: no SASL mechanism enabled", cfg.Listener)
	}
	for _, m := range cfg.Mechanisms {
		if !slices.Contains(SupportedMechanisms, m) {
			return nil, fmt.Errorf("security: listener %s: SASL mechanism %s is not supported (supported: %v)", cfg.Listener, m, SupportedMechanisms)
		}
	}
	if slices.Contains(cfg.Mechanisms, MechanismOAuthBearer) && cfg.OAuth == nil {
		return nil, fmt.Errorf("security: listener %s: OAUTHBEARER enabled without a token validator", cfg.Listener)
	}
	if cfg.MaxReceiveBytes <= 0 {
		cfg.MaxReceiveBytes = 524288
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &SASLAuthenticator{cfg: cfg}, nil
}

// NewSession implements network.Authenticator.
func (a *SASLAuthenticator) NewSession(info *network.ConnInfo) network.Session {
	s := &SASLSession{auth: a, info: info}
	s.gate.Store(int32(network.GateHandshake))
	return s
}

// Mechanisms are the enabled mechanisms.
func (a *SASLAuthenticator) Mechanisms() []string { return a.cfg.Mechanisms }

// SASLSession is one connection's SASL state (network.Session).
type SASLSession struct {
	auth *SASLAuthenticator
	info *network.ConnInfo
	// gate is a network.GateState; the reader loads it before every frame.
	gate atomic.Int32
	// expiresAtNanos is the session's end (Unix nanoseconds), 0 for never.
	expiresAtNanos atomic.Int64
	// tokenValid, when set, reports whether the delegation token that
	// authenticated the session still stands.
	tokenValid atomic.Pointer[func() bool]

	mu struct {
		sync.Mutex
		// mechanism is the one chosen by the latest handshake.
		mechanism string
		// exchange is the mechanism's exchange in progress, nil between
		// exchanges.
		exchange serverExchange
		// authenticatedMechanism and principal are set by the first
		// successful authentication; a re-authentication must repeat them.
		// Invariant: authenticatedMechanism == "" || gate was GateOpen once.
		authenticatedMechanism string
		principal              string
	}
}

// Gate implements network.Session.
func (s *SASLSession) Gate() network.GateState { return network.GateState(s.gate.Load()) }

// ExpiresAt implements network.Session. A session a delegation token
// opened ends as soon as the token is gone (expired early or removed).
func (s *SASLSession) ExpiresAt() time.Time {
	if valid := s.tokenValid.Load(); valid != nil && !(*valid)() {
		return time.Unix(0, 1)
	}
	n := s.expiresAtNanos.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// FailureDelay implements network.Session.
func (s *SASLSession) FailureDelay() time.Duration {
	return time.Duration(s.auth.cfg.FailureDelayMs) * time.Millisecond
}

// MaxReceiveBytes implements network.Session.
func (s *SASLSession) MaxReceiveBytes() int32 { return s.auth.cfg.MaxReceiveBytes }

// Mechanisms are the enabled mechanisms, for the handshake's answer.
func (s *SASLSession) Mechanisms() []string { return s.auth.cfg.Mechanisms }

// Handshake selects mechanism. rawTokens (SaslHandshake v0) makes the
// tokens that follow bare frames instead of SaslAuthenticate requests. On a
// session that is open it starts a re-authentication, which must use the
// mechanism of the first authentication. An error fails the session.
func (s *SASLSession) Handshake(mechanism string, rawTokens bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate := s.Gate()
	switch {
	case gate == network.GateOpen && rawTokens:
		s.failLocked()
		return fmt.Errorf("%w: re-authentication needs SaslHandshake v1", ErrIllegalSASLState)
	case gate == network.GateOpen && mechanism != s.mu.authenticatedMechanism:
		s.failLocked()
		return fmt.Errorf("%w: re-authentication must use the mechanism %s, not %s", ErrIllegalSASLState, s.mu.authenticatedMechanism, mechanism)
	case gate != network.GateOpen && gate != network.GateHandshake:
		s.failLocked()
		return fmt.Errorf("%w: SaslHandshake received twice", ErrIllegalSASLState)
	}
	if !slices.Contains(s.auth.cfg.Mechanisms, mechanism) {
		s.failLocked()
		return fmt.Errorf("%w: %s", ErrUnsupportedMechanism, mechanism)
	}
	exchange, err := s.auth.newExchange(mechanism)
	if err != nil {
		s.failLocked()
		return err
	}
	s.mu.mechanism, s.mu.exchange = mechanism, exchange
	if rawTokens {
		s.gate.Store(int32(network.GateRawToken))
	} else {
		s.gate.Store(int32(network.GateAuthenticate))
	}
	return nil
}

// Authenticate feeds one client token of a SaslAuthenticate request to the
// exchange and returns the server's token. When the exchange completes,
// the session opens, ConnInfo.Principal becomes the authenticated
// principal, and sessionLifetimeMs is the time until the session expires
// (0: never). An error fails the session; its message is for the client.
func (s *SASLSession) Authenticate(token []byte) (reply []byte, sessionLifetimeMs int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Gate() != network.GateAuthenticate && s.Gate() != network.GateRawToken || s.mu.exchange == nil {
		s.failLocked()
		return nil, 0, fmt.Errorf("%w: SaslAuthenticate before SaslHandshake", ErrIllegalSASLState)
	}
	reply, outcome, err := s.mu.exchange.next(token)
	if err != nil {
		s.failLocked()
		return nil, 0, err
	}
	if outcome == nil {
		return reply, 0, nil
	}
	s.mu.exchange = nil
	if s.mu.authenticatedMechanism != "" && outcome.principal != s.mu.principal {
		s.failLocked()
		return nil, 0, fmt.Errorf("%w: Cannot change principals during re-authentication from %s to %s", ErrAuthenticationFailed, s.mu.principal, outcome.principal)
	}
	now := s.auth.cfg.Now()
	var expiresAt time.Time
	if ms := s.auth.cfg.MaxReauthMs; ms > 0 {
		expiresAt = now.Add(time.Duration(ms) * time.Millisecond)
	}
	if !outcome.expiresAt.IsZero() && (expiresAt.IsZero() || outcome.expiresAt.Before(expiresAt)) {
		expiresAt = outcome.expiresAt
	}
	if !expiresAt.IsZero() {
		sessionLifetimeMs = max(expiresAt.Sub(now).Milliseconds(), 1)
		s.expiresAtNanos.Store(expiresAt.UnixNano())
	} else {
		s.expiresAtNanos.Store(0)
	}
	s.mu.authenticatedMechanism, s.mu.principal = s.mu.mechanism, outcome.principal
	s.info.Principal, s.info.TokenAuthenticated = outcome.principal, outcome.tokenAuthenticated
	if outcome.tokenValid != nil {
		s.tokenValid.Store(&outcome.tokenValid)
	} else {
		s.tokenValid.Store(nil)
	}
	s.gate.Store(int32(network.GateOpen))
	return reply, sessionLifetimeMs, nil
}

// RawToken implements network.Session: a token of SaslHandshake v0's raw
// mode, answered with the mechanism's reply (an empty frame when it has
// none, as Kafka sends).
func (s *SASLSession) RawToken(token []byte) ([]byte, error) {
	reply, _, err := s.Authenticate(token)
	if err != nil {
		return nil, err
	}
	if reply == nil {
		reply = []byte{}
	}
	return reply, nil
}

// Principal is the authenticated principal, "" before authentication.
func (s *SASLSession) Principal() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.principal
}

func (s *SASLSession) failLocked() {
	s.mu.exchange = nil
	s.gate.Store(int32(network.GateFailed))
}

// outcome is a completed authentication.
type outcome struct {
	// principal is "User:<name>".
	principal string
	// expiresAt is the credential's expiry (a JWT's exp, a delegation
	// token's expiry); zero for none.
	expiresAt time.Time
	// tokenAuthenticated is set when a delegation token authenticated the
	// principal.
	tokenAuthenticated bool
	// tokenValid reports whether that token still stands.
	tokenValid func() bool
}

// serverExchange is the server side of one mechanism's exchange.
type serverExchange interface {
	// next consumes a client token; it returns the token to send back and,
	// when the exchange has completed successfully, its outcome.
	next(token []byte) ([]byte, *outcome, error)
}

func (a *SASLAuthenticator) newExchange(mechanism string) (serverExchange, error) {
	switch mechanism {
	case MechanismPlain:
		return &plainExchange{users: a.cfg.PlainUsers, credentials: a.cfg.Credentials}, nil
	case MechanismScramSHA256:
		return newScramExchange(ScramSHA256, a.cfg.Credentials), nil
	case MechanismScramSHA512:
		return newScramExchange(ScramSHA512, a.cfg.Credentials), nil
	case MechanismOAuthBearer:
		return &oauthExchange{validator: a.cfg.OAuth, now: a.cfg.Now}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedMechanism, mechanism)
}
