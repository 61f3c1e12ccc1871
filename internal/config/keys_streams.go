package config

// StreamsGroupConfig holds the broker keys of streams groups (KIP-1071),
// Kafka 4.4's group.streams.* keys with Kafka's defaults.
type StreamsGroupConfig struct {
	SessionTimeoutMs        int32 // group.streams.session.timeout.ms
	MinSessionTimeoutMs     int32 // group.streams.min.session.timeout.ms
	MaxSessionTimeoutMs     int32 // group.streams.max.session.timeout.ms
	HeartbeatIntervalMs     int32 // group.streams.heartbeat.interval.ms
	MaxSize                 int32 // group.streams.max.size
	NumStandbyReplicas      int32 // group.streams.num.standby.replicas
	MaxStandbyReplicas      int32 // group.streams.max.standby.replicas
	NumWarmupReplicas       int32 // group.streams.num.warmup.replicas
	InitialRebalanceDelayMs int32 // group.streams.initial.rebalance.delay.ms
	TaskOffsetIntervalMs    int32 // group.streams.task.offset.interval.ms
}

// streamsBrokerKeys are the broker keys of streams groups.
var streamsBrokerKeys = []Key{
	{Name: "group.streams.session.timeout.ms", Type: typeInt, Default: "45000", Check: atLeast(1),
		Doc:         "The timeout to detect client failures when using the streams group protocol.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.SessionTimeoutMs }},
	{Name: "group.streams.min.session.timeout.ms", Type: typeInt, Default: "45000", Check: atLeast(1),
		Doc:         "The minimum session timeout of streams group members.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.MinSessionTimeoutMs }},
	{Name: "group.streams.max.session.timeout.ms", Type: typeInt, Default: "60000", Check: atLeast(1),
		Doc:         "The maximum session timeout of streams group members.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.MaxSessionTimeoutMs }},
	{Name: "group.streams.heartbeat.interval.ms", Type: typeInt, Default: "5000", Check: atLeast(1),
		Doc:         "The heartbeat interval given to the members of streams groups.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.HeartbeatIntervalMs }},
	{Name: "group.streams.max.size", Type: typeInt, Default: intMax, Check: atLeast(1),
		Doc:         "The maximum number of streams clients that a single streams group can accommodate.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.MaxSize }},
	{Name: "group.streams.num.standby.replicas", Type: typeInt, Default: "0", Check: atLeast(0),
		Doc:         "The number of standby replicas for each task of a streams group.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.NumStandbyReplicas }},
	{Name: "group.streams.max.standby.replicas", Type: typeInt, Default: "2", Check: atLeast(0),
		Doc:         "The maximum allowed number of standby replicas of a streams group's tasks.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.MaxStandbyReplicas }},
	{Name: "group.streams.num.warmup.replicas", Type: typeInt, Default: "2", Check: atLeast(0),
		Doc:         "The maximum number of warmup task replicas of a streams group: tasks restoring their state on the member they are to move to while their current owner keeps running them.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.NumWarmupReplicas }},
	{Name: "group.streams.initial.rebalance.delay.ms", Type: typeInt, Default: "3000", Check: atLeast(0),
		Doc:         "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.InitialRebalanceDelayMs }},
	{Name: "group.streams.task.offset.interval.ms", Type: typeInt, Default: "60000", Check: atLeast(1),
		Doc:         "The interval in which streams group members report their task changelog offsets to the broker.",
		brokerField: func(b *Broker) any { return &b.StreamsGroup.TaskOffsetIntervalMs }},
}

// validateStreamsGroup checks the relations between the group.streams.*
// keys, as Kafka's GroupCoordinatorConfig does.
func (b *Broker) validateStreamsGroup() error {
	s := b.StreamsGroup
	switch {
	case s.MaxSessionTimeoutMs < s.MinSessionTimeoutMs:
		return relation("group.streams.max.session.timeout.ms", "group.streams.max.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms")
	case s.SessionTimeoutMs < s.MinSessionTimeoutMs || s.SessionTimeoutMs > s.MaxSessionTimeoutMs:
		return relation("group.streams.session.timeout.ms", "group.streams.session.timeout.ms must be between group.streams.min.session.timeout.ms and group.streams.max.session.timeout.ms")
	case s.HeartbeatIntervalMs >= s.SessionTimeoutMs:
		return relation("group.streams.heartbeat.interval.ms", "group.streams.heartbeat.interval.ms must be less than group.streams.session.timeout.ms")
	case s.NumStandbyReplicas > s.MaxStandbyReplicas:
		return relation("group.streams.num.standby.replicas", "group.streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas")
	}
	return nil
}
