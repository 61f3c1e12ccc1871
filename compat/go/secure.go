package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The security scenarios (compat/README.md, "Security"): each produces
// secureRecords records over one secured listener of the suite's node with
// that listener's credentials, reads them back from the start of the
// topic's one partition, and checks them in order; scram-ssl also checks
// that a wrong password is refused with an authentication error.
var securityScenarioNames = []string{"scram-ssl", "plain-ssl", "mtls", "oauth"}

const secureRecords = 200

// secureSettings is how one security scenario connects.
type secureSettings struct {
	scenario  string
	bootstrap string
	protocol  string // SSL, SASL_SSL or SASL_PLAINTEXT
	mechanism string // SCRAM-SHA-512, PLAIN, OAUTHBEARER; "" for SSL
	user      string
	password  string
	ca        string // PEM CA certificate
	cert, key string // PEM client certificate and key, for mTLS
}

func secureSettingsOf(scenario string) (secureSettings, error) {
	s := secureSettings{
		scenario: scenario,
		user:     os.Getenv("COMPAT_SASL_USER"),
		password: os.Getenv("COMPAT_SASL_PASSWORD"),
		ca:       os.Getenv("COMPAT_SSL_CA"),
		cert:     os.Getenv("COMPAT_SSL_CERT"),
		key:      os.Getenv("COMPAT_SSL_KEY"),
	}
	switch scenario {
	case "scram-ssl":
		s.protocol, s.mechanism, s.bootstrap = "SASL_SSL", "SCRAM-SHA-512", os.Getenv("COMPAT_SASL_SSL_BOOTSTRAP")
	case "plain-ssl":
		s.protocol, s.mechanism, s.bootstrap = "SASL_SSL", "PLAIN", os.Getenv("COMPAT_SASL_SSL_BOOTSTRAP")
	case "mtls":
		s.protocol, s.bootstrap = "SSL", os.Getenv("COMPAT_SSL_BOOTSTRAP")
	case "oauth":
		s.protocol, s.mechanism, s.bootstrap = "SASL_PLAINTEXT", "OAUTHBEARER", os.Getenv("COMPAT_SASL_PLAINTEXT_BOOTSTRAP")
	default:
		return s, fmt.Errorf("unknown security scenario %q", scenario)
	}
	if s.bootstrap == "" || s.user == "" || s.ca == "" {
		return s, errors.New("the security scenarios need the runner's COMPAT_SASL_*/COMPAT_SSL_* environment")
	}
	return s, nil
}

func (s secureSettings) tls() bool { return strings.HasSuffix(s.protocol, "SSL") }

// tlsConfig trusts the suite's CA and, for mTLS, presents the client
// certificate.
func (s secureSettings) tlsConfig() (*tls.Config, error) {
	if !s.tls() {
		return nil, nil
	}
	ca, err := os.ReadFile(s.ca)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no PEM certificate", s.ca)
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if s.protocol == "SSL" {
		pair, err := tls.LoadX509KeyPair(s.cert, s.key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// unsecuredToken is an unsecured JWS (KIP-255: header {"alg":"none"}, no
// signature) naming sub, valid for an hour: what a development OAUTHBEARER
// setup hands clients.
func unsecuredToken(sub string) string {
	enc := base64.RawURLEncoding
	now := time.Now().Unix()
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": now, "exp": now + 3600})
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(claims) + "."
}

func secureValue(scenario string, i int) string { return scenario + "-" + strconv.Itoa(i) }

// checkSecureValues checks that got is exactly the scenario's values in
// order.
func checkSecureValues(scenario string, got []string) error {
	if len(got) != secureRecords {
		return fmt.Errorf("read %d records back, want %d", len(got), secureRecords)
	}
	for i, v := range got {
		if v != secureValue(scenario, i) {
			return fmt.Errorf("record %d is %q, want %q", i, v, secureValue(scenario, i))
		}
	}
	return nil
}

// secureRun is one client's side of a security scenario.
type secureRun struct {
	// produce writes the scenario's values in order.
	produce func(ctx context.Context, s secureSettings, topic string, values []string) error
	// consume reads n values from the start of partition 0.
	consume func(ctx context.Context, s secureSettings, topic string, n int) ([]string, error)
	// refused connects with s (a wrong password) and returns the error the
	// client reported; nil means the client got through.
	refused func(ctx context.Context, s secureSettings, topic string) error
	// skip returns a reason when the client cannot run scenario.
	skip func(scenario string) string
}

// authErrorText matches how the clients word a refused authentication.
var authErrorText = regexp.MustCompile(`(?i)authenticat|SASL|credentials`)

func (r secureRun) scenario(name string) scenarioFunc {
	return func(ctx context.Context, e *env) error {
		if r.skip != nil {
			if reason := r.skip(name); reason != "" {
				return notApplicable("%s", reason)
			}
		}
		s, err := secureSettingsOf(name)
		if err != nil {
			return err
		}
		topic := e.topic(name)
		values := make([]string, secureRecords)
		for i := range values {
			values[i] = secureValue(name, i)
		}
		e.logf("%s: producing %d records over %s %s", name, secureRecords, s.protocol, s.mechanism)
		if err := r.produce(ctx, s, topic, values); err != nil {
			return fmt.Errorf("produce over %s %s: %w", s.protocol, s.mechanism, err)
		}
		got, err := r.consume(ctx, s, topic, secureRecords)
		if err != nil {
			return fmt.Errorf("consume over %s %s: %w", s.protocol, s.mechanism, err)
		}
		if err := checkSecureValues(name, got); err != nil {
			return err
		}
		if name != "scram-ssl" {
			return nil
		}
		wrong := s
		wrong.password = "not-" + s.password
		refuseCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		err = r.refused(refuseCtx, wrong, topic)
		switch {
		case err == nil:
			return errors.New("a wrong SCRAM password was accepted")
		case !authErrorText.MatchString(err.Error()):
			return fmt.Errorf("a wrong SCRAM password failed without an authentication error: %v", err)
		}
		return passWith("wrong password refused: %s", oneLine(err.Error(), 120))
	}
}

// withSecurity adds the security scenarios of run to d.
func withSecurity(d driver, run secureRun) driver {
	for _, name := range securityScenarioNames {
		d[name] = run.scenario(name)
	}
	return d
}

func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}
