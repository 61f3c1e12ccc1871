package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/httpserve"
	"github.com/samsa-streaming/samsa/internal/registry"
)

// registryService is the schema registry and its HTTP listeners.
type registryService struct {
	registry *registry.Registry
	server   *httpserve.Server
}

// startRegistry serves the schema registry when schema.registry.listeners
// is set. It reads and writes _schemas through the node's inter-broker
// listener, as this node's other clients of itself do (replica fetchers,
// transaction peers): with its TLS and the inter-broker SASL credentials.
func (n *Node) startRegistry(logger *slog.Logger) error {
	raw, _ := n.cfg.Get("schema.registry.listeners")
	listeners, err := httpserve.ParseListeners(raw)
	if err != nil {
		return fmt.Errorf("schema.registry.listeners: %w", err)
	}
	if len(listeners) == 0 || !n.cfg.IsBroker() || len(n.network.Addrs()) == 0 {
		return nil
	}
	seed, kafkaOpts, err := n.interBrokerClient()
	if err != nil {
		return fmt.Errorf("schema registry: %w", err)
	}
	timeoutMs := registryInt(n.cfg.Get("schema.registry.timeout.ms"))
	maxBodyBytes := registryInt(n.cfg.Get("schema.registry.max.request.bytes"))
	replicationFactor := registryInt(n.cfg.Get("schema.registry.topic.replication.factor"))
	serverTLS, err := httpServerTLS(n.cfg, "schema.registry.listeners", listeners, logger)
	if err != nil {
		return err
	}
	var forwardTLS *tls.Config
	if serverTLS != nil {
		if forwardTLS, err = httpClientTLS(n.cfg); err != nil {
			return fmt.Errorf("schema.registry.listeners https: %w", err)
		}
	}
	var authorizer registry.Authorizer
	if n.broker.Authorization != nil {
		authorizer = n.broker.Authorization.Authorizer
	}
	reg, err := registry.New(registry.Config{
		SeedBrokers:       []string{seed},
		KafkaOpts:         kafkaOpts,
		Authorizer:        authorizer,
		ReplicationFactor: int16(replicationFactor),
		TimeoutMs:         timeoutMs,
		ForwardTLS:        forwardTLS,
		Logger:            logger,
	})
	if err != nil {
		return err
	}
	authenticator, err := registryAuthenticator(n.cfg, n.controller.Image)
	if err != nil {
		reg.Close()
		return err
	}
	handler := &lateHandler{}
	server, err := httpserve.Serve(httpserve.Config{
		Name:             "schema registry",
		Listeners:        listeners,
		MaxBodyBytes:     maxBodyBytes,
		Authenticator:    authenticator,
		ErrorContentType: registry.ContentType,
		TLS:              serverTLS,
		Logger:           logger,
	}, handler)
	if err != nil {
		reg.Close()
		return fmt.Errorf("schema.registry.listeners %s: %w", raw, err)
	}
	// Every node is a candidate writer; the others forward their writes.
	bound := server.Addrs()[0].(*net.TCPAddr)
	host := bound.IP.String()
	if bound.IP.IsUnspecified() {
		host = "127.0.0.1"
		if len(n.cfg.AdvertisedListeners) > 0 && n.cfg.AdvertisedListeners[0].Host != "" {
			host = n.cfg.AdvertisedListeners[0].Host
		}
	}
	reg.JoinElection(listeners[0].Scheme, host, bound.Port, fmt.Sprintf("samsa-schema-registry-%d", n.cfg.NodeID))
	handler.set(reg.Handler())
	n.registry = &registryService{registry: reg, server: server}
	for _, a := range server.Addrs() {
		logger.Info("schema registry listening", "address", a.String())
	}
	return nil
}

// interBrokerClient is the address and client options with which this
// node reaches its own inter-broker listener: the endpoint it registers
// for that listener (the one its peers dial, so a certificate verified by
// host name matches) and the listener's TLS and inter-broker SASL.
func (n *Node) interBrokerClient() (string, []kgo.Opt, error) {
	listener := n.cfg.InterBrokerListenerName
	opts, err := n.clientOpts(listener)
	if err != nil {
		return "", nil, err
	}
	for _, endpoint := range n.registration().Endpoints {
		if endpoint.Name == listener {
			return net.JoinHostPort(endpoint.Host, strconv.Itoa(int(endpoint.Port))), opts, nil
		}
	}
	// No advertised endpoint of that name: the bound address, on loopback.
	for i, l := range n.clientListeners {
		if l.Name == listener && i < len(n.network.Addrs()) {
			return loopbackAddr(n.network.Addrs()[i]), opts, nil
		}
	}
	return "", nil, fmt.Errorf("inter-broker listener %s is not one of this node's client listeners", listener)
}

func registryInt(value string, _ bool) int64 {
	n, _ := strconv.ParseInt(value, 10, 64)
	return n
}

// stopRegistry stops the registry's listeners, then its client.
func (n *Node) stopRegistry(ctx context.Context) {
	if n.registry == nil {
		return
	}
	if err := n.registry.server.Shutdown(ctx); err != nil {
		n.logger.Warn("schema registry shutdown", "err", err)
	}
	n.registry.registry.Close()
	n.registry = nil
}

// RegistryAddrs are the bound schema registry addresses, or nil.
func (n *Node) RegistryAddrs() []net.Addr {
	if n.registry == nil {
		return nil
	}
	return n.registry.server.Addrs()
}

// lateHandler serves 503 until set: the listener is bound before the
// registry knows its own port, which it advertises in the election.
type lateHandler struct {
	handler atomic.Pointer[http.Handler]
}

func (h *lateHandler) set(handler http.Handler) { h.handler.Store(&handler) }

func (h *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if handler := h.handler.Load(); handler != nil {
		(*handler).ServeHTTP(w, r)
		return
	}
	httpserve.WriteError(w, http.StatusServiceUnavailable, registry.ContentType, 50002, "starting")
}
