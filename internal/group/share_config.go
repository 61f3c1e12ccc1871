package group

import "fmt"

// ShareGroupConfig configures share groups (KIP-932), with Kafka's broker
// config names and defaults.
type ShareGroupConfig struct {
	// Enabled: share groups are served. Kafka gates them on the
	// share.version feature; here group.share.enable or a finalized
	// share.version turns them on (the API handler checks the feature).
	Enabled bool
	// SessionTimeoutMs is group.share.session.timeout.ms (45000).
	SessionTimeoutMs int32
	// HeartbeatIntervalMs is group.share.heartbeat.interval.ms (5000).
	HeartbeatIntervalMs int32
	// MaxSize is group.share.max.size (200): members per share group.
	MaxSize int32
	// OnDeleted, when set, is told the id of a share group deleted by
	// DeleteGroups, so its share-partition state can be dropped.
	OnDeleted func(group string)
	// OnMemberLeft, when set, is told of a member that left or was
	// fenced, so the records it acquired can be released at once.
	OnMemberLeft func(group, member string)
}

// DefaultShareGroupConfig returns Kafka's defaults.
func DefaultShareGroupConfig() ShareGroupConfig {
	return ShareGroupConfig{Enabled: true, SessionTimeoutMs: 45000, HeartbeatIntervalMs: 5000, MaxSize: 200}
}

func (c ShareGroupConfig) validate() error {
	switch {
	case c.SessionTimeoutMs < 1:
		return fmt.Errorf("%w: group.share.session.timeout.ms must be at least 1", ErrInvalidConfig)
	case c.HeartbeatIntervalMs < 1 || c.HeartbeatIntervalMs >= c.SessionTimeoutMs:
		return fmt.Errorf("%w: group.share.heartbeat.interval.ms must be at least 1 and below group.share.session.timeout.ms", ErrInvalidConfig)
	case c.MaxSize < 1:
		return fmt.Errorf("%w: group.share.max.size must be at least 1", ErrInvalidConfig)
	}
	return nil
}
