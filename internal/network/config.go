package network

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"
)

// ErrConfig marks an invalid Config.
var ErrConfig = errors.New("network: invalid config")

// Defaults, with Kafka's names and values.
const (
	DefaultNumNetworkThreads        = 3         // num.network.threads
	DefaultNumIOThreads             = 8         // num.io.threads
	DefaultQueuedMaxRequests        = 500       // queued.max.requests
	DefaultQueuedMaxRequestBytes    = -1        // queued.max.request.bytes: unbounded
	DefaultSocketRequestMaxBytes    = 104857600 // socket.request.max.bytes
	DefaultConnectionsMaxIdleMs     = 600000    // connections.max.idle.ms
	DefaultSocketSendBufferBytes    = 102400    // socket.send.buffer.bytes
	DefaultSocketReceiveBufferBytes = 102400    // socket.receive.buffer.bytes
	// DefaultMaxInFlightRequestsPerConnection is Kafka's behaviour: one request
	// per connection is read, handled and answered before the next is read.
	DefaultMaxInFlightRequestsPerConnection = 1
	// maxInFlightRequestsPerConnectionMax bounds the pipelining a caller may ask
	// for, so that one connection's memory stays within max × socket.request.max.bytes
	// of a sensible size.
	maxInFlightRequestsPerConnectionMax = 128
	// minFrameBytes is the smallest frame that can hold a request header v0
	// (api key, api version, correlation id).
	minFrameBytes = 8
)

// ListenerSpec is one listener: Kafka's listeners entry "NAME://host:port",
// already split by the config package. An empty host binds every interface;
// port 0 picks a free port (see Server.Addrs).
type ListenerSpec struct {
	Name    string
	Address string
	// Listener, when set, is already bound and is used instead of binding
	// Address; the Server closes it at Shutdown.
	Listener net.Listener
	// OpenAtStart accepts on this listener from Start on, also with
	// Config.AcceptAfterOpen (the controller listener, which peers need
	// before this node is ready for clients).
	OpenAtStart bool
	// SecurityProtocol is the listener's protocol from
	// listener.security.protocol.map, copied into ConnInfo.
	SecurityProtocol string
	// TLS, when set, makes this an SSL or SASL_SSL listener: every
	// connection starts with a TLS server handshake (see tls.go). nil means
	// plaintext.
	TLS *tls.Config
	// TLSPrincipal, when set, names the principal of a connection from its
	// handshake (the mTLS client certificate mapped by
	// ssl.principal.mapping.rules). An error closes the connection, as a
	// failed SSL authentication does in Kafka.
	TLSPrincipal func(tls.ConnectionState) (string, error)
	// OwnMemoryPool gives the listener's connections a queued.max.request.bytes
	// pool of their own, as Kafka's controller has a socket server and a
	// pool of its own: brokers' and voters' requests on the controller
	// listener then never wait for memory that clients' requests hold.
	// Stats report the shared pool.
	OwnMemoryPool bool
	// Authenticator, when set, makes this a SASL_PLAINTEXT or SASL_SSL
	// listener: connections must authenticate before they are served
	// (authenticate.go).
	Authenticator Authenticator
}

