package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// quotaBrokerKeys are the broker keys of client quotas (KIP-13, KIP-124,
// KIP-599) and connection limits (KIP-402, KIP-612): how rates are
// measured, and how fast and how many connections a listener and an IP
// may open. The quotas themselves are set per user, client id and IP with
// AlterClientQuotas.
var quotaBrokerKeys = []Key{
	{Name: "quota.window.num", Type: typeInt, Default: "11", Check: atLeast(1),
		Doc: "The number of samples to retain in memory for client quotas."},
	{Name: "quota.window.size.seconds", Type: typeInt, Default: "1", Check: atLeast(1),
		Doc: "The time span of each sample for client quotas."},
	{Name: "controller.quota.window.num", Type: typeInt, Default: "11", Check: atLeast(1),
		Doc: "The number of samples to retain in memory for controller mutation quotas."},
	{Name: "controller.quota.window.size.seconds", Type: typeInt, Default: "1", Check: atLeast(1),
		Doc: "The time span of each sample for controller mutations quotas."},
	{Name: "max.connection.creation.rate", Type: typeInt, Default: intMax, Check: atLeast(0), Dynamic: true,
		Doc: "The maximum connection creation rate the broker allows on each listener, per second; " +
			"the acceptor waits before it accepts a connection over it. listener.name.<listener>.max.connection.creation.rate sets one listener's."},
	{Name: "max.connections.per.ip.overrides", Type: typeString, Default: "", Check: connectionOverrides, Dynamic: true,
		Doc: "A comma-separated list of per-ip or hostname overrides to the default maximum number of connections, e.g. hostName:100,127.0.0.1:200."},
}

// connectionOverrides checks max.connections.per.ip.overrides.
func connectionOverrides(value string) string {
	if _, err := ParseConnectionOverrides(value); err != nil {
		return err.Error()
	}
	return ""
}

// ParseConnectionOverrides parses max.connections.per.ip.overrides: host
// or IP to the most connections it may hold.
func ParseConnectionOverrides(value string) (map[string]int, error) {
	out := map[string]int{}
	if strings.TrimSpace(value) == "" {
		return out, nil
	}
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		i := strings.LastIndex(entry, ":")
		if i <= 0 {
			return nil, fmt.Errorf("Invalid format of max.connections.per.ip.overrides: %s", entry)
		}
		n, err := strconv.Atoi(strings.TrimSpace(entry[i+1:]))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("Invalid connection count in max.connections.per.ip.overrides: %s", entry)
		}
		out[strings.TrimSpace(entry[:i])] = n
	}
	return out, nil
}

// intKey is the effective value of an INT key, its default if unparseable.
func (b *Broker) intKey(name string, fallback int) int {
	v, ok := b.Get(name)
	if !ok {
		return fallback
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fallback
	}
	return n
}

// QuotaWindowNum is quota.window.num.
func (b *Broker) QuotaWindowNum() int { return b.intKey("quota.window.num", 11) }

// QuotaWindowSizeSeconds is quota.window.size.seconds.
func (b *Broker) QuotaWindowSizeSeconds() int { return b.intKey("quota.window.size.seconds", 1) }

// ControllerQuotaWindowNum is controller.quota.window.num.
func (b *Broker) ControllerQuotaWindowNum() int { return b.intKey("controller.quota.window.num", 11) }

// ControllerQuotaWindowSizeSeconds is controller.quota.window.size.seconds.
func (b *Broker) ControllerQuotaWindowSizeSeconds() int {
	return b.intKey("controller.quota.window.size.seconds", 1)
}

// MaxConnectionCreationRate is max.connection.creation.rate for listener:
// its listener.name.<listener>. override, else the broker's; 0 when
// unlimited.
func (b *Broker) MaxConnectionCreationRate(listener string) int {
	rate := b.intKey("max.connection.creation.rate", math.MaxInt32)
	if v, ok := b.Get("listener.name." + strings.ToLower(listener) + ".max.connection.creation.rate"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			rate = n
		}
	}
	if rate >= math.MaxInt32 {
		return 0
	}
	return rate
}

// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides.
func (b *Broker) MaxConnectionsPerIPOverrides() map[string]int {
	v, _ := b.Get("max.connections.per.ip.overrides")
	out, err := ParseConnectionOverrides(v)
	if err != nil {
		return map[string]int{}
	}
	return out
}
