package security

// OAUTHBEARER (RFC 7628) as Kafka does it (KIP-255). The client's one
// message is
//
//	gs2-header 0x01 "auth=Bearer " token 0x01 *(key "=" value 0x01) 0x01
//
// where gs2-header is "n," [ "a=" authzid ] ",". The token is validated by
// the listener's TokenValidator; its expiry bounds the session's lifetime
// (KIP-368). A rejected token fails the exchange with
// SASL_AUTHENTICATION_FAILED.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// maxOAuthExtensions bounds the key=value extensions of one message.
const maxOAuthExtensions = 64

// TokenValidator validates OAUTHBEARER tokens.
type TokenValidator interface {
	// Validate returns the token's principal name (without "User:") and
	// its expiry.
	Validate(token string, now time.Time) (principal string, expiresAt time.Time, err error)
}

// OAuthClientFirst is a parsed OAUTHBEARER client message.
type OAuthClientFirst struct {
	AuthorizationID string
	Token           string
	Extensions      map[string]string
}

var errOAuthMalformed = fmt.Errorf("%w: Invalid OAUTHBEARER client first message", ErrAuthenticationFailed)

// ParseOAuthClientFirst parses the client's message.
func ParseOAuthClientFirst(message []byte) (OAuthClientFirst, error) {
	var out OAuthClientFirst
	header, rest, ok := bytes.Cut(message, []byte{1})
	if !ok || !bytes.HasSuffix(rest, []byte{1, 1}) {
		return out, errOAuthMalformed
	}
	gs2 := strings.Split(string(header), ",")
	if len(gs2) != 3 || gs2[0] != "n" && gs2[0] != "y" || gs2[2] != "" {
		return out, errOAuthMalformed
	}
	if gs2[1] != "" {
		authzid, ok := strings.CutPrefix(gs2[1], "a=")
		if !ok {
			return out, errOAuthMalformed
		}
		out.AuthorizationID = authzid
	}
	pairs := bytes.Split(rest[:len(rest)-2], []byte{1})
	if len(pairs) > maxOAuthExtensions+1 {
		return out, errOAuthMalformed
	}
	for _, pair := range pairs {
		key, value, ok := strings.Cut(string(pair), "=")
		if !ok || key == "" {
			return out, errOAuthMalformed
		}
		if key == "auth" {
			token, ok := strings.CutPrefix(value, "Bearer ")
			if !ok || token == "" || out.Token != "" {
				return out, errOAuthMalformed
			}
			out.Token = strings.TrimSpace(token)
			continue
		}
		if out.Extensions == nil {
			out.Extensions = make(map[string]string)
		}
		out.Extensions[key] = value
	}
	if out.Token == "" {
		return out, errOAuthMalformed
	}
	return out, nil
}

type oauthExchange struct {
	validator TokenValidator
	now       func() time.Time
	// step is 0 before the client's message, 1 after a rejected token
	// (awaiting the client's %x01), 2 done.
	step int
	// rejection is why the token was refused, for the log.
	rejection string
}

// oauthErrorStatus is the server's error challenge of RFC 7628 section
// 3.2.2, as Kafka sends it for a token it refuses.
const oauthErrorStatus = `{"status":"invalid_token"}`

func (e *oauthExchange) next(token []byte) ([]byte, *outcome, error) {
	switch e.step {
	case 0:
		e.step = 1
		first, err := ParseOAuthClientFirst(token)
		if err != nil {
			e.step = 2
			return nil, nil, err
		}
		principal, expiresAt, err := e.validator.Validate(first.Token, e.now())
		if err == nil && first.AuthorizationID != "" && first.AuthorizationID != principal {
			err = fmt.Errorf("authorization id %q differs from the token's principal", first.AuthorizationID)
		}
		if err != nil {
			// The client answers the error challenge with %x01, and
			// only then does the authentication fail, as in Kafka.
			e.rejection = err.Error()
			return []byte(oauthErrorStatus), nil, nil
		}
		e.step = 2
		return []byte{}, &outcome{principal: "User:" + principal, expiresAt: expiresAt}, nil
	case 1:
		e.step = 2
		return nil, nil, &AuthenticationFailure{Message: oauthErrorStatus, Reason: "invalid OAUTHBEARER token: " + e.rejection}
	}
	return nil, nil, fmt.Errorf("%w: OAUTHBEARER exchange already complete", ErrIllegalSASLState)
}

// AuthenticationFailure is a failed authentication whose message for the
// client differs from the reason worth logging.
type AuthenticationFailure struct {
	// Message is what the client is told.
	Message string
	// Reason is why, for the broker's log; it holds no secret.
	Reason string
}

func (f *AuthenticationFailure) Error() string {
	return ErrAuthenticationFailed.Error() + ": " + f.Message
}

// Unwrap makes the failure an ErrAuthenticationFailed.
func (f *AuthenticationFailure) Unwrap() error { return ErrAuthenticationFailed }

