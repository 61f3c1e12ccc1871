package quota

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"
)

// Kind is a quota the Manager measures.
type Kind uint8

// Kinds, each with its key.
const (
	Produce Kind = iota
	Fetch
	Request
	ControllerMutation
	numKinds
)

// Key is the quota key a kind is configured with.
func (k Kind) Key() string {
	switch k {
	case Produce:
		return ProducerByteRate
	case Fetch:
		return ConsumerByteRate
	case Request:
		return RequestPercentage
	default:
		return ControllerMutationRate
	}
}

// String names the kind as Kafka's quota types do.
func (k Kind) String() string {
	switch k {
	case Produce:
		return "Produce"
	case Fetch:
		return "Fetch"
	case Request:
		return "Request"
	default:
		return "ControllerMutation"
	}
}

// Bucket expiry: a bucket unused this long is forgotten (Kafka purges quota
// sensors after an hour of inactivity), checked at most once a minute.
const (
	inactiveBucketExpiryMs = 3600 * 1000
	expirySweepIntervalMs  = 60 * 1000
)

// Config configures a Manager.
type Config struct {
	// Windows measures byte rates and request time (quota.window.num,
	// quota.window.size.seconds).
	Windows Windows
	// ControllerWindows measures controller mutations
	// (controller.quota.window.num, controller.quota.window.size.seconds).
	ControllerWindows Windows
}

// Manager measures every client's usage against the quotas of a Table and
// answers throttle times. It is safe for concurrent use; time is passed in.
type Manager struct {
	cfg Config
	// table is also read without the lock, so that requests of a kind no
	// quota is set for take no lock at all.
	table atomic.Pointer[Table]
	mu    struct {
		sync.Mutex
		table       *Table
		kinds       [numKinds]map[Bucket]*bucketState
		lastSweepMs int64
	}
}

// bucketState is one bucket's measurement of one kind.
type bucketState struct {
	rate   Rate
	tokens TokenBucket
	// throttle measures the throttle time handed out, for metrics.
	throttle   Rate
	throttles  int64
	lastUsedMs int64
	// bound is the quota that applied when the bucket was last used.
	bound float64
}

// NewManager returns a manager with no quotas.
func NewManager(cfg Config) *Manager {
	cfg.Windows = cfg.Windows.valid()
	cfg.ControllerWindows = cfg.ControllerWindows.valid()
	m := &Manager{cfg: cfg}
	m.mu.table = EmptyTable
	m.table.Store(EmptyTable)
	for i := range m.mu.kinds {
		m.mu.kinds[i] = map[Bucket]*bucketState{}
	}
	return m
}

// SetTable replaces the configured quotas. Measurements carry over: a
// changed bound applies to the rate measured so far, as in Kafka.
func (m *Manager) SetTable(t *Table) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.table = t
	m.table.Store(t)
}

// Table is the configured quotas.
func (m *Manager) Table() *Table {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.table
}

func (m *Manager) windowsOf(k Kind) Windows {
	if k == ControllerMutation {
		return m.cfg.ControllerWindows
	}
	return m.cfg.Windows
}

// Enabled reports whether any entity sets kind's quota; when none does,
// Record does nothing and returns 0.
func (m *Manager) Enabled(k Kind) bool {
	return m.table.Load().Uses(k.Key())
}

// stateLocked returns the bucket of kind that a request of user and
// clientID is measured in, and its bound (+Inf when no quota applies).
func (m *Manager) stateLocked(k Kind, user, clientID string, nowMs int64) (*bucketState, float64) {
	m.sweepLocked(nowMs)
	bound, bucket, ok := m.mu.table.Resolve(k.Key(), user, clientID)
	if !ok {
		bound = math.Inf(1)
	}
	s := m.mu.kinds[k][bucket]
	if s == nil {
		s = &bucketState{}
		m.mu.kinds[k][bucket] = s
	}
	s.lastUsedMs, s.bound = nowMs, bound
	return s, bound
}

