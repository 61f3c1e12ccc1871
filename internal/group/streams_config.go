package group

import (
	"fmt"
	"math"
)

// StreamsGroupConfig holds the settings of streams groups (KIP-1071). Field
// comments name the Kafka broker config each one mirrors;
// DefaultStreamsGroupConfig returns Kafka 4.4's defaults.
type StreamsGroupConfig struct {
	// Enabled is whether streams groups are served: the finalized
	// streams.version feature is at least 1. When it is not,
	// StreamsGroupHeartbeat answers UNSUPPORTED_VERSION, as Kafka does.
	Enabled bool
	// SessionTimeoutMs is group.streams.session.timeout.ms (45000): a
	// member that does not heartbeat for this long is removed.
	SessionTimeoutMs int32
	// HeartbeatIntervalMs is group.streams.heartbeat.interval.ms (5000),
	// returned to members in every heartbeat response.
	HeartbeatIntervalMs int32
	// MaxSize is group.streams.max.size (2147483647): members per group
	// (GROUP_MAX_SIZE_REACHED).
	MaxSize int32
	// NumStandbyReplicas is group.streams.num.standby.replicas (0): the
	// standby tasks of each stateful task.
	NumStandbyReplicas int32
	// InitialRebalanceDelayMs is group.streams.initial.rebalance.delay.ms
	// (3000): how long a new group waits for more members before its first
	// assignment; members are told ASSIGNMENT_DELAYED meanwhile.
	InitialRebalanceDelayMs int32
	// NumWarmupReplicas is group.streams.num.warmup.replicas (2): the most
	// warm-up tasks a group has at once.
	NumWarmupReplicas int32
	// AcceptableRecoveryLag is the streams group config
	// acceptable.recovery.lag (10000) members are told: the changelog lag
	// up to which a warm-up task counts as caught up.
	AcceptableRecoveryLag int64
	// TaskOffsetIntervalMs is group.streams.task.offset.interval.ms
	// (60000): how often members report their changelog offsets.
	TaskOffsetIntervalMs int32
}

// DefaultStreamsGroupConfig returns Kafka 4.4's defaults.
func DefaultStreamsGroupConfig() StreamsGroupConfig {
	return StreamsGroupConfig{
		Enabled:                 true,
		SessionTimeoutMs:        45000,
		HeartbeatIntervalMs:     5000,
		MaxSize:                 math.MaxInt32,
		NumStandbyReplicas:      0,
		NumWarmupReplicas:       2,
		InitialRebalanceDelayMs: 3000,
		AcceptableRecoveryLag:   10000,
		TaskOffsetIntervalMs:    60000,
	}
}

func (c StreamsGroupConfig) validate() error {
	switch {
	case c.SessionTimeoutMs < 1:
		return fmt.Errorf("%w: group.streams.session.timeout.ms must be at least 1", ErrInvalidConfig)
	case c.HeartbeatIntervalMs < 1 || c.HeartbeatIntervalMs >= c.SessionTimeoutMs:
		return fmt.Errorf("%w: group.streams.heartbeat.interval.ms must be at least 1 and less than group.streams.session.timeout.ms", ErrInvalidConfig)
	case c.MaxSize < 1:
		return fmt.Errorf("%w: group.streams.max.size must be at least 1", ErrInvalidConfig)
	case c.NumStandbyReplicas < 0:
		return fmt.Errorf("%w: group.streams.num.standby.replicas must not be negative", ErrInvalidConfig)
	case c.InitialRebalanceDelayMs < 0:
		return fmt.Errorf("%w: group.streams.initial.rebalance.delay.ms must not be negative", ErrInvalidConfig)
	case c.NumWarmupReplicas < 0:
		return fmt.Errorf("%w: group.streams.num.warmup.replicas must not be negative", ErrInvalidConfig)
	case c.TaskOffsetIntervalMs < 1:
		return fmt.Errorf("%w: group.streams.task.offset.interval.ms must be at least 1", ErrInvalidConfig)
	}
	return nil
}
