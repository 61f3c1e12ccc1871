package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group configs (Kafka's GroupConfig, KIP-848 and KIP-932): dynamic
// overrides per group id, set with IncrementalAlterConfigs on GROUP
// resources. Each defaults to a broker key; integer ones must lie within
// the broker's min/max keys for it.
type groupKey struct {
	name string
	doc  string
	// value is the broker's default.
	value func(b *Broker) string
	// bounds are the broker's allowed range, for integer keys.
	bounds func(b *Broker) (lo, hi int64)
	// check validates other values.
	check func(string) error
}

var groupKeys = []groupKey{
	{name: "consumer.session.timeout.ms", doc: "The session timeout of the group's consumer-protocol members.",
		value: func(b *Broker) string { return strconv.Itoa(int(b.GroupConsumerSessionTimeoutMs)) },
		bounds: func(b *Broker) (int64, int64) {
			return int64(b.GroupConsumerMinSessionTimeoutMs), int64(b.GroupConsumerMaxSessionTimeoutMs)
		}},
	{name: "consumer.heartbeat.interval.ms", doc: "The heartbeat interval of the group's consumer-protocol members.",
		value: func(b *Broker) string { return strconv.Itoa(int(b.GroupConsumerHeartbeatIntervalMs)) },
		bounds: func(b *Broker) (int64, int64) {
			return int64(b.GroupConsumerMinHeartbeatIntervalMs), int64(b.GroupConsumerMaxHeartbeatIntervalMs)
		}},
	{name: "share.session.timeout.ms", doc: "The session timeout of the share group's members.",
		value: func(b *Broker) string { return strconv.Itoa(int(b.Share.SessionTimeoutMs)) },
		bounds: func(b *Broker) (int64, int64) {
			return int64(b.Share.MinSessionTimeoutMs), int64(b.Share.MaxSessionTimeoutMs)
		}},
	{name: "share.heartbeat.interval.ms", doc: "The heartbeat interval of the share group's members.",
		value: func(b *Broker) string { return strconv.Itoa(int(b.Share.HeartbeatIntervalMs)) },
		bounds: func(b *Broker) (int64, int64) {
			return int64(b.Share.MinHeartbeatIntervalMs), int64(b.Share.MaxHeartbeatIntervalMs)
		}},
	{name: "share.record.lock.duration.ms", doc: "How long a record acquired by a member of the share group stays locked to it.",
		value: func(b *Broker) string { return strconv.Itoa(int(b.Share.RecordLockDurationMs)) },
		bounds: func(b *Broker) (int64, int64) {
			return int64(b.Share.MinRecordLockDurationMs), int64(b.Share.MaxRecordLockDurationMs)
		}},
	{name: "share.auto.offset.reset", doc: "Where a share-partition of the group starts when first fetched: latest (the log end), earliest (the log start).",
		value: func(*Broker) string { return "latest" },
		check: func(v string) error {
			if v != "latest" && v != "earliest" {
				return fmt.Errorf("must be latest or earliest")
			}
			return nil
		}},
	{name: "share.isolation.level", doc: "Whether the share group reads transactional records before they commit (read_uncommitted) or only committed ones (read_committed).",
		value: func(*Broker) string { return "read_uncommitted" },
		check: func(v string) error {
			if v != "read_uncommitted" && v != "read_committed" {
				return fmt.Errorf("must be read_uncommitted or read_committed")
			}
			return nil
		}},
}

func groupKeyNamed(name string) *groupKey {
	for i := range groupKeys {
		if groupKeys[i].name == name {
			return &groupKeys[i]
		}
	}
	return nil
}

// ValidateGroupConfigs checks a group's overrides: known names, values in
// range (INVALID_CONFIG otherwise).
func (b *Broker) ValidateGroupConfigs(overrides map[string]string) error {
	names := make([]string, 0, len(overrides))
	for name := range overrides {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		k := groupKeyNamed(name)
		if k == nil {
			return &Error{Kind: ErrUnknownKey, Key: name, Message: "Unknown group config name: " + name}
		}
		v := strings.TrimSpace(overrides[name])
		if k.bounds != nil {
			n, err := strconv.ParseInt(v, 10, 32)
			lo, hi := k.bounds(b)
			if err != nil || n < lo || n > hi {
				return &Error{Kind: ErrInvalidValue, Key: name, Message: fmt.Sprintf("Invalid value %s for configuration %s: must be an integer between %d and %d", v, name, lo, hi)}
			}
			continue
		}
		if err := k.check(v); err != nil {
			return &Error{Kind: ErrInvalidValue, Key: name, Message: fmt.Sprintf("Invalid value %s for configuration %s: %v", v, name, err)}
		}
	}
	return nil
}

// GroupValue is a group's effective value of a group config: its override
// or the broker's default.
func (b *Broker) GroupValue(overrides map[string]string, name string) string {
	if v, ok := overrides[name]; ok {
		return strings.TrimSpace(v)
	}
	if k := groupKeyNamed(name); k != nil {
		return k.value(b)
	}
	return ""
}

// DescribeGroup lists every group config with its effective value.
func (b *Broker) DescribeGroup(overrides map[string]string) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(groupKeys))
	for _, k := range groupKeys {
		value := b.GroupValue(overrides, k.name)
		source := kmsg.ConfigSourceDefaultConfig
		if _, ok := overrides[k.name]; ok {
			source = kmsg.ConfigSourceGroupConfig
		}
		typ := kmsg.ConfigTypeString
		if k.bounds != nil {
			typ = kmsg.ConfigTypeInt
		}
		out = append(out, ConfigEntry{Name: k.name, Value: &value, Source: source, Type: typ, Doc: k.doc})
	}
	return out
}
