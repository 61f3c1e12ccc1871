package group

import (
	"fmt"
	"math"
	"slices"
)

// ConsumerGroupConfig holds the settings of consumer-protocol (KIP-848)
// groups. Field comments name the Kafka broker config each one mirrors;
// DefaultConsumerGroupConfig returns Kafka's defaults.
type ConsumerGroupConfig struct {
	// Enabled is whether "consumer" is among
	// group.coordinator.rebalance.protocols (it is by default). When it is
	// not, ConsumerGroupHeartbeat answers UNSUPPORTED_VERSION, as Kafka does,
	// and clients fall back to the classic protocol.
	Enabled bool
	// SessionTimeoutMs is group.consumer.session.timeout.ms (45000): a
	// member that does not heartbeat for this long is removed.
	SessionTimeoutMs int32
	// HeartbeatIntervalMs is group.consumer.heartbeat.interval.ms (5000),
	// returned to members in every heartbeat response.
	HeartbeatIntervalMs int32
	// MaxSize is group.consumer.max.size (2147483647): members per group
	// (GROUP_MAX_SIZE_REACHED).
	MaxSize int32
	// Assignors is group.consumer.assignors ("uniform,range"): the server
	// side assignors members may choose with ServerAssignor; the first is
	// used when no member chooses one. Kafka's class names of the two
	// built-in assignors are accepted as aliases.
	Assignors []string
}

// Names of the server-side assignors, and the Java class names Kafka's
// group.consumer.assignors also accepts for them.
const (
	assignorUniform      = "uniform"
	assignorRange        = "range"
	assignorUniformClass = "org.apache.kafka.coordinator.group.assignor.UniformAssignor"
	assignorRangeClass   = "org.apache.kafka.coordinator.group.assignor.RangeAssignor"
)

// regexRefreshIntervalMs bounds how often a group's regular expressions are
// matched against every topic again (Kafka's REGEX_BATCH_REFRESH_INTERVAL_MS),
// so that a group subscribed by regex costs one scan of the topic list per
// ten seconds at most, however many members heartbeat.
const regexRefreshIntervalMs = 10000

// maxRegexBytes bounds a subscribed regular expression; longer ones answer
// INVALID_REGULAR_EXPRESSION rather than costing a compile.
const maxRegexBytes = 4096

// DefaultConsumerGroupConfig returns Kafka's defaults.
func DefaultConsumerGroupConfig() ConsumerGroupConfig {
	return ConsumerGroupConfig{
		Enabled:             true,
		SessionTimeoutMs:    45000,
		HeartbeatIntervalMs: 5000,
		MaxSize:             math.MaxInt32,
		Assignors:           []string{assignorUniform, assignorRange},
	}
}

func (c ConsumerGroupConfig) validate() error {
	switch {
	case c.SessionTimeoutMs < 1:
		return fmt.Errorf("%w: group.consumer.session.timeout.ms must be at least 1", ErrInvalidConfig)
	case c.HeartbeatIntervalMs < 1 || c.HeartbeatIntervalMs >= c.SessionTimeoutMs:
		return fmt.Errorf("%w: group.consumer.heartbeat.interval.ms must be at least 1 and less than group.consumer.session.timeout.ms", ErrInvalidConfig)
	case c.MaxSize < 1:
		return fmt.Errorf("%w: group.consumer.max.size must be at least 1", ErrInvalidConfig)
	case len(c.Assignors) == 0:
		return fmt.Errorf("%w: group.consumer.assignors must name at least one assignor", ErrInvalidConfig)
	}
	for _, name := range c.Assignors {
		if canonicalAssignor(name) == "" {
			return fmt.Errorf("%w: group.consumer.assignors: unknown assignor %q (supported: uniform, range)", ErrInvalidConfig, name)
		}
	}
	return nil
}

// canonicalAssignor returns the short name of a built-in assignor named by
// its short or class name, or "".
func canonicalAssignor(name string) string {
	switch name {
	case assignorUniform, assignorUniformClass:
		return assignorUniform
	case assignorRange, assignorRangeClass:
		return assignorRange
	}
	return ""
}

// assignorNames returns the configured assignors by short name, in order.
func (c ConsumerGroupConfig) assignorNames() []string {
	out := make([]string, 0, len(c.Assignors))
	for _, name := range c.Assignors {
		if n := canonicalAssignor(name); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// TopicMetadata is what consumer-protocol groups need of the cluster's
// topics beyond TopicResolver: partition counts for the assignor and every
// topic name for regular expression subscriptions. Config.Topics must
// implement it for consumer groups to see any topic; without it, every
// subscribed topic counts as missing and nothing is assigned.
type TopicMetadata interface {
	TopicResolver
	// TopicInfo returns the ID and partition count of the named topic.
	TopicInfo(name string) (id [16]byte, partitions int32, ok bool)
	// TopicNames returns the names of every topic, sorted.
	TopicNames() []string
}

// topicMetadata returns Config.Topics as TopicMetadata, or nil.
func (c Config) topicMetadata() TopicMetadata {
	tm, _ := c.Topics.(TopicMetadata)
	return tm
}
