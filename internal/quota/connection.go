package quota

import (
	"math"
	"sync"
)

// ConnectionRates measures connection creation (KIP-612): per IP against
// the connection_creation_rate of ip entities, and per listener against
// max.connection.creation.rate. Safe for concurrent use; time is passed in.
type ConnectionRates struct {
	windows Windows
	mu      struct {
		sync.Mutex
		table       *Table
		ips         map[string]*ipRate
		listeners   map[string]*Rate
		lastSweepMs int64
	}
}

type ipRate struct {
	rate       Rate
	lastUsedMs int64
}

// NewConnectionRates returns rates measured over w.
func NewConnectionRates(w Windows) *ConnectionRates {
	c := &ConnectionRates{windows: w.valid()}
	c.mu.table = EmptyTable
	c.mu.ips = map[string]*ipRate{}
	c.mu.listeners = map[string]*Rate{}
	return c
}

// SetTable replaces the configured quotas.
func (c *ConnectionRates) SetTable(t *Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.table = t
}

// AdmitIP records a new connection from ip at nowMs. A positive throttle
// means the IP is over its connection_creation_rate: the connection is
// refused (and not counted), closed after throttleMs as Kafka does.
func (c *ConnectionRates) AdmitIP(ip string, nowMs int64) (throttleMs int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	bound, ok := c.mu.table.ResolveIP(ip)
	if !ok {
		return 0
	}
	c.sweepLocked(nowMs)
	r := c.mu.ips[ip]
	if r == nil {
		r = &ipRate{}
		c.mu.ips[ip] = r
	}
	r.lastUsedMs = nowMs
	r.rate.Record(c.windows, 1, nowMs)
	throttleMs = r.rate.throttleMs(c.windows, r.rate.PerSecond(c.windows, nowMs), bound, nowMs)
	if throttleMs > 0 {
		r.rate.Record(c.windows, -1, nowMs)
	}
	return throttleMs
}

// AdmitListener records a new connection on listener at nowMs against
// bound connections per second (max.connection.creation.rate; <= 0 or
// math.MaxInt32 is unlimited) and returns how long the acceptor should
// wait before it accepts the next one.
func (c *ConnectionRates) AdmitListener(listener string, bound float64, nowMs int64) (waitMs int64) {
	if bound <= 0 || bound >= math.MaxInt32 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.mu.listeners[listener]
	if r == nil {
		r = &Rate{}
		c.mu.listeners[listener] = r
	}
	r.Record(c.windows, 1, nowMs)
	return r.throttleMs(c.windows, r.PerSecond(c.windows, nowMs), bound, nowMs)
}

// TrackedIPs is how many IPs are being measured.
func (c *ConnectionRates) TrackedIPs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.ips)
}

// sweepLocked forgets IPs that connected last an hour ago.
func (c *ConnectionRates) sweepLocked(nowMs int64) {
	if nowMs-c.mu.lastSweepMs < expirySweepIntervalMs {
		return
	}
	c.mu.lastSweepMs = nowMs
	for ip, r := range c.mu.ips {
		if nowMs-r.lastUsedMs >= inactiveBucketExpiryMs {
			delete(c.mu.ips, ip)
		}
	}
}
