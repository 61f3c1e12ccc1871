package telemetry

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Config bounds the manager, with Kafka's names and defaults where Kafka
// has them.
type Config struct {
	// MaxBytes is telemetry.max.bytes (1048576): the largest payload a
	// client may push, compressed or not.
	MaxBytes int32
	// MaxInstances bounds the client instances tracked (Kafka's cache
	// size, 16384); the least recently seen goes first.
	MaxInstances int
	// InstanceExpiryMs is how long an instance that sends nothing is kept,
	// at least three push intervals (Kafka: 60000).
	InstanceExpiryMs int64
	// MaxPointsPerInstance bounds the data points kept from one client's
	// last push for /metrics.
	MaxPointsPerInstance int
}

// DefaultConfig is Kafka's defaults and Samsa's export bound.
func DefaultConfig() Config {
	return Config{MaxBytes: 1 << 20, MaxInstances: 16384, InstanceExpiryMs: 60000, MaxPointsPerInstance: 1000}
}

// Client is what a request tells of the client that sent it.
type Client struct {
	ID              string
	SoftwareName    string
	SoftwareVersion string
	SourceAddress   string
	SourcePort      string
}

// Instance is a client instance as /metrics shows it.
type Instance struct {
	ID     [16]byte
	Client Client
	// Points are the data points of the last accepted push.
	Points []Point
}

// instance is one client instance's state (Kafka's ClientMetricsInstance).
type instance struct {
	id     [16]byte
	client Client
	// attrs are the client's attributes that match patterns test.
	attrs map[string]string
	// subscriptionVersion is the Manager's version the subscription was
	// computed at; an older one is recomputed on the next request.
	subscriptionVersion int64
	subscriptionID      int32
	metrics             []string
	intervalMs          int32
	lastGetMs           int64
	lastPushMs          int64
	terminating         bool
	lastError           int16
	lastSeenMs          int64
	points              []Point
}

// Manager tracks the client-metrics subscriptions and the client instances
// that ask for and push telemetry (KIP-714). It is a deterministic core:
// time comes in as nowMs and nothing runs in the background; Expire is
// called from a driver.
type Manager struct {
	cfg Config
	// newID returns a new random client instance id.
	newID func() [16]byte

	mu struct {
		sync.Mutex
		subscriptions []Subscription
		// version counts subscription changes.
		version int64
		// instances are bounded by cfg.MaxInstances.
		// Invariant: len(instances) <= cfg.MaxInstances.
		instances map[[16]byte]*instance
		// answers counts the requests answered, by error code.
		answers map[int16]int64
	}
}

// NewManager returns a manager with no subscription.
func NewManager(cfg Config) *Manager {
	d := DefaultConfig()
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = d.MaxBytes
	}
	if cfg.MaxInstances <= 0 {
		cfg.MaxInstances = d.MaxInstances
	}
	if cfg.InstanceExpiryMs <= 0 {
		cfg.InstanceExpiryMs = d.InstanceExpiryMs
	}
	if cfg.MaxPointsPerInstance <= 0 {
		cfg.MaxPointsPerInstance = d.MaxPointsPerInstance
	}
	m := &Manager{cfg: cfg, newID: randomID}
	m.mu.instances = map[[16]byte]*instance{}
	m.mu.answers = map[int16]int64{}
	return m
}

func randomID() [16]byte {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return id
}

// reserved reports the ids no client may have: zero, and Kafka's
// metadata topic id (0, 1).
func reserved(id [16]byte) bool {
	var one [16]byte
	one[15] = 1
	return id == [16]byte{} || id == one
}

// SetSubscriptions replaces the subscriptions; every instance's
// subscription is recomputed on its next request.
func (m *Manager) SetSubscriptions(subs []Subscription) {
	sorted := slices.Clone(subs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.subscriptions = sorted
	m.mu.version++
}

// GetResult is a GetTelemetrySubscriptions answer.
type GetResult struct {
	ErrorCode         int16
	ClientInstanceID  [16]byte
	SubscriptionID    int32
	PushIntervalMs    int32
	TelemetryMaxBytes int32
	RequestedMetrics  []string
}

// GetSubscriptions answers GetTelemetrySubscriptions: a zero id gets a new
// one. A request sooner than the push interval after the last one answers
// THROTTLING_QUOTA_EXCEEDED, unless the last push failed with
// UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE or the
// subscriptions changed since.
func (m *Manager) GetSubscriptions(id [16]byte, client Client, nowMs int64) GetResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == [16]byte{} {
		for {
			id = m.newID()
			if _, taken := m.mu.instances[id]; !taken && !reserved(id) {
				break
			}
		}
	}
	inst := m.instanceLocked(id, client, nowMs)
	if !inst.acceptGet(nowMs) && inst.lastError != kerr.UnknownSubscriptionID.Code && inst.lastError != kerr.UnsupportedCompressionType.Code {
		m.mu.answers[kerr.ThrottlingQuotaExceeded.Code]++
		return GetResult{ErrorCode: kerr.ThrottlingQuotaExceeded.Code}
	}
	inst.lastError = 0
	m.mu.answers[0]++
	return GetResult{ClientInstanceID: id, SubscriptionID: inst.subscriptionID, PushIntervalMs: inst.intervalMs,
		TelemetryMaxBytes: m.cfg.MaxBytes, RequestedMetrics: slices.Clone(inst.metrics)}
}

