// Package metrics exposes a node's Prometheus metrics and health endpoints
// on their own HTTP listener (metrics.listener, default 127.0.0.1:9644):
// /metrics, /healthz (the process is up) and /readyz (the node has loaded
// its metadata and serves clients).
//
// The names follow Kafka's JMX metrics where Kafka has one, in Prometheus
// style: kafka.network:RequestMetrics TotalTimeMs becomes
// samsa_request_total_seconds{api="Produce"}, BrokerTopicMetrics BytesInPerSec
// becomes samsa_topic_bytes_in_total{topic}, and so on.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
)

// latencyBuckets span 50µs to ~30s.
var latencyBuckets = prometheus.ExponentialBuckets(0.00005, 2.5, 16)

// Metrics are a node's metrics.
type Metrics struct {
	Registry *prometheus.Registry

	requests      *prometheus.CounterVec
	totalTime     *prometheus.HistogramVec
	queueTime     *prometheus.HistogramVec
	localTime     *prometheus.HistogramVec
	sendTime      *prometheus.HistogramVec
	bytesIn       *prometheus.CounterVec
	bytesOut      *prometheus.CounterVec
	messagesIn    *prometheus.CounterVec
	FetchParked   prometheus.Gauge
	ProduceParked prometheus.Gauge
	// followerFetches and preferredReplicas count fetching from the closest
	// replica (KIP-392).
	followerFetches   prometheus.Counter
	preferredReplicas prometheus.Counter
}

// New returns the metrics with the Go runtime and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	api := []string{"api"}
	m := &Metrics{
		Registry: r,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "samsa_requests_total", Help: "Requests completed, by API (Kafka's RequestsPerSec).",
		}, api),
		totalTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "samsa_request_total_seconds", Help: "Time from a request being read to its response being written (TotalTimeMs).", Buckets: latencyBuckets,
		}, api),
		queueTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "samsa_request_queue_seconds", Help: "Time a request waited in the request queue (RequestQueueTimeMs).", Buckets: latencyBuckets,
		}, api),
		localTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "samsa_request_local_seconds", Help: "Time from a handler taking a request to its response being ready, including time parked (LocalTimeMs + RemoteTimeMs).", Buckets: latencyBuckets,
		}, api),
		sendTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "samsa_request_send_seconds", Help: "Time from a response being ready to its being written (ResponseQueueTimeMs + ResponseSendTimeMs).", Buckets: latencyBuckets,
		}, api),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "samsa_topic_bytes_in_total", Help: "Record batch bytes appended by producers (BytesInPerSec).",
		}, []string{"topic"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "samsa_topic_bytes_out_total", Help: "Record batch bytes sent to consumers (BytesOutPerSec).",
		}, []string{"topic"}),
		messagesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "samsa_topic_messages_in_total", Help: "Records appended by producers (MessagesInPerSec).",
		}, []string{"topic"}),
		FetchParked: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "samsa_purgatory_fetch_size", Help: "Fetch requests parked waiting for data (PurgatorySize, delayedOperation=Fetch).",
		}),
		ProduceParked: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "samsa_purgatory_produce_size", Help: "Produce requests parked waiting for replication (PurgatorySize, delayedOperation=Produce).",
		}),
		followerFetches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "samsa_fetch_follower_requests_total", Help: "Consumer fetch requests this node answered as a follower of at least one of their partitions (KIP-392).",
		}),
		preferredReplicas: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "samsa_fetch_preferred_read_replica_total", Help: "Partitions of consumer fetches this leader answered with a preferred read replica instead of records (KIP-392).",
		}),
	}
	r.MustRegister(m.requests, m.totalTime, m.queueTime, m.localTime, m.sendTime, m.bytesIn, m.bytesOut, m.messagesIn, m.FetchParked, m.ProduceParked,
		m.followerFetches, m.preferredReplicas)
	return m
}

func apiName(key int16) string {
	if name := kmsg.NameForKey(key); name != "" {
		return name
	}
	return "Unknown"
}

