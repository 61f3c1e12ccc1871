package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/netport"
)

// The security scenarios: each produces and consumes over one secured
// listener of the node the suite starts (compat/README.md, "Security").
var securityScenarios = map[string]bool{"scram-ssl": true, "plain-ssl": true, "mtls": true, "oauth": true}

// secureListeners are the node's listeners besides PLAINTEXT, each with the
// environment variable that hands its address to the drivers.
var secureListeners = []struct{ name, env string }{
	{"SSL", "COMPAT_SSL_BOOTSTRAP"},
	{"SASL_SSL", "COMPAT_SASL_SSL_BOOTSTRAP"},
	{"SASL_PLAINTEXT", "COMPAT_SASL_PLAINTEXT_BOOTSTRAP"},
}

// securitySetup creates the suite's certificates with `samsa certs` (a CA,
// a node certificate for 127.0.0.1 and a client certificate CN=compat) and
// returns the node's overrides for the secured listeners and the drivers'
// environment: SCRAM-SHA-512 and PLAIN on SASL_SSL, required client
// certificates on SSL, unsecured OAUTHBEARER tokens on SASL_PLAINTEXT.
func securitySetup(tmp string) (overrides []string, env []string, err error) {
	certs := filepath.Join(tmp, "certs")
	storePassword, saslPassword := randomID()+randomID(), randomID()+randomID()
	out, err := exec.Command(filepath.Join(tmp, "samsa"), "certs", "--dir", certs,
		"--node", "node=localhost,127.0.0.1", "--client", "compat", "--password", storePassword).CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("samsa certs: %v: %s", err, oneLine(string(out), 300))
	}
	overrides = []string{
		"ssl.keystore.type=PKCS12",
		"ssl.keystore.location=" + filepath.Join(certs, "node.p12"),
		"ssl.keystore.password=" + storePassword,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + filepath.Join(certs, "ca.crt"),
		"listener.name.ssl.ssl.client.auth=required",
		"listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN",
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms=OAUTHBEARER",
		"inter.broker.listener.name=PLAINTEXT",
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=compat,password=" + saslPassword + "]",
	}
	env = []string{
		"COMPAT_SASL_USER=compat",
		"COMPAT_SASL_PASSWORD=" + saslPassword,
		"COMPAT_SSL_CA=" + filepath.Join(certs, "ca.crt"),
		"COMPAT_SSL_CERT=" + filepath.Join(certs, "compat.crt"),
		"COMPAT_SSL_KEY=" + filepath.Join(certs, "compat.key"),
		"COMPAT_SSL_TRUSTSTORE=" + filepath.Join(certs, "truststore.p12"),
		"COMPAT_SSL_KEYSTORE=" + filepath.Join(certs, "compat.p12"),
		"COMPAT_SSL_STORE_PASSWORD=" + storePassword,
	}
	return overrides, env, nil
}

// secureListenerSpecs allocates a loopback port for each secured listener
// and returns the listeners' specs and the drivers' address variables.
func secureListenerSpecs() (specs []string, env []string, err error) {
	for _, l := range secureListeners {
		port, err := netport.Free()
		if err != nil {
			return nil, nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		specs = append(specs, l.name+"://"+addr)
		env = append(env, l.env+"="+addr)
	}
	return specs, env, nil
}

// createSecureTopic creates the one-partition topic a security scenario
// uses, over the plaintext listener.
func createSecureTopic(ctx context.Context, bootstrap, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && err != kerr.TopicAlreadyExists {
		return fmt.Errorf("creating %s: %w", topic, err)
	}
	return nil
}