// Record adds value (bytes for Produce and Fetch, percent-seconds of a
// handler for Request) to the bucket of user and clientID at nowMs and
// returns how long the client must be throttled: 0 while its rate,
// including value, stays within its quota. Request throttles are bounded
// by one window, as Kafka bounds them.
func (m *Manager) Record(k Kind, user, clientID string, value float64, nowMs int64) (throttleMs int64) {
	if !m.Enabled(k) {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.table.Uses(k.Key()) {
		return 0
	}
	w := m.windowsOf(k)
	s, bound := m.stateLocked(k, user, clientID, nowMs)
	s.rate.Record(w, value, nowMs)
	if math.IsInf(bound, 1) {
		return 0
	}
	rate := s.rate.PerSecond(w, nowMs)
	throttleMs = s.rate.throttleMs(w, rate, bound, nowMs)
	if k == Request {
		throttleMs = min(throttleMs, w.WindowMs)
	}
	if throttleMs > 0 {
		s.throttle.Record(w, float64(throttleMs), nowMs)
		s.throttles++
	}
	return throttleMs
}

// Unrecord takes value back out of the current window: a throttled fetch
// answers no records, so its bytes must not count (Kafka records a negative
// value for them).
func (m *Manager) Unrecord(k Kind, user, clientID string, value float64, nowMs int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.table.Uses(k.Key()) {
		return
	}
	s, _ := m.stateLocked(k, user, clientID, nowMs)
	s.rate.Record(m.windowsOf(k), -value, nowMs)
}

// MaxValueInWindow is the most that can be recorded at once without a
// certain throttle, quota * (Samples - 1) * window seconds, so a fetch
// can be sized to fit (Kafka's maxValueInQuotaWindow); +Inf without a
// quota.
func (m *Manager) MaxValueInWindow(k Kind, user, clientID string) float64 {
	if !m.Enabled(k) {
		return math.Inf(1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	bound, _, ok := m.mu.table.Resolve(k.Key(), user, clientID)
	if !ok {
		return math.Inf(1)
	}
	w := m.windowsOf(k)
	return bound * float64(w.Samples-1) * float64(w.WindowMs) / 1000
}

// RecordMutations accounts for permits controller mutations (partitions
// created or deleted) by user and clientID at nowMs (KIP-599). Strict
// (the request versions that know THROTTLING_QUOTA_EXCEEDED): a client
// whose bucket is already empty is refused (accepted false) and told how
// long to wait; otherwise the permits are taken even if that empties the
// bucket below zero. Permissive (older versions): the permits are always
// taken, and a bucket below zero throttles.
func (m *Manager) RecordMutations(user, clientID string, permits float64, strict bool, nowMs int64) (accepted bool, throttleMs int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.table.Uses(ControllerMutationRate) {
		return true, 0
	}
	w := m.cfg.ControllerWindows
	s, bound := m.stateLocked(ControllerMutation, user, clientID, nowMs)
	if math.IsInf(bound, 1) {
		s.rate.Record(w, permits, nowMs)
		return true, 0
	}
	if strict && s.tokens.Tokens(w, bound, nowMs) < 0 {
		throttleMs = s.tokens.throttleMs(bound)
		s.throttle.Record(w, float64(throttleMs), nowMs)
		s.throttles++
		return false, throttleMs
	}
	s.tokens.Take(w, bound, permits, nowMs)
	s.rate.Record(w, permits, nowMs)
	if strict {
		return true, 0
	}
	throttleMs = s.tokens.throttleMs(bound)
	if throttleMs > 0 {
		s.throttle.Record(w, float64(throttleMs), nowMs)
		s.throttles++
	}
	return true, throttleMs
}

// sweepLocked forgets buckets unused for an hour.
func (m *Manager) sweepLocked(nowMs int64) {
	if nowMs-m.mu.lastSweepMs < expirySweepIntervalMs {
		return
	}
	m.mu.lastSweepMs = nowMs
	for _, buckets := range m.mu.kinds {
		for b, s := range buckets {
			if nowMs-s.lastUsedMs >= inactiveBucketExpiryMs {
				delete(buckets, b)
			}
		}
	}
}

// BucketStats is one bucket's measurements, for metrics.
type BucketStats struct {
	Kind   Kind
	Bucket Bucket
	// Rate is bytes per second (Produce, Fetch), percent of a handler
	// (Request) or mutations per second (ControllerMutation).
	Rate float64
	// ThrottleMsPerSecond is the throttle time handed out per second.
	ThrottleMsPerSecond float64
	// Throttles counts the throttled requests since the bucket was made.
	Throttles int64
	// Bound is the quota, +Inf when none applies.
	Bound float64
}

// Stats returns the measurements of at most limit buckets per kind, the
// busiest first, so that metrics stay bounded however many clients come.
func (m *Manager) Stats(nowMs int64, limit int) []BucketStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []BucketStats
	for k := Kind(0); k < numKinds; k++ {
		w := m.windowsOf(k)
		var kind []BucketStats
		for b, s := range m.mu.kinds[k] {
			kind = append(kind, BucketStats{Kind: k, Bucket: b, Rate: s.rate.PerSecond(w, nowMs),
				ThrottleMsPerSecond: s.throttle.PerSecond(w, nowMs), Throttles: s.throttles, Bound: s.bound})
		}
		sort.Slice(kind, func(i, j int) bool {
			if kind[i].Rate != kind[j].Rate {
				return kind[i].Rate > kind[j].Rate
			}
			if kind[i].Bucket.User != kind[j].Bucket.User {
				return kind[i].Bucket.User < kind[j].Bucket.User
			}
			return kind[i].Bucket.ClientID < kind[j].Bucket.ClientID
		})
		if len(kind) > limit {
			kind = kind[:limit]
		}
		out = append(out, kind...)
	}
	return out
}
