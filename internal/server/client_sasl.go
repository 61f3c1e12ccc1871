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

// interBrokerClientOptions are the options every inter-broker client adds.
func interBrokerClientOptions(cfg *config.Broker) ([]kgo.Opt, error) {
	mechanism, _ := cfg.Get("sasl.mechanism.inter.broker.protocol")
	return clientSASLOptions(cfg, cfg.InterBrokerListenerName, mechanism)
}

// controllerClientOptions are the options every client of the controller
// listener adds.
func controllerClientOptions(cfg *config.Broker) ([]kgo.Opt, error) {
	if len(cfg.ControllerListenerNames) == 0 {
		return nil, nil
	}
	mechanism, _ := cfg.Get("sasl.mechanism.controller.protocol")
	return clientSASLOptions(cfg, cfg.ControllerListenerNames[0], mechanism)
}

// mustClientOptions is for clients built after Start has checked the
// options (checkClientSASL); an error cannot happen then.
func mustClientOptions(opts []kgo.Opt, _ error) []kgo.Opt { return opts }

// checkClientSASL fails Start when this node could not authenticate to its
// own inter-broker or controller listener.
func checkClientSASL(cfg *config.Broker) error {
	if _, err := interBrokerClientOptions(cfg); err != nil {
		return err
	}
	_, err := controllerClientOptions(cfg)
	return err
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
