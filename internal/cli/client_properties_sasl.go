package cli

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/security"
)

// saslProperties are the SASL client properties of a --command-config
// file, as Kafka's tools read them: security.protocol SASL_PLAINTEXT (or
// SASL_SSL with the TLS properties), sasl.mechanism, and sasl.jaas.config
// with the login module of the mechanism:
//
//	PLAIN        org.apache.kafka.common.security.plain.PlainLoginModule required username="..." password="...";
//	SCRAM-SHA-*  org.apache.kafka.common.security.scram.ScramLoginModule required username="..." password="...";
//	OAUTHBEARER  org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required
//	             unsecuredLoginStringClaim_sub="..." (an unsecured token, for development);
type saslProperties struct {
	protocol  string
	mechanism string
	jaas      string
}

// set takes a SASL property; false if key is not one.
func (p *saslProperties) set(key, value string) bool {
	switch key {
	case "sasl.mechanism":
		p.mechanism = value
	case "sasl.jaas.config":
		p.jaas = value
	default:
		return false
	}
	return true
}

// isSASLClientProtocol reports whether security.protocol asks for SASL.
func isSASLClientProtocol(protocol string) bool {
	return strings.EqualFold(protocol, "SASL_PLAINTEXT") || strings.EqualFold(protocol, "SASL_SSL")
}

// options are the franz-go options the properties ask for; none when
// security.protocol is not SASL.
func (p *saslProperties) options() ([]kgo.Opt, error) {
	if !isSASLClientProtocol(p.protocol) {
		return nil, nil
	}
	mechanism := p.mechanism
	if mechanism == "" {
		mechanism = "GSSAPI" // Kafka's default
	}
	if p.jaas == "" {
		return nil, fmt.Errorf("--command-config: security.protocol=%s needs sasl.jaas.config", p.protocol)
	}
	module, err := security.ParseJAAS(p.jaas)
	if err != nil {
		return nil, fmt.Errorf("--command-config: sasl.jaas.config: %w", err)
	}
	user, password := module.Options["username"], module.Options["password"]
	needPassword := func() error {
		if user == "" || password == "" {
			return fmt.Errorf("--command-config: sasl.jaas.config for %s needs username and password", mechanism)
		}
		return nil
	}
	switch strings.ToUpper(mechanism) {
	case security.MechanismPlain:
		if err := needPassword(); err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism())}, nil
	case security.MechanismScramSHA256, security.MechanismScramSHA512:
		if err := needPassword(); err != nil {
			return nil, err
		}
		auth := scram.Auth{User: user, Pass: password, IsToken: module.Options["tokenauth"] == "true"}
		if strings.EqualFold(mechanism, security.MechanismScramSHA256) {
			return []kgo.Opt{kgo.SASL(auth.AsSha256Mechanism())}, nil
		}
		return []kgo.Opt{kgo.SASL(auth.AsSha512Mechanism())}, nil
	case security.MechanismOAuthBearer:
		token, err := unsecuredLoginToken(module.Options)
		if err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.SASL(oauth.Auth{Token: token}.AsMechanism())}, nil
	}
	return nil, fmt.Errorf("--command-config: sasl.mechanism=%s is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", mechanism)
}

// unsecuredLoginToken builds the unsecured JWS Kafka's
// OAuthBearerUnsecuredLoginCallbackHandler makes from
// unsecuredLoginStringClaim_sub and unsecuredLoginLifetimeSeconds (3600).
func unsecuredLoginToken(options map[string]string) (string, error) {
	subject := options["unsecuredLoginStringClaim_sub"]
	if subject == "" {
		return "", fmt.Errorf("--command-config: OAUTHBEARER needs unsecuredLoginStringClaim_sub in sasl.jaas.config (only unsecured tokens are built here)")
	}
	lifetime := int64(3600)
	if s := options["unsecuredLoginLifetimeSeconds"]; s != "" {
		var err error
		if lifetime, err = strconv.ParseInt(s, 10, 64); err != nil || lifetime <= 0 {
			return "", fmt.Errorf("--command-config: unsecuredLoginLifetimeSeconds %q", s)
		}
	}
	now := time.Now().Unix()
	claims := fmt.Sprintf(`{"sub":%s,"iat":%d,"exp":%d`, strconv.Quote(subject), now, now+lifetime)
	if scope := options["unsecuredLoginListClaim_scope"]; scope != "" {
		claims += `,"scope":` + strconv.Quote(scope)
	}
	claims += "}"
	encode := base64.RawURLEncoding.EncodeToString
	return encode([]byte(`{"alg":"none"}`)) + "." + encode([]byte(claims)) + ".", nil
}
