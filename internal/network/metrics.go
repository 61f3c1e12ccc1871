package network

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Observer is told of each request's passage, for per-API histograms such as
// Kafka's RequestQueueTimeMs and TotalTimeMs. Its methods are called from
// handler and writer goroutines and must not block.
type Observer interface {
	// RequestDequeued is called when a handler takes req off the queue,
	// before Handle; queueTime is how long it waited there.
	RequestDequeued(req *Request, queueTime time.Duration)
	// RequestCompleted is called once the response has been written, or
	// dropped for NoResponse. It is not called for requests whose connection
	// closed first.
	RequestCompleted(req *Request, timings RequestTimings)
}

// counters are the server's running totals. Durations are nanoseconds.
type counters struct {
	connectionsActive   atomic.Int64
	connectionsAccepted atomic.Uint64
	connectionsRejected atomic.Uint64
	requestsReceived    atomic.Uint64
	requestsReadAhead   atomic.Uint64
	readAheadWaits      atomic.Uint64
	requestsRejected    atomic.Uint64
	responsesSent       atomic.Uint64
	responsesDropped    atomic.Uint64
	bytesReceived       atomic.Uint64
	bytesSent           atomic.Uint64
	sendfileBytes       atomic.Uint64
	copiedFileBytes     atomic.Uint64
	tlsHandshakesFailed atomic.Uint64
	readersBlocked      atomic.Int64
	queueFullWaits      atomic.Uint64
	requestQueueMax     atomic.Int64
	handlerIdleNanos    atomic.Int64
	handlerBusyNanos    atomic.Int64
	networkBusyNanos    atomic.Int64
	// connectionsThrottled counts mutes for client quotas; and
	// connectionsRateLimited connections refused for connection_creation_rate.
	connectionsThrottled   atomic.Uint64
	connectionsRateLimited atomic.Uint64
	// memoryPoolWaits counts frames whose reader waited for the memory
	// pool; readersWaitingForMemory is how many wait now.
	memoryPoolWaits         atomic.Uint64
	readersWaitingForMemory atomic.Int64
}

// noteQueueSize raises the queue-size high-water mark to size.
func (c *counters) noteQueueSize(size int64) {
	for {
		current := c.requestQueueMax.Load()
		if size <= current || c.requestQueueMax.CompareAndSwap(current, size) {
			return
		}
	}
}

// Stats is a snapshot of the server's gauges and running totals.
type Stats struct {
	// Uptime is the time since Start.
	Uptime time.Duration

	ConnectionsActive   int64
	ConnectionsAccepted uint64
	// ConnectionsRejected counts connections closed for max.connections.per.ip.
	ConnectionsRejected uint64
	// ConnectionsThrottled counts connections muted for a client quota;
	// ConnectionsRateLimited connections refused for an IP's
	// connection_creation_rate.
	ConnectionsThrottled   uint64
	ConnectionsRateLimited uint64

	// RequestQueueSize is the number of requests waiting for a handler now
	// (Kafka's RequestQueueSize); RequestQueueSizeMax its high-water mark.
	RequestQueueSize     int
	RequestQueueSizeMax  int64
	RequestQueueCapacity int
	// ReadersBlocked is how many connection readers are waiting for room in
	// the full request queue now; QueueFullWaits counts such waits.
	ReadersBlocked int64
	QueueFullWaits uint64

	// RequestsReceived counts framed requests with a valid header;
	// RequestsRejected counts frames that closed their connection (size,
	// truncation, malformed header).
	RequestsReceived uint64
	RequestsRejected uint64
	// RequestsReadAhead counts requests read before an earlier request of
	// their connection had its response written (pipelining).
	RequestsReadAhead uint64
	// ReadAheadWaits counts frames a connection waited to read, with its
	// earlier requests unanswered, because the read-ahead budget was spent.
	ReadAheadWaits uint64
	// ResponsesSent counts written responses; ResponsesDropped those lost to
	// a closed connection.
	ResponsesSent    uint64
	ResponsesDropped uint64

	BytesReceived uint64
	BytesSent     uint64
	// SendfileBytes and CopiedFileBytes split the file-region bytes of
	// BytesSent by how they went out.
	SendfileBytes   uint64
	CopiedFileBytes uint64
	// TLSHandshakesFailed counts TLS connections closed before their first
	// request: a failed handshake or no principal for the client certificate.
	TLSHandshakesFailed uint64

	// MemoryPoolBytes is queued.max.request.bytes, 0 when unbounded.
	// MemoryPoolUsedBytes is the bytes of requests read and not yet
	// handled (Kafka's MemoryPoolUsed), counted only when bounded (as
	// Kafka's unbounded pool counts nothing);
	// MemoryPoolAvailable what is left of the bound (MemoryPoolAvailable;
	// negative after a request larger than what was left, 0 when
	// unbounded). MemoryPoolDepleted is the total time readers were
	// refused memory (MemoryPoolDepletedTimeTotal), MemoryPoolWaits counts
	// frames whose reader waited for memory and ReadersWaitingMemory how
	// many readers wait now.
	MemoryPoolBytes      int64
	MemoryPoolUsedBytes  int64
	MemoryPoolAvailable  int64
	MemoryPoolDepleted   time.Duration
	MemoryPoolWaits      uint64
	ReadersWaitingMemory int64

	// HandlerIdle is the total time handler goroutines spent waiting for a
	// request, HandlerBusy the time they spent in Handle.
	HandlerIdle  time.Duration
	HandlerBusy  time.Duration
	NumIOThreads int
	// NetworkBusy is the total time readers spent reading requests after
	// their first bytes arrived, and writers spent writing responses. It
	// includes waits for a slow peer (mid-frame, or a full socket buffer), so
	// the network idle ratio it gives understates idleness under slow clients.
	NetworkBusy       time.Duration
	NumNetworkThreads int
}

