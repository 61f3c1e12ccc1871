package config

// ShareConfig is the broker's share-group configuration (KIP-932), Kafka's
// ShareGroupConfig and the group.share.* keys of GroupCoordinatorConfig.
type ShareConfig struct {
	Enable                   bool
	RecordLockDurationMs     int32
	MinRecordLockDurationMs  int32
	MaxRecordLockDurationMs  int32
	DeliveryCountLimit       int32
	PartitionMaxRecordLocks  int32
	MaxShareSessions         int32
	SessionTimeoutMs         int32
	MinSessionTimeoutMs      int32
	MaxSessionTimeoutMs      int32
	HeartbeatIntervalMs      int32
	MinHeartbeatIntervalMs   int32
	MaxHeartbeatIntervalMs   int32
	MaxSize                  int32
	Assignors                []string
	FetchPurgatoryPurgeEvery int32
}

// shareBrokerKeys are the group.share.* keys with Kafka 4.4's defaults and
// ranges.
var shareBrokerKeys = []Key{
	{Name: "group.share.enable", Type: typeBoolean, Default: "true",
		Doc:         "Whether share groups (KIP-932) are served: ShareGroupHeartbeat, ShareFetch, ShareAcknowledge and the share admin APIs. Kafka turns them on with the share.version feature; Samsa serves them unless this is false.",
		brokerField: func(b *Broker) any { return &b.Share.Enable }},
	{Name: "group.share.record.lock.duration.ms", Type: typeInt, Default: "30000", Check: between(1000, 3600000),
		Doc:         "How long a record acquired by a share consumer stays locked to it before it is made available again.",
		brokerField: func(b *Broker) any { return &b.Share.RecordLockDurationMs }},
	{Name: "group.share.min.record.lock.duration.ms", Type: typeInt, Default: "15000", Check: between(1000, 30000),
		Doc:         "The smallest record lock duration a share group may be configured with.",
		brokerField: func(b *Broker) any { return &b.Share.MinRecordLockDurationMs }},
	{Name: "group.share.max.record.lock.duration.ms", Type: typeInt, Default: "60000", Check: between(30000, 3600000),
		Doc:         "The largest record lock duration a share group may be configured with.",
		brokerField: func(b *Broker) any { return &b.Share.MaxRecordLockDurationMs }},
	{Name: "group.share.delivery.count.limit", Type: typeInt, Default: "5", Check: between(2, 10),
		Doc:         "The maximum number of delivery attempts for a record delivered to a share group; a record released or timed out that many times is archived.",
		brokerField: func(b *Broker) any { return &b.Share.DeliveryCountLimit }},
	{Name: "group.share.partition.max.record.locks", Type: typeInt, Default: "2000", Check: between(100, 10000),
		Doc:         "Share-group record lock limit per share-partition: the most offsets in flight between the share-partition start and end offsets.",
		brokerField: func(b *Broker) any { return &b.Share.PartitionMaxRecordLocks }},
	{Name: "group.share.max.share.sessions", Type: typeInt, Default: "2000", Check: atLeast(1),
		Doc:         "The maximum number of share sessions per broker; more answer SHARE_SESSION_LIMIT_REACHED.",
		brokerField: func(b *Broker) any { return &b.Share.MaxShareSessions }},
	{Name: "group.share.session.timeout.ms", Type: typeInt, Default: "45000", Check: atLeast(1),
		Doc:         "How long a share group member may go without a heartbeat before it is removed.",
		brokerField: func(b *Broker) any { return &b.Share.SessionTimeoutMs }},
	{Name: "group.share.min.session.timeout.ms", Type: typeInt, Default: "45000", Check: atLeast(1),
		Doc:         "The smallest session timeout a share group may be configured with.",
		brokerField: func(b *Broker) any { return &b.Share.MinSessionTimeoutMs }},
	{Name: "group.share.max.session.timeout.ms", Type: typeInt, Default: "60000", Check: atLeast(1),
		Doc:         "The largest session timeout a share group may be configured with.",
		brokerField: func(b *Broker) any { return &b.Share.MaxSessionTimeoutMs }},
	{Name: "group.share.heartbeat.interval.ms", Type: typeInt, Default: "5000", Check: atLeast(1),
		Doc:         "The heartbeat interval share group members are told to use.",
		brokerField: func(b *Broker) any { return &b.Share.HeartbeatIntervalMs }},
	{Name: "group.share.min.heartbeat.interval.ms", Type: typeInt, Default: "5000", Check: atLeast(1),
		Doc:         "The smallest heartbeat interval a share group may be configured with.",
		brokerField: func(b *Broker) any { return &b.Share.MinHeartbeatIntervalMs }},
	{Name: "group.share.max.heartbeat.interval.ms", Type: typeInt, Default: "15000", Check: atLeast(1),
		Doc:         "The largest heartbeat interval a share group may be configured with.",
		brokerField: func(b *Broker) any { return &b.Share.MaxHeartbeatIntervalMs }},
	{Name: "group.share.max.size", Type: typeInt, Default: "200", Check: between(10, 1000),
		Doc:         "The maximum number of members of one share group; more answer GROUP_MAX_SIZE_REACHED.",
		brokerField: func(b *Broker) any { return &b.Share.MaxSize }},
	{Name: "group.share.assignors", Type: typeList, Default: "simple", Check: allOf(nonEmptyList, listOf("simple", "org.apache.kafka.coordinator.group.assignor.SimpleAssignor")),
		Doc:         "The server-side assignors of share groups; Kafka has only the simple assignor.",
		brokerField: func(b *Broker) any { return &b.Share.Assignors }},
	{Name: "share.fetch.purgatory.purge.interval.requests", Type: typeInt, Default: "1000",
		Doc:         "Kafka's purge interval of the share fetch purgatory. Accepted for compatibility; parked share fetches here leave the purgatory when answered.",
		brokerField: func(b *Broker) any { return &b.Share.FetchPurgatoryPurgeEvery }},
}

// validateShare checks the relations Kafka's ShareGroupConfig and
// GroupCoordinatorConfig require of the group.share.* keys.
func (b *Broker) validateShare() error {
	s := b.Share
	switch {
	case s.RecordLockDurationMs < s.MinRecordLockDurationMs || s.RecordLockDurationMs > s.MaxRecordLockDurationMs:
		return relation("group.share.record.lock.duration.ms", "group.share.record.lock.duration.ms must be between group.share.min.record.lock.duration.ms and group.share.max.record.lock.duration.ms")
	case s.SessionTimeoutMs < s.MinSessionTimeoutMs || s.SessionTimeoutMs > s.MaxSessionTimeoutMs:
		return relation("group.share.session.timeout.ms", "group.share.session.timeout.ms must be between group.share.min.session.timeout.ms and group.share.max.session.timeout.ms")
	case s.HeartbeatIntervalMs < s.MinHeartbeatIntervalMs || s.HeartbeatIntervalMs > s.MaxHeartbeatIntervalMs:
		return relation("group.share.heartbeat.interval.ms", "group.share.heartbeat.interval.ms must be between group.share.min.heartbeat.interval.ms and group.share.max.heartbeat.interval.ms")
	case s.HeartbeatIntervalMs >= s.SessionTimeoutMs:
		return relation("group.share.heartbeat.interval.ms", "group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms")
	}
	return nil
}
