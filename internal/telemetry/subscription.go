package telemetry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The keys of a CLIENT_METRICS config resource, as Kafka names them.
const (
	MetricsConfig    = "metrics"
	IntervalMsConfig = "interval.ms"
	MatchConfig      = "match"
)

// The client attributes a match pattern may name.
const (
	ClientInstanceID      = "client_instance_id"
	ClientID              = "client_id"
	ClientSoftwareName    = "client_software_name"
	ClientSoftwareVersion = "client_software_version"
	ClientSourceAddress   = "client_source_address"
	ClientSourcePort      = "client_source_port"
)

// matchAttributes are the attributes a match pattern may name.
var matchAttributes = []string{ClientInstanceID, ClientID, ClientSoftwareName, ClientSoftwareVersion, ClientSourceAddress, ClientSourcePort}

const (
	// AllMetrics in a subscription's metrics subscribes every metric.
	AllMetrics = "*"
	// DefaultIntervalMs is interval.ms's default, 5 minutes.
	DefaultIntervalMs = 300000
	// minIntervalMs and maxIntervalMs bound interval.ms, as Kafka does.
	minIntervalMs = 100
	maxIntervalMs = 3600000
)

// Errors of a subscription's configs: ErrInvalidRequest answers
// INVALID_REQUEST (an unknown key, an empty name, an interval out of
// range), ErrInvalidConfig INVALID_CONFIG (a value that does not parse, a
// bad match pattern), as Kafka's ClientMetricsConfigs does.
var (
	ErrInvalidRequest = errors.New("telemetry: invalid request")
	ErrInvalidConfig  = errors.New("telemetry: invalid config")
)

// Subscription is one client-metrics config resource: which metrics the
// clients it matches push, and how often.
type Subscription struct {
	Name string
	// Metrics are metric name prefixes; AllMetrics alone for every metric,
	// empty for none.
	Metrics    []string
	IntervalMs int32
	// Match maps client attributes to the pattern their value must match
	// whole; empty matches every client.
	Match map[string]*regexp.Regexp
}

// Matches reports whether a client with attrs is subscribed.
func (s *Subscription) Matches(attrs map[string]string) bool {
	for attr, pattern := range s.Match {
		v, ok := attrs[attr]
		if !ok || !pattern.MatchString(v) {
			return false
		}
	}
	return true
}

// ParseSubscription checks a subscription's stored configs and parses
// them. Keys left out take their defaults.
func ParseSubscription(name string, configs map[string]string) (Subscription, error) {
	if name == "" {
		return Subscription{}, fmt.Errorf("%w: Subscription name can't be empty", ErrInvalidRequest)
	}
	for key := range configs {
		if key != MetricsConfig && key != IntervalMsConfig && key != MatchConfig {
			return Subscription{}, fmt.Errorf("%w: Unknown client metrics configuration: %s", ErrInvalidRequest, key)
		}
	}
	s := Subscription{Name: name, Metrics: parseList(configs[MetricsConfig]), IntervalMs: DefaultIntervalMs}
	if v, ok := configs[IntervalMsConfig]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return Subscription{}, fmt.Errorf("%w: Invalid value %s for configuration %s: Not a number of type INT", ErrInvalidConfig, v, IntervalMsConfig)
		}
		if n < minIntervalMs || n > maxIntervalMs {
			return Subscription{}, fmt.Errorf("%w: Invalid value %d for %s, interval must be between 100 and 3600000 (1 hour)", ErrInvalidRequest, n, IntervalMsConfig)
		}
		s.IntervalMs = int32(n)
	}
	match, err := parseMatch(parseList(configs[MatchConfig]))
	if err != nil {
		return Subscription{}, err
	}
	s.Match = match
	return s, nil
}

// parseList splits a LIST value at commas, trimming each element and
// dropping empty ones, as Kafka's ConfigDef parses LIST.
func parseList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// parseMatch parses attribute=pattern pairs. A pattern matches an
// attribute's whole value, with RE2 syntax (Kafka compiles them with RE2/J).
func parseMatch(pairs []string) (map[string]*regexp.Regexp, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string]*regexp.Regexp, len(pairs))
	for _, pair := range pairs {
		parts := strings.Split(pair, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("%w: Illegal client matching pattern: %s", ErrInvalidConfig, pair)
		}
		attr := strings.TrimSpace(parts[0])
		if !slices.Contains(matchAttributes, attr) {
			return nil, fmt.Errorf("%w: Illegal client matching pattern: %s", ErrInvalidConfig, pair)
		}
		re, err := regexp.Compile(`^(?:` + strings.TrimSpace(parts[1]) + `)$`)
		if err != nil {
			return nil, fmt.Errorf("%w: Illegal client matching pattern: %s", ErrInvalidConfig, pair)
		}
		out[attr] = re
	}
	return out, nil
}

// AlterOp is one IncrementalAlterConfigs operation on a subscription.
type AlterOp struct {
	Name  string
	Op    kmsg.IncrementalAlterConfigOp
	Value *string
}

// ApplyIncremental applies ops to a subscription's current configs: SET,
// DELETE, and APPEND or SUBTRACT on the LIST keys metrics and match. The
// result is not validated; ParseSubscription does that.
func ApplyIncremental(current map[string]string, ops []AlterOp) (map[string]string, error) {
	seen := make(map[string]bool, len(ops))
	for _, op := range ops {
		if seen[op.Name] {
			return nil, fmt.Errorf("%w: Error due to duplicate config keys", ErrInvalidRequest)
		}
		seen[op.Name] = true
		if op.Op != kmsg.IncrementalAlterConfigOpDelete && op.Value == nil {
			return nil, fmt.Errorf("%w: Null value not supported for : %s", ErrInvalidRequest, op.Name)
		}
	}
	out := make(map[string]string, len(current)+len(ops))
	for k, v := range current {
		out[k] = v
	}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			out[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if op.Name != MetricsConfig && op.Name != MatchConfig {
				return nil, fmt.Errorf("%w: Can't %s to key %s because its type is not LIST.", ErrInvalidConfig, op.Op, op.Name)
			}
			elements := parseList(out[op.Name])
			for _, e := range parseList(*op.Value) {
				if op.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(elements, e) {
						elements = append(elements, e)
					}
				} else {
					elements = slices.DeleteFunc(elements, func(x string) bool { return x == e })
				}
			}
			out[op.Name] = strings.Join(elements, ",")
		default:
			return nil, fmt.Errorf("%w: Unknown operations type %d", ErrInvalidRequest, int8(op.Op))
		}
	}
	return out, nil
}
