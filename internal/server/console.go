package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/console"
	"github.com/samsa-streaming/samsa/internal/httpserve"
	"github.com/samsa-streaming/samsa/internal/security"
)

// consoleService is the web console and its HTTP listeners.
type consoleService struct {
	console *console.Console
	server  *httpserve.Server
}

// startConsole serves the web console when console.listener is set. Its
// clients reach the node through a plaintext client listener (PLAINTEXT or
// SASL_PLAINTEXT), so they pass the same limits and ACLs as any client; with
// SASL on, each console user logs in with HTTP basic credentials checked
// against the SASL users and the console acts as that principal.
func (n *Node) startConsole(logger *slog.Logger) error {
	raw, _ := n.cfg.Get("console.listener")
	listeners, err := httpserve.ParseListeners(raw)
	if err != nil {
		return fmt.Errorf("console.listener: %w", err)
	}
	if len(listeners) == 0 || !n.cfg.IsBroker() {
		return nil
	}
	authenticator, err := registryAuthenticator(n.cfg, n.controller.Image)
	if err != nil {
		return err
	}
	// With SASL on, console users log in on a SASL_PLAINTEXT listener as
	// themselves; a PLAINTEXT listener would let them act as ANONYMOUS.
	want := "PLAINTEXT"
	if authenticator != nil {
		want = "SASL_PLAINTEXT"
	}
	seed, listener := "", ""
	for i, l := range n.clientListeners {
		if n.cfg.ListenerSecurityProtocolMap[l.Name] != want || i >= len(n.network.Addrs()) {
			continue
		}
		seed, listener = n.network.Addrs()[i].String(), l.Name
		if tcp, ok := n.network.Addrs()[i].(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			seed = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
		}
		break
	}
	if seed == "" {
		return fmt.Errorf("console.listener: the console needs a %s client listener to reach the node", want)
	}
	intValue := func(key string) int64 { return registryInt(n.cfg.Get(key)) }
	readOnly, _ := n.cfg.Get("console.read.only")
	config := console.Config{
		SeedBrokers:       []string{seed},
		ReadOnly:          readOnly == "true",
		Gatherer:          n.metrics.Registry,
		RecordsMax:        int(intValue("console.records.max")),
		RecordsMaxBytes:   int(intValue("console.records.max.bytes")),
		RecordsTimeoutMs:  intValue("console.records.timeout.ms"),
		TailMaxMs:         intValue("console.tail.max.ms"),
		SessionsMax:       int(intValue("console.sessions.max")),
		MetricsIntervalMs: intValue("console.metrics.sample.interval.ms"),
		Logger:            logger,
	}
	if authenticator != nil {
		config.SASL = n.consoleMechanism(listener)
	}
	if addrs := n.RegistryAddrs(); len(addrs) > 0 {
		host := addrs[0].String()
		if tcp, ok := addrs[0].(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			host = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
		}
		config.RegistryURL = "http://" + host
	}
	c, err := console.New(config)
	if err != nil {
		return err
	}
	server, err := httpserve.Serve(httpserve.Config{
		Name:          "console",
		Listeners:     listeners,
		MaxBodyBytes:  1 << 20,
		Authenticator: authenticator,
		Realm:         "samsa console",
		Logger:        logger,
	}, c.Handler())
	if err != nil {
		c.Close()
		return fmt.Errorf("console.listener %s: %w", raw, err)
	}
	n.console = &consoleService{console: c, server: server}
	for _, a := range server.Addrs() {
		logger.Info("console listening", "address", "http://"+a.String())
	}
	return nil
}

// consoleMechanism picks how a console user logs in to listener: SCRAM with
// the strongest mechanism the listener enables and the user has a
// credential for, else PLAIN where the listener enables it.
func (n *Node) consoleMechanism(listener string) func(user, password string) (sasl.Mechanism, error) {
	enabled, _ := n.cfg.ListenerValue(listener, "sasl.enabled.mechanisms")
	mechanisms := splitList(enabled)
	return func(user, password string) (sasl.Mechanism, error) {
		credentials := imageCredentials{image: n.controller.Image}
		if slices.Contains(mechanisms, security.MechanismScramSHA512) {
			if _, ok := credentials.ScramCredential(user, security.ScramSHA512); ok {
				return scram.Auth{User: user, Pass: password}.AsSha512Mechanism(), nil
			}
		}
		if slices.Contains(mechanisms, security.MechanismScramSHA256) {
			if _, ok := credentials.ScramCredential(user, security.ScramSHA256); ok {
				return scram.Auth{User: user, Pass: password}.AsSha256Mechanism(), nil
			}
		}
		if slices.Contains(mechanisms, security.MechanismPlain) {
			return plain.Auth{User: user, Pass: password}.AsMechanism(), nil
		}
		return nil, fmt.Errorf("listener %s enables none of SCRAM-SHA-512, SCRAM-SHA-256, PLAIN for user %s", listener, user)
	}
}

// stopConsole stops the console's listeners, then its clients.
func (n *Node) stopConsole(ctx context.Context) {
	if n.console == nil {
		return
	}
	// Live tails never go idle; end them first so Shutdown need not wait.
	n.console.console.Drain()
	if err := n.console.server.Shutdown(ctx); err != nil {
		n.logger.Warn("console shutdown", "err", err)
	}
	n.console.console.Close()
	n.console = nil
}

// ConsoleAddrs are the bound console addresses, or nil.
func (n *Node) ConsoleAddrs() []net.Addr {
	if n.console == nil {
		return nil
	}
	return n.console.server.Addrs()
}