// UnsecuredValidator accepts the unsecured JWS tokens of KIP-255 (header
// "alg":"none", no signature), for development only, with the options of
// Kafka's OAuthBearerUnsecuredValidatorCallbackHandler.
type UnsecuredValidator struct {
	// PrincipalClaim is unsecuredValidatorPrincipalClaimName ("sub").
	PrincipalClaim string
	// ScopeClaim is unsecuredValidatorScopeClaimName ("scope").
	ScopeClaim string
	// RequiredScope is unsecuredValidatorRequiredScope: scopes the token
	// must have.
	RequiredScope []string
	// AllowableClockSkewMs is unsecuredValidatorAllowableClockSkewMs (0).
	AllowableClockSkewMs int64
}

// maxTokenBytes bounds a token (Kafka's sasl.server.max.receive.size
// bounds the whole message already; this keeps the JSON decoding small).
const maxTokenBytes = 64 << 10

// NewUnsecuredValidator reads the validator options of an
// OAuthBearerLoginModule JAAS entry.
func NewUnsecuredValidator(options map[string]string) (*UnsecuredValidator, error) {
	v := &UnsecuredValidator{PrincipalClaim: "sub", ScopeClaim: "scope"}
	if s := options["unsecuredValidatorPrincipalClaimName"]; s != "" {
		v.PrincipalClaim = s
	}
	if s := options["unsecuredValidatorScopeClaimName"]; s != "" {
		v.ScopeClaim = s
	}
	if s := options["unsecuredValidatorRequiredScope"]; s != "" {
		v.RequiredScope = strings.Fields(strings.ReplaceAll(s, ",", " "))
	}
	if s := options["unsecuredValidatorAllowableClockSkewMs"]; s != "" {
		var skew int64
		if _, err := fmt.Sscan(s, &skew); err != nil || skew < 0 {
			return nil, fmt.Errorf("%w: unsecuredValidatorAllowableClockSkewMs %q", ErrJAAS, s)
		}
		v.AllowableClockSkewMs = skew
	}
	return v, nil
}

// Validate implements TokenValidator.
func (v *UnsecuredValidator) Validate(token string, now time.Time) (string, time.Time, error) {
	if len(token) > maxTokenBytes {
		return "", time.Time{}, errors.New("token too large")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] != "" {
		return "", time.Time{}, errors.New("not an unsecured JWS (header.payload.)")
	}
	var header map[string]any
	if err := decodeJWTPart(parts[0], &header); err != nil {
		return "", time.Time{}, fmt.Errorf("header: %w", err)
	}
	if alg, _ := header["alg"].(string); alg != "none" {
		return "", time.Time{}, errors.New(`unsecured token must have "alg":"none"`)
	}
	var claims map[string]any
	if err := decodeJWTPart(parts[1], &claims); err != nil {
		return "", time.Time{}, fmt.Errorf("claims: %w", err)
	}
	return checkClaims(claims, v.PrincipalClaim, v.ScopeClaim, v.RequiredScope, time.Duration(v.AllowableClockSkewMs)*time.Millisecond, now)
}

func decodeJWTPart(part string, into any) error {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(part, "="))
	if err != nil {
		return err
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	return decoder.Decode(into)
}

// checkClaims applies the time, principal and scope rules Kafka applies to
// every token: exp is required and in the future, iat and nbf (when
// present) not in the future, each within skew.
func checkClaims(claims map[string]any, principalClaim, scopeClaim string, requiredScope []string, skew time.Duration, now time.Time) (string, time.Time, error) {
	numeric := func(name string) (time.Time, bool, error) {
		value, present := claims[name]
		if !present {
			return time.Time{}, false, nil
		}
		number, ok := value.(json.Number)
		if !ok {
			return time.Time{}, true, fmt.Errorf("claim %s is not a number", name)
		}
		seconds, err := number.Float64()
		if err != nil || math.IsNaN(seconds) || seconds < 0 || seconds > 1e11 {
			return time.Time{}, true, fmt.Errorf("claim %s out of range", name)
		}
		return time.UnixMilli(int64(seconds * 1000)), true, nil
	}
	expiresAt, present, err := numeric("exp")
	if err != nil {
		return "", time.Time{}, err
	}
	if !present {
		return "", time.Time{}, errors.New("required claim exp missing")
	}
	if !now.Before(expiresAt.Add(skew)) {
		return "", time.Time{}, errors.New("token expired")
	}
	for _, name := range []string{"iat", "nbf"} {
		at, present, err := numeric(name)
		if err != nil {
			return "", time.Time{}, err
		}
		if present && at.After(now.Add(skew)) {
			return "", time.Time{}, fmt.Errorf("claim %s is in the future", name)
		}
	}
	principal, _ := claims[principalClaim].(string)
	if strings.TrimSpace(principal) == "" {
		return "", time.Time{}, fmt.Errorf("required claim %s missing or empty", principalClaim)
	}
	if len(requiredScope) > 0 {
		var scopes []string
		switch s := claims[scopeClaim].(type) {
		case string:
			scopes = strings.Fields(s)
		case []any:
			for _, item := range s {
				if str, ok := item.(string); ok {
					scopes = append(scopes, str)
				}
			}
		}
		for _, required := range requiredScope {
			if !slices.Contains(scopes, required) {
				return "", time.Time{}, fmt.Errorf("token lacks the required scope %s", required)
			}
		}
	}
	return principal, expiresAt, nil
}
