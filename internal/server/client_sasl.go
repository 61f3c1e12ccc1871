package server

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/security"
)

// The SASL side of this node's own Kafka clients: replica fetchers and
// transaction peers use the inter-broker listener with
// sasl.mechanism.inter.broker.protocol; controller RPCs (registration,
// heartbeats, forwarded admin requests, the metadata follower) use the
// controller listener with sasl.mechanism.controller.protocol. The
// credentials are the username and password options of the listener's JAAS
// config for that mechanism
// (listener.name.<listener>.<mechanism>.sasl.jaas.config), as Kafka brokers
// read them.

// saslMechanismFor is the mechanism this node's clients use on listener:
// sasl.mechanism.controller.protocol on the controller listener,
// sasl.mechanism.inter.broker.protocol elsewhere.
func saslMechanismFor(cfg *config.Broker, listener string) string {
	key := "sasl.mechanism.inter.broker.protocol"
	if listener != "" && listener == controllerListenerName(cfg) {
		key = "sasl.mechanism.controller.protocol"
	}
	mechanism, _ := cfg.Get(key)
	return mechanism
}

func clientSASLOptions(cfg *config.Broker, listener, mechanism string) ([]kgo.Opt, error) {
	if !isSASLProtocol(cfg.ListenerSecurityProtocolMap[listener]) {
		return nil, nil
	}
	key := strings.ToLower(mechanism) + ".sasl.jaas.config"
	jaas, _ := cfg.ListenerValue(listener, key)
	if jaas == "" {
		return nil, fmt.Errorf("listener %s is %s: this node's own clients need listener.name.%s.%s with username and password", listener, cfg.ListenerSecurityProtocolMap[listener], strings.ToLower(listener), key)
	}
	module, err := security.ParseJAAS(jaas)
	if err != nil {
		return nil, fmt.Errorf("listener.name.%s.%s: %w", strings.ToLower(listener), key, err)
	}
	user, password := module.Options["username"], module.Options["password"]
	if user == "" || password == "" {
		return nil, fmt.Errorf("listener.name.%s.%s: username and password are needed for this node's own connections", strings.ToLower(listener), key)
	}
	switch mechanism {
	case security.MechanismPlain:
		return []kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism())}, nil
	case security.MechanismScramSHA256:
		return []kgo.Opt{kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha256Mechanism())}, nil
	case security.MechanismScramSHA512:
		return []kgo.Opt{kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism())}, nil
	}
	return nil, fmt.Errorf("listener %s: SASL mechanism %q is not supported for this node's own connections (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", listener, mechanism)
}