// PushRequest is a PushTelemetry request.
type PushRequest struct {
	ClientInstanceID [16]byte
	SubscriptionID   int32
	Terminating      bool
	CompressionType  int8
	Metrics          []byte
}

// Push answers PushTelemetry with an error code and message (0 and ""
// when accepted), decoding and keeping the pushed metrics. The checks, in
// Kafka's order: a reserved id or a push after a terminating one
// INVALID_REQUEST; sooner than the push interval (unless terminating, or
// the first push after a GetTelemetrySubscriptions)
// THROTTLING_QUOTA_EXCEEDED; another subscription id
// UNKNOWN_SUBSCRIPTION_ID; a codec Kafka does not know
// UNSUPPORTED_COMPRESSION_TYPE; a payload over telemetry.max.bytes
// (compressed or decompressed) TELEMETRY_TOO_LARGE; one that does not
// decode INVALID_RECORD.
func (m *Manager) Push(req PushRequest, client Client, nowMs int64) (code int16, message string) {
	if reserved(req.ClientInstanceID) {
		m.count(kerr.InvalidRequest.Code)
		return kerr.InvalidRequest.Code, fmt.Sprintf("Invalid request from the client [%s], invalid client instance id", FormatID(req.ClientInstanceID))
	}
	m.mu.Lock()
	inst := m.instanceLocked(req.ClientInstanceID, client, nowMs)
	code, message = m.checkPushLocked(inst, req, nowMs)
	// As Kafka does, whatever the outcome: the flag is the last request's.
	inst.terminating = req.Terminating
	if code != 0 {
		inst.lastError = code
		m.mu.answers[code]++
		m.mu.Unlock()
		return code, message
	}
	m.mu.Unlock()

	var points []Point
	if len(req.Metrics) > 0 {
		var err error
		points, _, err = DecodePayload(req.CompressionType, req.Metrics, int(m.cfg.MaxBytes), m.cfg.MaxPointsPerInstance)
		switch {
		case err == nil:
		case isTooLarge(err):
			code, message = kerr.TelemetryTooLarge.Code, err.Error()
		default:
			code, message = kerr.InvalidRecord.Code, err.Error()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.answers[code]++
	if current := m.mu.instances[req.ClientInstanceID]; current != nil {
		current.lastError = code
		if code == 0 && len(req.Metrics) > 0 {
			current.points = points
		}
	}
	return code, message
}

func isTooLarge(err error) bool { return errors.Is(err, ErrTooLarge) }

func (m *Manager) count(code int16) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.answers[code]++
}

func (m *Manager) checkPushLocked(inst *instance, req PushRequest, nowMs int64) (int16, string) {
	id := FormatID(req.ClientInstanceID)
	switch {
	case inst.terminating:
		return kerr.InvalidRequest.Code, fmt.Sprintf("Client [%s] sent the previous request with state terminating to TRUE, can not accept any requests after that", id)
	case !inst.acceptPush(nowMs) && !req.Terminating:
		return kerr.ThrottlingQuotaExceeded.Code, fmt.Sprintf("Request from the client [%s] arrived before the next push interval time", id)
	case req.SubscriptionID != inst.subscriptionID:
		return kerr.UnknownSubscriptionID.Code, fmt.Sprintf("Unknown client subscription id for the client [%s]", id)
	case !supportedCompression(req.CompressionType):
		return kerr.UnsupportedCompressionType.Code, fmt.Sprintf("Unknown compression type [%d] is received in telemetry request from [%s]", req.CompressionType, id)
	case len(req.Metrics) > int(m.cfg.MaxBytes):
		return kerr.TelemetryTooLarge.Code, fmt.Sprintf("Telemetry request from [%s] is larger than the maximum allowed size [%d]", id, m.cfg.MaxBytes)
	}
	return 0, ""
}

// acceptGet records a GetTelemetrySubscriptions at nowMs if a push
// interval has passed since the last request of either kind.
func (i *instance) acceptGet(nowMs int64) bool {
	if nowMs-max(i.lastGetMs, i.lastPushMs) >= int64(i.intervalMs) || (i.lastGetMs == 0 && i.lastPushMs == 0) {
		i.lastGetMs = nowMs
		return true
	}
	return false
}

// acceptPush records a push at nowMs if it is the first since a
// GetTelemetrySubscriptions (clients jitter the interval) or a push
// interval has passed since the last push.
func (i *instance) acceptPush(nowMs int64) bool {
	if i.lastGetMs > i.lastPushMs || nowMs-i.lastPushMs >= int64(i.intervalMs) || (i.lastPushMs == 0 && i.lastGetMs == 0) {
		i.lastPushMs = nowMs
		return true
	}
	return false
}

// instanceLocked returns the instance of id, creating it (evicting the
// least recently seen one at the bound) or recomputing its subscription
// when the subscriptions changed since.
func (m *Manager) instanceLocked(id [16]byte, client Client, nowMs int64) *instance {
	inst := m.mu.instances[id]
	if inst == nil {
		if len(m.mu.instances) >= m.cfg.MaxInstances {
			m.evictOldestLocked()
		}
		inst = &instance{id: id, client: client, attrs: attributesOf(id, client)}
		m.subscribeLocked(inst)
		m.mu.instances[id] = inst
	} else if inst.subscriptionVersion < m.mu.version {
		// A fresh start under the new subscription, as Kafka makes a new
		// instance: the next request is not throttled.
		fresh := &instance{id: id, client: inst.client, attrs: inst.attrs, points: inst.points}
		m.subscribeLocked(fresh)
		m.mu.instances[id] = fresh
		inst = fresh
	}
	inst.lastSeenMs = nowMs
	return inst
}

func (m *Manager) evictOldestLocked() {
	var oldest *instance
	for _, inst := range m.mu.instances {
		if oldest == nil || inst.lastSeenMs < oldest.lastSeenMs {
			oldest = inst
		}
	}
	if oldest != nil {
		delete(m.mu.instances, oldest.id)
	}
}

// subscribeLocked computes inst's subscription from every matching one:
// the union of their metrics (AllMetrics alone if any asks for all) and
// the shortest of their intervals.
func (m *Manager) subscribeLocked(inst *instance) {
	interval := int32(DefaultIntervalMs)
	var metrics []string
	all := false
	for i := range m.mu.subscriptions {
		s := &m.mu.subscriptions[i]
		if !s.Matches(inst.attrs) {
			continue
		}
		for _, name := range s.Metrics {
			all = all || name == AllMetrics
			if !slices.Contains(metrics, name) {
				metrics = append(metrics, name)
			}
		}
		interval = min(interval, s.IntervalMs)
	}
	if all {
		metrics = []string{AllMetrics}
	}
	slices.Sort(metrics)
	inst.metrics, inst.intervalMs = metrics, interval
	inst.subscriptionVersion = m.mu.version
	inst.subscriptionID = subscriptionID(metrics, interval, inst.id)
}

// subscriptionID identifies a subscription to its client: a CRC32C of the
// metrics and interval, XORed with a hash of the instance id, as Kafka
// computes it (the value is opaque to clients).
func subscriptionID(metrics []string, intervalMs int32, id [16]byte) int32 {
	crc := crc32.Checksum([]byte("["+strings.Join(metrics, ", ")+"]"+fmt.Sprint(intervalMs)), crc32.MakeTable(crc32.Castagnoli))
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	h := hi ^ lo
	return int32(crc) ^ int32(h>>32) ^ int32(h)
}

// attributesOf are the attributes match patterns test.
func attributesOf(id [16]byte, c Client) map[string]string {
	attrs := map[string]string{ClientInstanceID: FormatID(id), ClientID: c.ID}
	for k, v := range map[string]string{ClientSoftwareName: c.SoftwareName, ClientSoftwareVersion: c.SoftwareVersion,
		ClientSourceAddress: c.SourceAddress, ClientSourcePort: c.SourcePort} {
		if v != "" {
			attrs[k] = v
		}
	}
	return attrs
}

// FormatID renders a client instance id as Kafka's Uuid.toString does:
// URL-safe base64 without padding.
func FormatID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// Expire forgets the instances that sent nothing for max(InstanceExpiryMs,
// three push intervals), and those that said they were terminating a push
// interval ago.
func (m *Manager) Expire(nowMs int64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, inst := range m.mu.instances {
		idle := nowMs - inst.lastSeenMs
		if idle >= max(m.cfg.InstanceExpiryMs, 3*int64(inst.intervalMs)) || (inst.terminating && idle >= int64(inst.intervalMs)) {
			delete(m.mu.instances, id)
			n++
		}
	}
	return n
}

// Instances returns every tracked instance with its last pushed points.
func (m *Manager) Instances() []Instance {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Instance, 0, len(m.mu.instances))
	for _, inst := range m.mu.instances {
		out = append(out, Instance{ID: inst.id, Client: inst.client, Points: inst.points})
	}
	return out
}

// Answers returns how many requests were answered with each error code.
func (m *Manager) Answers() map[int16]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[int16]int64, len(m.mu.answers))
	for k, v := range m.mu.answers {
		out[k] = v
	}
	return out
}

// MaxBytes is telemetry.max.bytes.
func (m *Manager) MaxBytes() int32 { return m.cfg.MaxBytes }
