package group

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
)

// Config holds the group coordinator's settings. Field comments name the
// Kafka broker config each one mirrors; DefaultConfig returns Kafka's defaults.
type Config struct {
	// OffsetsTopicNumPartitions is offsets.topic.num.partitions (50): the
	// number of __consumer_offsets partitions groups are spread over.
	OffsetsTopicNumPartitions int32
	// GroupMinSessionTimeoutMs is group.min.session.timeout.ms (6000).
	GroupMinSessionTimeoutMs int32
	// GroupMaxSessionTimeoutMs is group.max.session.timeout.ms (1800000).
	GroupMaxSessionTimeoutMs int32
	// GroupInitialRebalanceDelayMs is group.initial.rebalance.delay.ms (3000):
	// how long the first rebalance of an empty group waits for more members,
	// extended by this much (up to the rebalance timeout) each time one joins.
	GroupInitialRebalanceDelayMs int32
	// GroupMaxSize is group.max.size (2147483647): members per group.
	GroupMaxSize int32
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes (4096): the longest
	// metadata string an offset commit may carry (OFFSET_METADATA_TOO_LARGE).
	OffsetMetadataMaxBytes int32
	// OffsetsRetentionMinutes is offsets.retention.minutes (10080): committed
	// offsets of a group that has been empty this long are deleted.
	OffsetsRetentionMinutes int32
	// OffsetsRetentionCheckIntervalMs is offsets.retention.check.interval.ms
	// (600000): how often expired offsets are looked for.
	OffsetsRetentionCheckIntervalMs int64
	// NewMemberJoinTimeoutMs bounds how long a new member's parked JoinGroup
	// waits (Kafka's fixed classic new-member join timeout, 300000).
	NewMemberJoinTimeoutMs int32
	// ConsumerGroup configures consumer-protocol (KIP-848) groups.
	ConsumerGroup ConsumerGroupConfig
	// StreamsGroup configures streams groups (KIP-1071).
	StreamsGroup StreamsGroupConfig
	// ShareGroup configures share groups (KIP-932).
	ShareGroup ShareGroupConfig

	// Topics resolves topic IDs for OffsetCommit and OffsetFetch v10+, which
	// name topics by ID. Nil means no topic ID resolves (UNKNOWN_TOPIC_ID).
	Topics TopicResolver
	// NewUUID returns a fresh random UUID string for member ids. Nil uses
	// crypto/rand (a version 4 UUID, as Java's UUID.randomUUID).
	NewUUID func() string
	// Logger receives the coordinator's logs. Nil uses slog.Default().
	Logger *slog.Logger
}

// TopicResolver maps topic IDs to names and back, from the broker's metadata.
type TopicResolver interface {
	TopicName(id [16]byte) (string, bool)
	TopicID(name string) ([16]byte, bool)
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		OffsetsTopicNumPartitions:       50,
		GroupMinSessionTimeoutMs:        6000,
		GroupMaxSessionTimeoutMs:        1800000,
		GroupInitialRebalanceDelayMs:    3000,
		GroupMaxSize:                    math.MaxInt32,
		OffsetMetadataMaxBytes:          4096,
		OffsetsRetentionMinutes:         10080,
		OffsetsRetentionCheckIntervalMs: 600000,
		NewMemberJoinTimeoutMs:          300000,
		ConsumerGroup:                   DefaultConsumerGroupConfig(),
		StreamsGroup:                    DefaultStreamsGroupConfig(),
		ShareGroup:                      DefaultShareGroupConfig(),
	}
}

// ErrInvalidConfig is returned by Validate for settings out of range.
var ErrInvalidConfig = errors.New("group: invalid config")

// Validate reports settings Kafka would refuse.
func (c Config) Validate() error {
	switch {
	case c.OffsetsTopicNumPartitions < 1:
		return fmt.Errorf("%w: offsets.topic.num.partitions must be at least 1", ErrInvalidConfig)
	case c.GroupMinSessionTimeoutMs < 0 || c.GroupMaxSessionTimeoutMs < c.GroupMinSessionTimeoutMs:
		return fmt.Errorf("%w: group.max.session.timeout.ms must be at least group.min.session.timeout.ms", ErrInvalidConfig)
	case c.GroupInitialRebalanceDelayMs < 0:
		return fmt.Errorf("%w: group.initial.rebalance.delay.ms must not be negative", ErrInvalidConfig)
	case c.GroupMaxSize < 1:
		return fmt.Errorf("%w: group.max.size must be at least 1", ErrInvalidConfig)
	case c.OffsetMetadataMaxBytes < 0:
		return fmt.Errorf("%w: offset.metadata.max.bytes must not be negative", ErrInvalidConfig)
	case c.OffsetsRetentionMinutes < 1:
		return fmt.Errorf("%w: offsets.retention.minutes must be at least 1", ErrInvalidConfig)
	case c.OffsetsRetentionCheckIntervalMs < 1:
		return fmt.Errorf("%w: offsets.retention.check.interval.ms must be at least 1", ErrInvalidConfig)
	case c.NewMemberJoinTimeoutMs < 1:
		return fmt.Errorf("%w: new member join timeout must be at least 1ms", ErrInvalidConfig)
	}
	if err := c.ShareGroup.validate(); err != nil {
		return err
	}
	if err := c.ConsumerGroup.validate(); err != nil {
		return err
	}
	return c.StreamsGroup.validate()
}

func (c Config) offsetsRetentionMs() int64 { return int64(c.OffsetsRetentionMinutes) * 60 * 1000 }

func (c Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func (c Config) uuid() string {
	if c.NewUUID != nil {
		return c.NewUUID()
	}
	return randomUUID()
}

// randomUUID returns a version 4 UUID in its canonical 36-character form.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