// Config configures a Server. The zero value of every field but Listeners
// means Kafka's default; -1 means "none" where the comment says so.
type Config struct {
	// Listeners to bind (listeners). At least one.
	Listeners []ListenerSpec

	// NumNetworkThreads is num.network.threads (3). Go's netpoller does the
	// work of Kafka's processor threads, so connections get a reader and a
	// writer goroutine each and nothing is bounded by this number; it is the
	// denominator of the network idle ratio (Stats.NetworkIdleRatioSince), so
	// that the ratio reads like Kafka's NetworkProcessorAvgIdlePercent.
	NumNetworkThreads int

	// NumIOThreads is num.io.threads (8): the handler pool's size.
	NumIOThreads int

	// QueuedMaxRequests is queued.max.requests (500): the capacity of the one
	// request queue shared by all connections. Readers block when it is full.
	QueuedMaxRequests int

	// QueuedMaxRequestBytes is queued.max.request.bytes (-1): the bytes of
	// requests read and not yet handled, past which readers stop reading
	// (memory_pool.go). Zero or negative leaves them unbounded, as Kafka's
	// -1 does. Kafka requires at least socket.request.max.bytes when set;
	// the config package checks that, and a smaller bound here still
	// admits a larger request when nothing else holds the pool.
	QueuedMaxRequestBytes int64

	// SocketRequestMaxBytes is socket.request.max.bytes (104857600). A frame
	// whose size prefix exceeds it closes the connection before anything is
	// allocated.
	SocketRequestMaxBytes int32

	// ConnectionsMaxIdleMs is connections.max.idle.ms (600000): a connection
	// that neither sends a byte nor accepts one for this long is closed.
	// -1 disables the idle timeout.
	ConnectionsMaxIdleMs int64

	// MaxConnections is max.connections (0 = unlimited): a broker-wide limit.
	// As in Kafka, at the limit the acceptors stop accepting until a
	// connection closes, so new clients wait in the kernel's accept backlog.
	MaxConnections int

	// MaxConnectionsPerIP is max.connections.per.ip (0 = unlimited). As in
	// Kafka, a connection over the limit is closed as soon as it is accepted.
	MaxConnectionsPerIP int
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides: a
	// limit per IP (or host name, matched against the IP's text) in place
	// of MaxConnectionsPerIP.
	MaxConnectionsPerIPOverrides map[string]int

	// ConnectionRates, when set, limits how fast connections are created
	// (KIP-612; see connection_rate.go).
	ConnectionRates ConnectionRates

	// SocketSendBufferBytes is socket.send.buffer.bytes (102400); -1 keeps the
	// OS default. Measured on Linux: below about 64 KiB, sendfile stalls on
	// delayed ACKs (about 40 ms per refill of the buffer; 4 MiB took 2 s at
	// 32 KiB against 10 ms at the default).
	SocketSendBufferBytes int
	// SocketReceiveBufferBytes is socket.receive.buffer.bytes (102400); -1
	// keeps the OS default. It is also set on the listening socket so that TCP
	// window scaling is negotiated for it.
	SocketReceiveBufferBytes int

	// MaxInFlightRequestsPerConnection (no Kafka key; Kafka is always 1) is how
	// many requests of one connection may be read and not yet answered. 1
	// keeps Kafka's ordering guarantee that a connection's requests are handled
	// one after another. Higher values read requests ahead; without
	// PipelinedAPIKeys they are handled concurrently (for callers whose
	// requests are independent), with PipelinedAPIKeys in Kafka's order (see
	// there). Responses are written in request order either way. At most 128.
	MaxInFlightRequestsPerConnection int

	// PipelinedAPIKeys, when not empty, keeps Kafka's per-connection order
	// while MaxInFlightRequestsPerConnection > 1 lets the reader read, frame
	// and parse requests ahead:
	//   - a request of one of these keys is handed to a handler once every
	//     earlier request of its connection of these keys has returned from
	//     Handle and been given its response (Respond called), and every
	//     earlier request of other keys has been answered (its response
	//     written), so their Handle calls run one at a time, in arrival
	//     order, and none starts while an earlier one waits to answer (a
	//     parked acks=-1 produce);
	//   - a request of any other key is handed on once every earlier request
	//     of its connection has been answered, as in Kafka.
	// For Produce this is what idempotent producers with up to five requests
	// in flight need: the batches are appended in the order they were sent,
	// one request's batches at a time, each once the previous request has
	// been answered, while the next request is read off the socket and its
	// predecessor's response is written. Handle of these keys must have
	// done, before it returns and answers, everything that later requests
	// must see.
	PipelinedAPIKeys []int16

	// ReuseBodyAPIKeys lists the API keys whose request frames are read into
	// pooled buffers that are reused once the request is finished (see
	// Request.Body for when, and for the rule the handlers of these APIs must
	// keep). Empty means every frame is a fresh allocation left to the
	// garbage collector.
	ReuseBodyAPIKeys []int16

	// IsFlexible reports whether a request version uses the flexible (v2)
	// request header and so a v1 response header. Nil means DefaultIsFlexible,
	// which asks kmsg.
	IsFlexible func(key, version int16) bool

	// AcceptAfterOpen binds the listeners at Start but accepts connections
	// only after OpenForClients: a node that is still catching up with its
	// metadata keeps clients waiting in the accept backlog instead of
	// answering from a stale view.
	AcceptAfterOpen bool

	// Observer, when set, is told of each request's queue and completion times.
	Observer Observer
}