// HandlerIdleRatioSince is the fraction of handler time spent idle between
// prev and s (Kafka's RequestHandlerAvgIdlePercent); a zero prev means since
// Start.
func (s Stats) HandlerIdleRatioSince(prev Stats) float64 {
	capacity := float64(s.NumIOThreads) * float64(s.Uptime-prev.Uptime)
	if capacity <= 0 {
		return 1
	}
	return clampRatio(float64(s.HandlerIdle-prev.HandlerIdle) / capacity)
}

// NetworkIdleRatioSince is 1 minus the network busy time between prev and s
// over num.network.threads of wall time, so that it reads like Kafka's
// NetworkProcessorAvgIdlePercent; a zero prev means since Start.
func (s Stats) NetworkIdleRatioSince(prev Stats) float64 {
	capacity := float64(s.NumNetworkThreads) * float64(s.Uptime-prev.Uptime)
	if capacity <= 0 {
		return 1
	}
	return clampRatio(1 - float64(s.NetworkBusy-prev.NetworkBusy)/capacity)
}

func clampRatio(ratio float64) float64 {
	return min(max(ratio, 0), 1)
}

// Collector returns a Prometheus collector over Stats, for the lead's
// registry. Idle times are counters: rate(idle)/threads is the idle ratio.
func (s *Server) Collector() prometheus.Collector { return (*statsCollector)(s) }

type statsCollector Server

type statDesc struct {
	desc      *prometheus.Desc
	valueType prometheus.ValueType
	value     func(*Stats) float64
}

var statDescs = []statDesc{
	{newStatDesc("connections", "Open client connections."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.ConnectionsActive) }},
	{newStatDesc("connections_accepted_total", "Accepted connections."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.ConnectionsAccepted) }},
	{newStatDesc("connections_rejected_total", "Connections closed for max.connections.per.ip."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.ConnectionsRejected) }},
	{newStatDesc("connections_throttled_total", "Times a connection was muted for a client quota."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.ConnectionsThrottled) }},
	{newStatDesc("connections_rate_limited_total", "Connections refused for an IP's connection_creation_rate."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.ConnectionsRateLimited) }},
	{newStatDesc("request_queue_size", "Requests waiting for a handler."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.RequestQueueSize) }},
	{newStatDesc("request_queue_capacity", "queued.max.requests."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.RequestQueueCapacity) }},
	{newStatDesc("readers_blocked", "Connection readers waiting for room in the request queue."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.ReadersBlocked) }},
	{newStatDesc("memory_pool_used_bytes", "Bytes of requests read and not yet handled (Kafka's MemoryPoolUsed)."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.MemoryPoolUsedBytes) }},
	{newStatDesc("memory_pool_available_bytes", "What is left of queued.max.request.bytes (Kafka's MemoryPoolAvailable); +Inf when unbounded."), prometheus.GaugeValue,
		func(s *Stats) float64 {
			if s.MemoryPoolBytes <= 0 {
				return math.Inf(1)
			}
			return float64(s.MemoryPoolAvailable)
		}},
	{newStatDesc("memory_pool_depleted_seconds_total", "Time readers were refused memory for requests (Kafka's MemoryPoolDepletedTimeTotal)."), prometheus.CounterValue,
		func(s *Stats) float64 { return s.MemoryPoolDepleted.Seconds() }},
	{newStatDesc("memory_pool_waits_total", "Requests whose reader waited for queued.max.request.bytes."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.MemoryPoolWaits) }},
	{newStatDesc("readers_waiting_for_memory", "Connection readers waiting for queued.max.request.bytes."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.ReadersWaitingMemory) }},
	{newStatDesc("requests_received_total", "Requests framed and parsed."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.RequestsReceived) }},
	{newStatDesc("requests_rejected_total", "Frames that closed their connection."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.RequestsRejected) }},
	{newStatDesc("responses_sent_total", "Responses written."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.ResponsesSent) }},
	{newStatDesc("responses_dropped_total", "Responses lost to a closed connection."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.ResponsesDropped) }},
	{newStatDesc("received_bytes_total", "Bytes read from clients."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.BytesReceived) }},
	{newStatDesc("sent_bytes_total", "Bytes written to clients."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.BytesSent) }},
	{newStatDesc("sendfile_bytes_total", "File bytes sent with sendfile."), prometheus.CounterValue,
		func(s *Stats) float64 { return float64(s.SendfileBytes) }},
	{newStatDesc("handler_idle_seconds_total", "Time handler goroutines waited for requests."), prometheus.CounterValue,
		func(s *Stats) float64 { return s.HandlerIdle.Seconds() }},
	{newStatDesc("handler_threads", "num.io.threads."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.NumIOThreads) }},
	{newStatDesc("network_busy_seconds_total", "Time spent framing requests and writing responses."), prometheus.CounterValue,
		func(s *Stats) float64 { return s.NetworkBusy.Seconds() }},
	{newStatDesc("network_threads", "num.network.threads."), prometheus.GaugeValue,
		func(s *Stats) float64 { return float64(s.NumNetworkThreads) }},
}

func newStatDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("samsa_network_"+name, help, nil, nil)
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(descs chan<- *prometheus.Desc) {
	for _, d := range statDescs {
		descs <- d.desc
	}
}

// Collect implements prometheus.Collector.
func (c *statsCollector) Collect(metrics chan<- prometheus.Metric) {
	stats := (*Server)(c).Stats()
	for _, d := range statDescs {
		metrics <- prometheus.MustNewConstMetric(d.desc, d.valueType, d.value(&stats))
	}
}
