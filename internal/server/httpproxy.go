package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-streaming/samsa/internal/httpproxy"
	"github.com/samsa-streaming/samsa/internal/httpserve"
	"github.com/samsa-streaming/samsa/internal/security"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// httpProxyService is the REST proxy and its HTTP listeners.
type httpProxyService struct {
	proxy  *httpproxy.Proxy
	server *httpserve.Server
}

// loopbackAddr is addr with an unspecified IP replaced by 127.0.0.1, so
// this node's own clients can dial it.
func loopbackAddr(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return addr.String()
}

// startHTTPProxy serves the REST proxy when http.proxy.listeners is set.
// Without SASL every request runs as User:ANONYMOUS over the first client
// listener; with SASL each request's basic credentials are checked like
// the registry's and the proxy's Kafka clients log in with them on a
// SASL_PLAINTEXT (else SASL_SSL) listener, so the broker's ACLs apply to
// that principal.
func (n *Node) startHTTPProxy(logger *slog.Logger) error {
	raw, _ := n.cfg.Get("http.proxy.listeners")
	listeners, err := httpserve.ParseListeners(raw)
	if err != nil {
		return fmt.Errorf("http.proxy.listeners: %w", err)
	}
	if len(listeners) == 0 || !n.cfg.IsBroker() || len(n.network.Addrs()) == 0 {
		return nil
	}
	registryURL, _ := n.cfg.Get("http.proxy.schema.registry.url")
	if registryURL == "" && len(n.RegistryAddrs()) > 0 {
		registryListeners, _ := n.cfg.Get("schema.registry.listeners")
		parsed, _ := httpserve.ParseListeners(registryListeners)
		registryURL = parsed[0].Scheme + "://" + loopbackAddr(n.RegistryAddrs()[0])
	}
	var registryTLS *tls.Config
	if strings.HasPrefix(registryURL, "https://") {
		if registryTLS, err = httpClientTLS(n.cfg); err != nil {
			return fmt.Errorf("http.proxy.schema.registry.url: %w", err)
		}
	}
	serverTLS, err := httpServerTLS(n.cfg, "http.proxy.listeners", listeners, logger)
	if err != nil {
		return err
	}
	authenticator, err := registryAuthenticator(n.cfg, n.controller.Image)
	if err != nil {
		return err
	}
	config := httpproxy.Config{
		SeedBrokers:               []string{loopbackAddr(n.network.Addrs()[0])},
		RegistryURL:               registryURL,
		RegistryTLS:               registryTLS,
		ConsumerInstanceTimeoutMs: registryInt(n.cfg.Get("http.proxy.consumer.instance.timeout.ms")),
		ConsumerRequestTimeoutMs:  registryInt(n.cfg.Get("http.proxy.consumer.request.timeout.ms")),
		ConsumerRequestMaxBytes:   registryInt(n.cfg.Get("http.proxy.consumer.request.max.bytes")),
		MaxConsumerInstances:      int(registryInt(n.cfg.Get("http.proxy.consumer.max.instances"))),
		MaxSessions:               int(registryInt(n.cfg.Get("http.proxy.max.sessions"))),
		Logger:                    logger,
	}
	if authenticator != nil {
		config.Identify = n.proxyIdentity
	}
	proxy, err := httpproxy.New(config)
	if err != nil {
		return err
	}
	server, err := httpserve.Serve(httpserve.Config{
		Name:             "REST proxy",
		Listeners:        listeners,
		MaxBodyBytes:     registryInt(n.cfg.Get("http.proxy.max.request.bytes")),
		Authenticator:    authenticator,
		ErrorContentType: "application/json",
		TLS:              serverTLS,
		Logger:           logger,
	}, proxy.Handler())
	if err != nil {
		proxy.Close()
		return fmt.Errorf("http.proxy.listeners %s: %w", raw, err)
	}
	n.httpProxy = &httpProxyService{proxy: proxy, server: server}
	for _, a := range server.Addrs() {
		logger.Info("REST proxy listening", "address", a.String())
	}
	return nil
}