// withDefaults returns cfg with zero fields replaced by Kafka's defaults, or
// an error wrapping ErrConfig.
func (cfg Config) withDefaults() (Config, error) {
	if len(cfg.Listeners) == 0 {
		return cfg, fmt.Errorf("%w: no listeners", ErrConfig)
	}
	names := make(map[string]bool, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		if l.Name == "" {
			return cfg, fmt.Errorf("%w: listener %q has no name", ErrConfig, l.Address)
		}
		if names[l.Name] {
			return cfg, fmt.Errorf("%w: listener name %q repeated", ErrConfig, l.Name)
		}
		names[l.Name] = true
		if _, _, err := net.SplitHostPort(l.Address); err != nil {
			return cfg, fmt.Errorf("%w: listener %s address %q: %v", ErrConfig, l.Name, l.Address, err)
		}
	}
	setDefault(&cfg.NumNetworkThreads, DefaultNumNetworkThreads)
	setDefault(&cfg.NumIOThreads, DefaultNumIOThreads)
	setDefault(&cfg.QueuedMaxRequests, DefaultQueuedMaxRequests)
	setDefault(&cfg.SocketRequestMaxBytes, DefaultSocketRequestMaxBytes)
	setDefault(&cfg.ConnectionsMaxIdleMs, DefaultConnectionsMaxIdleMs)
	setDefault(&cfg.SocketSendBufferBytes, DefaultSocketSendBufferBytes)
	setDefault(&cfg.SocketReceiveBufferBytes, DefaultSocketReceiveBufferBytes)
	setDefault(&cfg.MaxInFlightRequestsPerConnection, DefaultMaxInFlightRequestsPerConnection)
	if cfg.IsFlexible == nil {
		cfg.IsFlexible = DefaultIsFlexible
	}
	switch {
	case cfg.NumNetworkThreads < 0, cfg.NumIOThreads < 0, cfg.QueuedMaxRequests < 0:
		return cfg, fmt.Errorf("%w: thread and queue counts must be positive", ErrConfig)
	case cfg.SocketRequestMaxBytes < minFrameBytes:
		return cfg, fmt.Errorf("%w: socket.request.max.bytes %d below %d", ErrConfig, cfg.SocketRequestMaxBytes, minFrameBytes)
	case cfg.MaxConnections < 0, cfg.MaxConnectionsPerIP < 0:
		return cfg, fmt.Errorf("%w: connection limits must not be negative", ErrConfig)
	case cfg.MaxInFlightRequestsPerConnection < 0 || cfg.MaxInFlightRequestsPerConnection > maxInFlightRequestsPerConnectionMax:
		return cfg, fmt.Errorf("%w: in-flight requests per connection %d outside 1..%d",
			ErrConfig, cfg.MaxInFlightRequestsPerConnection, maxInFlightRequestsPerConnectionMax)
	case slices.ContainsFunc(cfg.ReuseBodyAPIKeys, func(key int16) bool { return key < 0 }):
		return cfg, fmt.Errorf("%w: negative API key in ReuseBodyAPIKeys", ErrConfig)
	case slices.ContainsFunc(cfg.PipelinedAPIKeys, func(key int16) bool { return key < 0 }):
		return cfg, fmt.Errorf("%w: negative API key in PipelinedAPIKeys", ErrConfig)
	case cfg.ConnectionsMaxIdleMs < -1:
		return cfg, fmt.Errorf("%w: connections.max.idle.ms %d", ErrConfig, cfg.ConnectionsMaxIdleMs)
	}
	return cfg, nil
}

// idleTimeout is connections.max.idle.ms as a duration; 0 when disabled.
func (cfg *Config) idleTimeout() time.Duration {
	if cfg.ConnectionsMaxIdleMs <= 0 {
		return 0
	}
	return time.Duration(cfg.ConnectionsMaxIdleMs) * time.Millisecond
}

func setDefault[T int | int32 | int64](field *T, value T) {
	if *field == 0 {
		*field = value
	}
}