// RequestDequeued implements network.Observer.
func (m *Metrics) RequestDequeued(req *network.Request, queueTime time.Duration) {
	m.queueTime.WithLabelValues(apiName(req.APIKey)).Observe(queueTime.Seconds())
}

// RequestCompleted implements network.Observer.
func (m *Metrics) RequestCompleted(req *network.Request, t network.RequestTimings) {
	api := apiName(req.APIKey)
	m.requests.WithLabelValues(api).Inc()
	m.totalTime.WithLabelValues(api).Observe(t.Sent.Sub(t.Received).Seconds())
	m.localTime.WithLabelValues(api).Observe(t.Responded.Sub(t.Dequeued).Seconds())
	m.sendTime.WithLabelValues(api).Observe(t.Sent.Sub(t.Responded).Seconds())
}

// BytesIn records an append of n bytes holding records records to topic.
func (m *Metrics) BytesIn(topic string, n int, records int64) {
	if m == nil {
		return
	}
	m.bytesIn.WithLabelValues(topic).Add(float64(n))
	m.messagesIn.WithLabelValues(topic).Add(float64(records))
}

// BytesOut records n record bytes fetched from topic.
func (m *Metrics) BytesOut(topic string, n int64) {
	if m == nil || n == 0 {
		return
	}
	m.bytesOut.WithLabelValues(topic).Add(float64(n))
}

// FetchParkedAdd moves the parked-fetch gauge by delta.
func (m *Metrics) FetchParkedAdd(delta float64) {
	if m != nil {
		m.FetchParked.Add(delta)
	}
}

// FollowerFetch counts a consumer fetch answered as a follower.
func (m *Metrics) FollowerFetch() {
	if m != nil {
		m.followerFetches.Inc()
	}
}

// PreferredReadReplicas counts n partitions answered with a preferred read
// replica.
func (m *Metrics) PreferredReadReplicas(n int) {
	if m != nil && n > 0 {
		m.preferredReplicas.Add(float64(n))
	}
}

// metricsMaxHeaderBytes bounds a request's headers on the metrics
// listener (net/http's default).
const metricsMaxHeaderBytes = 1 << 20

// Server serves the metrics and health endpoints.
type Server struct {
	http     *http.Server
	listener net.Listener
}

// Endpoint names what a request to the metrics listener reads.
type Endpoint int

const (
	// EndpointMetrics is /metrics.
	EndpointMetrics Endpoint = iota
	// EndpointHealth is /healthz and /readyz.
	EndpointHealth
)

// Guard decides whether a request may read endpoint: 0 lets it through,
// any other value is the HTTP status it is refused with (401 or 403).
// The guard writes any headers the refusal needs (WWW-Authenticate).
type Guard func(w http.ResponseWriter, r *http.Request, endpoint Endpoint) int

// Serve starts the HTTP listener on addr. ready reports whether /readyz
// should answer 200.
func Serve(addr string, m *Metrics, ready func() bool) (*Server, error) {
	return ServeGuarded(addr, m, ready, nil)
}

// ServeGuarded is Serve with every request first passed to guard (nil lets
// everything through). Every endpoint only reads: any method other than
// GET and HEAD answers 405 before the guard runs.
func ServeGuarded(addr string, m *Metrics, ready func() bool, guard Guard) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	guarded := func(endpoint Endpoint, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			if guard != nil {
				if status := guard(w, r, endpoint); status != 0 {
					http.Error(w, http.StatusText(status), status)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", guarded(EndpointMetrics, promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})))
	mux.Handle("/healthz", guarded(EndpointHealth, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })))
	mux.Handle("/readyz", guarded(EndpointHealth, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})))
	s := &Server{http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: metricsMaxHeaderBytes}, listener: ln}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed; /metrics is best effort
		}
	}()
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Close stops the listener.
func (s *Server) Close(ctx context.Context) error { return s.http.Shutdown(ctx) }