// proxyIdentity is the identity of a request the authenticator accepted:
// SCRAM users log in with the strongest SCRAM mechanism they have a
// credential for, JAAS users with PLAIN.
func (n *Node) proxyIdentity(r *http.Request) (httpproxy.Identity, error) {
	user, password, ok := r.BasicAuth()
	if !ok {
		return httpproxy.Identity{}, errBasicAuthMissing
	}
	image := n.controller.Image()
	mechanism := security.MechanismPlain
	if _, ok := image.ScramCredential(user, int8(kadm.ScramSha512)); ok {
		mechanism = security.MechanismScramSHA512
	} else if _, ok := image.ScramCredential(user, int8(kadm.ScramSha256)); ok {
		mechanism = security.MechanismScramSHA256
	}
	seed, tlsOpts, err := n.saslListenerFor(mechanism)
	if err != nil {
		// A configuration problem, not the caller's: say so in the log.
		n.logger.Warn("the REST proxy cannot log in for a request", "user", user, "mechanism", mechanism, "err", err)
		return httpproxy.Identity{}, err
	}
	var login kgo.Opt
	switch mechanism {
	case security.MechanismScramSHA512:
		login = kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism())
	case security.MechanismScramSHA256:
		login = kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha256Mechanism())
	default:
		login = kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism())
	}
	// The key tells credentials apart without holding the password.
	digest := sha256.Sum256([]byte(mechanism + "\x00" + user + "\x00" + password))
	return httpproxy.Identity{
		Key:          "User:" + user + "/" + hex.EncodeToString(digest[:]),
		Principal:    "User:" + user,
		KafkaOpts:    append([]kgo.Opt{kgo.SeedBrokers(seed), login}, tlsOpts...),
		RegistryOpts: []sr.ClientOpt{sr.BasicAuth(user, password)},
	}, nil
}

// saslListenerFor is the address of a client listener offering
// mechanism, SASL_PLAINTEXT first (the node's loopback needs no TLS), else
// SASL_SSL with the TLS options to reach it (the listener's ssl.*
// truststore).
func (n *Node) saslListenerFor(mechanism string) (string, []kgo.Opt, error) {
	addrs := n.network.Addrs()
	for _, wanted := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		for i, listener := range n.clientListeners {
			if i >= len(addrs) || n.cfg.ListenerSecurityProtocolMap[listener.Name] != wanted {
				continue
			}
			enabled, _ := n.cfg.ListenerValue(listener.Name, "sasl.enabled.mechanisms")
			if !slices.Contains(splitList(enabled), mechanism) {
				continue
			}
			if wanted == "SASL_PLAINTEXT" {
				return loopbackAddr(addrs[i]), nil, nil
			}
			settings, err := listenerTLSSettings(n.cfg, listener.Name)
			if err != nil {
				return "", nil, err
			}
			tlsConfig, err := security.ClientConfig(vfs.Default, settings, "")
			if err != nil {
				return "", nil, err
			}
			return loopbackAddr(addrs[i]), []kgo.Opt{kgo.DialTLSConfig(tlsConfig)}, nil
		}
	}
	return "", nil, errors.New("no SASL_PLAINTEXT or SASL_SSL client listener offers " + mechanism + " for the REST proxy's clients")
}

// stopHTTPProxy stops the proxy's listeners, then closes its consumer
// instances (leaving their groups) and clients.
func (n *Node) stopHTTPProxy(ctx context.Context) {
	if n.httpProxy == nil {
		return
	}
	if err := n.httpProxy.server.Shutdown(ctx); err != nil {
		n.logger.Warn("REST proxy shutdown", "err", err)
	}
	n.httpProxy.proxy.Close()
	n.httpProxy = nil
}

// HTTPProxyAddrs are the bound REST proxy addresses, or nil.
func (n *Node) HTTPProxyAddrs() []net.Addr {
	if n.httpProxy == nil {
		return nil
	}
	return n.httpProxy.server.Addrs()
}
