package security

// Signed OAUTHBEARER tokens validated against the provider's JSON Web Key
// Set (KIP-768), with github.com/golang-jwt/jwt/v5 for the token and
// github.com/MicahParks/keyfunc/v3 for the key set. The set is loaded from
// sasl.oauthbearer.jwks.endpoint.url (https:// or file://) at start and
// reloaded in the background once sasl.oauthbearer.jwks.endpoint.refresh.ms
// has passed since the last load, or sooner (at most every
// jwksUnknownKeyRefreshMs) when a token names a key the set lacks. A token
// must be signed with an asymmetric algorithm ("none" and the HMAC ones are
// refused), carry exp, and match sasl.oauthbearer.expected.issuer and one of
// sasl.oauthbearer.expected.audience when those are set, each time check
// within sasl.oauthbearer.clock.skew.seconds.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// Bounds of loading a key set.
const (
	jwksFetchTimeoutMs      = 10000
	jwksMaxBytes            = 1 << 20
	jwksUnknownKeyRefreshMs = 10000
)

// jwksAlgorithms are the signature algorithms accepted.
var jwksAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWKSConfig configures a JWKSValidator with Kafka's sasl.oauthbearer.* keys.
type JWKSConfig struct {
	URL              string
	RefreshMs        int64
	ExpectedAudience []string
	ExpectedIssuer   string
	ClockSkewSeconds int64
	SubjectClaimName string
	ScopeClaimName   string
	// Client fetches https URLs; nil means a client with jwksFetchTimeoutMs.
	Client *http.Client
}

// JWKSValidator validates signed tokens against a key set.
type JWKSValidator struct {
	cfg  JWKSConfig
	keys atomic.Pointer[jwksSnapshot]
	// loading is held by the one background reload in progress.
	loading sync.Mutex
	// lastAttemptNanos is when the latest reload started (Unix nanoseconds).
	lastAttemptNanos atomic.Int64
}

type jwksSnapshot struct {
	keyfunc  keyfunc.Keyfunc
	loadedAt time.Time
}

// NewJWKSValidator loads the key set once and fails when it cannot.
func NewJWKSValidator(cfg JWKSConfig) (*JWKSValidator, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "https" && u.Scheme != "file" {
		return nil, fmt.Errorf("security: sasl.oauthbearer.jwks.endpoint.url %q must be an https:// or file:// URL", cfg.URL)
	}
	if cfg.RefreshMs <= 0 {
		cfg.RefreshMs = 3600000
	}
	if cfg.SubjectClaimName == "" {
		cfg.SubjectClaimName = "sub"
	}
	if cfg.ScopeClaimName == "" {
		cfg.ScopeClaimName = "scope"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: jwksFetchTimeoutMs * time.Millisecond}
	}
	v := &JWKSValidator{cfg: cfg}
	if err := v.reload(time.Now()); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *JWKSValidator) fetch() ([]byte, error) {
	u, _ := url.Parse(v.cfg.URL)
	var body io.Reader
	if u.Scheme == "file" {
		file, err := os.Open(u.Path)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		body = file
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeoutMs*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := v.cfg.Client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", v.cfg.URL, resp.Status)
		}
		body = resp.Body
	}
	raw, err := io.ReadAll(io.LimitReader(body, jwksMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > jwksMaxBytes {
		return nil, fmt.Errorf("key set larger than %d bytes", jwksMaxBytes)
	}
	return raw, nil
}

func (v *JWKSValidator) reload(now time.Time) error {
	v.lastAttemptNanos.Store(now.UnixNano())
	raw, err := v.fetch()
	if err != nil {
		return fmt.Errorf("security: loading the JWKS from %s: %w", v.cfg.URL, err)
	}
	kf, err := keyfunc.NewJWKSetJSON(json.RawMessage(raw))
	if err != nil {
		return fmt.Errorf("security: parsing the JWKS from %s: %w", v.cfg.URL, err)
	}
	v.keys.Store(&jwksSnapshot{keyfunc: kf, loadedAt: now})
	return nil
}

// refreshInBackground reloads the set unless a reload is running or one
// started less than minimum ago; a failed reload keeps the previous set.
func (v *JWKSValidator) refreshInBackground(now time.Time, minimum time.Duration) {
	if now.Sub(time.Unix(0, v.lastAttemptNanos.Load())) < minimum || !v.loading.TryLock() {
		return
	}
	go func() {
		defer v.loading.Unlock()
		v.reload(time.Now())
	}()
}

// Validate implements TokenValidator.
func (v *JWKSValidator) Validate(token string, now time.Time) (string, time.Time, error) {
	if len(token) > maxTokenBytes {
		return "", time.Time{}, errors.New("token too large")
	}
	snapshot := v.keys.Load()
	if now.Sub(snapshot.loadedAt) >= time.Duration(v.cfg.RefreshMs)*time.Millisecond {
		v.refreshInBackground(now, 0)
	}
	options := []jwt.ParserOption{
		jwt.WithValidMethods(jwksAlgorithms),
		jwt.WithLeeway(time.Duration(v.cfg.ClockSkewSeconds) * time.Second),
		jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if v.cfg.ExpectedIssuer != "" {
		options = append(options, jwt.WithIssuer(v.cfg.ExpectedIssuer))
	}
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(token, claims, snapshot.keyfunc.Keyfunc, options...)
	if err != nil {
		if errors.Is(err, keyfunc.ErrKeyfunc) || strings.Contains(err.Error(), "key not found") {
			v.refreshInBackground(now, jwksUnknownKeyRefreshMs*time.Millisecond)
		}
		return "", time.Time{}, err
	}
	if !parsed.Valid {
		return "", time.Time{}, errors.New("token is not valid")
	}
	if len(v.cfg.ExpectedAudience) > 0 {
		audience, _ := claims.GetAudience()
		if !slices.ContainsFunc(audience, func(a string) bool { return slices.Contains(v.cfg.ExpectedAudience, a) }) {
			return "", time.Time{}, fmt.Errorf("token audience %v names none of the expected %v", audience, v.cfg.ExpectedAudience)
		}
	}
	subject, _ := claims[v.cfg.SubjectClaimName].(string)
	if strings.TrimSpace(subject) == "" {
		return "", time.Time{}, fmt.Errorf("required claim %s missing or empty", v.cfg.SubjectClaimName)
	}
	expiresAt, err := claims.GetExpirationTime()
	if err != nil || expiresAt == nil {
		return "", time.Time{}, errors.New("required claim exp missing")
	}
	return subject, expiresAt.Time, nil
}
