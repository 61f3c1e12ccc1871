package config

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Broker is the typed, validated configuration of one Samsa broker. Load
// builds it; WithDynamic derives a copy with dynamic overrides applied. A
// Broker is immutable once built and safe to share between goroutines;
// callers must not modify its slices and maps.
//
// Field names follow Kafka's keys; every field is filled from the key tables
// in keys.go, except the derived fields noted below.
type Broker struct {
	NodeID                                    int32
	ProcessRoles                              []string
	ControllerQuorumVoters                    []QuorumVoter // derived: controller.quorum.voters
	ControllerQuorumBootstrapServers          []string
	ControllerListenerNames                   []string
	ControllerQuorumElectionTimeoutMs         int32
	ControllerQuorumFetchTimeoutMs            int32
	ControllerQuorumElectionBackoffMaxMs      int32
	ControllerQuorumAppendLingerMs            int32
	ControllerQuorumRequestTimeoutMs          int32
	ControllerQuorumRetryBackoffMs            int32
	BrokerHeartbeatIntervalMs                 int32
	BrokerSessionTimeoutMs                    int32
	MetadataLogDir                            string // derived: metadata.log.dir, else LogDirs[0]
	MetadataLogSegmentBytes                   int32
	MetadataLogSegmentMs                      int64
	MetadataMaxRetentionBytes                 int64
	MetadataMaxRetentionMs                    int64
	MetadataLogMaxRecordBytesBetweenSnapshots int64
	MetadataLogMaxSnapshotIntervalMs          int64
	ClusterID                                 string
	// Tier is the tiered-storage configuration (keys_tier.go).
	Tier TierConfig
	// StreamsGroup configures streams groups (keys_streams.go).
	StreamsGroup StreamsGroupConfig
	// Share is the share-group configuration (keys_share.go).
	Share ShareConfig

	// Listeners are the sockets to bind. Port 0 asks for an ephemeral port.
	Listeners []Listener // derived: listeners
	// AdvertisedListeners are what clients are told: advertised.listeners,
	// else listeners, without the controller listeners. An empty host is
	// replaced by the machine's hostname, as Kafka does.
	AdvertisedListeners         []Listener        // derived
	ListenerSecurityProtocolMap map[string]string // derived: listener name -> protocol
	InterBrokerListenerName     string            // derived
	BrokerRack                  string            // derived: broker.rack, "" when unset
	MetricsListener             string            // host:port, "" when disabled
	LogFormat                   string            // Samsa: log.format, text or json
	LogLevel                    string            // Samsa: log.level; log.level.<component> via Get
	LogRequestSampleRate        int32             // Samsa: log.request.sample.rate, 0 = off

	NumNetworkThreads        int32
	SocketSendBufferBytes    int32
	SocketReceiveBufferBytes int32
	SocketRequestMaxBytes    int32
	SocketListenBacklogSize  int32
	MaxConnections           int32
	MaxConnectionsPerIP      int32
	ConnectionsMaxIdleMs     int64
	QueuedMaxRequests        int32
	QueuedMaxRequestBytes    int64
	// MaxRequestPartitionSizeLimit bounds the partitions one
	// DescribeTopicPartitions response describes.
	MaxRequestPartitionSizeLimit int32
	RequestTimeoutMs             int32

	NumIOThreads                         int32
	BackgroundThreads                    int32
	MessageMaxBytes                      int32
	FetchMaxBytes                        int32
	MaxIncrementalFetchSessionCacheSlots int32
	DeleteTopicEnable                    bool
	AutoCreateTopicsEnable               bool
	NumPartitions                        int32
	DefaultReplicationFactor             int16
	MinInsyncReplicas                    int32
	UncleanLeaderElectionEnable          bool
	CompressionType                      string
	CompressionGzipLevel                 int32
	CompressionLz4Level                  int32
	CompressionZstdLevel                 int32

	ReplicaLagTimeMaxMs                         int64
	ReplicaFetchMaxBytes                        int32
	ReplicaFetchResponseMaxBytes                int32
	ReplicaFetchWaitMaxMs                       int32
	ReplicaFetchMinBytes                        int32
	ReplicaFetchBackoffMs                       int32
	ReplicaSocketTimeoutMs                      int32
	ReplicaSocketReceiveBufferBytes             int32
	NumReplicaFetchers                          int32
	ReplicaHighWatermarkCheckpointIntervalMs    int64
	FetchPurgatoryPurgeIntervalRequests         int32
	ProducerPurgatoryPurgeIntervalRequests      int32
	DeleteRecordsPurgatoryPurgeIntervalRequests int32
	AutoLeaderRebalanceEnable                   bool
	LeaderImbalancePerBrokerPercentage          int32
	LeaderImbalanceCheckIntervalSeconds         int64
	ReplicaSelectorClass                        string // replica.selector.class: "" (leader only) or RackAwareReplicaSelector

	LogDirs                                 []string // derived: log.dirs, else log.dir
	LogSegmentBytes                         int32
	LogRollMs                               int64 // derived: log.roll.ms, else log.roll.hours
	LogRollJitterMs                         int64 // derived: log.roll.jitter.ms, else log.roll.jitter.hours
	LogRetentionMs                          int64 // derived: log.retention.ms > .minutes > .hours; -1 is unlimited
	LogRetentionBytes                       int64
	LogRetentionCheckIntervalMs             int64
	LogCleanupPolicy                        []string
	LogIndexSizeMaxBytes                    int32
	LogIndexIntervalBytes                   int32
	LogFlushIntervalMessages                int64
	LogFlushIntervalMs                      int64 // derived: log.flush.interval.ms, else log.flush.scheduler.interval.ms
	LogFlushSchedulerIntervalMs             int64
	LogFlushOffsetCheckpointIntervalMs      int32
	LogFlushStartOffsetCheckpointIntervalMs int32
	LogSegmentDeleteDelayMs                 int64
	LogPreallocate                          bool
	LogMessageTimestampType                 string
	LogMessageTimestampBeforeMaxMs          int64
	LogMessageTimestampAfterMaxMs           int64
	NumRecoveryThreadsPerDataDir            int32
	LogDirFailureTimeoutMs                  int64

	LogCleanerEnable              bool
	LogCleanerThreads             int32
	LogCleanerDedupeBufferSize    int64
	LogCleanerIOBufferSize        int32
	LogCleanerIOBufferLoadFactor  float64
	LogCleanerIOMaxBytesPerSecond float64
	LogCleanerBackoffMs           int64
	LogCleanerMinCleanableRatio   float64
	LogCleanerDeleteRetentionMs   int64
	LogCleanerMinCompactionLagMs  int64
	LogCleanerMaxCompactionLagMs  int64

	OffsetsTopicNumPartitions           int32
	OffsetsTopicReplicationFactor       int16
	OffsetsTopicSegmentBytes            int32
	OffsetsTopicCompressionCodec        int32
	OffsetsLoadBufferSize               int32
	OffsetsRetentionMinutes             int32
	OffsetsRetentionCheckIntervalMs     int64
	OffsetsCommitTimeoutMs              int32
	OffsetMetadataMaxBytes              int32
	GroupMinSessionTimeoutMs            int32
	GroupMaxSessionTimeoutMs            int32
	GroupInitialRebalanceDelayMs        int32
	GroupMaxSize                        int32
	GroupCoordinatorRebalanceProtocols  []string
	GroupConsumerSessionTimeoutMs       int32
	GroupConsumerMinSessionTimeoutMs    int32
	GroupConsumerMaxSessionTimeoutMs    int32
	GroupConsumerHeartbeatIntervalMs    int32
	GroupConsumerMinHeartbeatIntervalMs int32
	GroupConsumerMaxHeartbeatIntervalMs int32
	GroupConsumerMaxSize                int32
	GroupConsumerAssignors              []string

	ShareCoordinatorStateTopicNumPartitions     int32
	ShareCoordinatorStateTopicReplicationFactor int16
	ShareCoordinatorStateTopicMinISR            int16

	TransactionStateLogNumPartitions                     int32
	TransactionStateLogReplicationFactor                 int16
	TransactionStateLogSegmentBytes                      int32
	TransactionStateLogMinISR                            int32
	TransactionStateLogLoadBufferSize                    int32
	TransactionalIDExpirationMs                          int32
	TransactionMaxTimeoutMs                              int32
	TransactionAbortTimedOutTransactionCleanupIntervalMs int32
	TransactionRemoveExpiredTransactionCleanupIntervalMs int32
	TransactionPartitionVerificationEnable               bool
	AddPartitionsToTxnRetryBackoffMs                     int32
	AddPartitionsToTxnRetryBackoffMaxMs                  int32
	ProducerIDExpirationMs                               int32
	ProducerIDExpirationCheckIntervalMs                  int32

	// The layers, each holding normalized values by key. The effective
	// value of a key is the first layer that has it: dynamicBroker, then
	// dynamicDefault, then static, then the key's default.
	static         map[string]string // file, environment and --override
	dynamicDefault map[string]string // cluster-wide dynamic defaults
	dynamicBroker  map[string]string // dynamic overrides for this broker
	// effective holds every key with a value, defaults included.
	// Invariant: effective[k] is the first of dynamicBroker[k],
	// dynamicDefault[k], static[k], default(k) that exists.
	effective map[string]string
}

// QuorumVoter is one entry of controller.quorum.voters: id@host:port.
type QuorumVoter struct {
	NodeID int32
	Host   string
	Port   int
}

// nonConfigEnv are SAMSA_ variables other Samsa commands read; Load skips
// them without a warning.
var nonConfigEnv = []string{"SAMSA_BROKERS"}

// Load reads the broker configuration. Sources, lowest precedence first:
// the key defaults, the server.properties file at path ("" for none),
// SAMSA_<KEY> variables in environ (os.Environ form), and overrides, each
// "key=value" as given to --override. It returns one warning per key it does
// not know (which it ignores), and an error naming the key, the value and
// what was expected for the first invalid value.
func Load(path string, overrides []string, environ []string) (*Broker, []string, error) {
	static := make(map[string]string)
	origin := make(map[string]string)
	var warnings []string
	set := func(key, value, from string) {
		if _, ok := keyFor(key); !ok {
			warnings = append(warnings, fmt.Sprintf("%s: unknown configuration key %q ignored", from, key))
			return
		}
		static[key] = value
		origin[key] = from
	}

	if path != "" {
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("config: reading %s: %w", path, err)
		}
		properties, err := parseProperties(string(text))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, p := range properties {
			set(p.key, p.value, fmt.Sprintf("%s:%d", path, p.line))
		}
	}

	for _, entry := range environ {
		name, value, ok := strings.Cut(entry, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		i, known := envKeyIndex[name]
		if !known && contains(nonConfigEnv, name) {
			continue
		}
		if !known {
			warnings = append(warnings, fmt.Sprintf("environment: %s does not name a configuration key and is ignored", name))
			continue
		}
		set(brokerKeys[i].Name, value, "environment "+name)
	}

	for _, override := range overrides {
		key, value, ok := strings.Cut(override, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, nil, fmt.Errorf("config: --override %q: %w", override,
				&Error{Kind: ErrInvalidValue, Message: "an override must have the form key=value"})
		}
		set(key, value, "--override")
	}

	for _, key := range sortedNames(static) {
		k, _ := keyFor(key)
		value, err := k.validate(static[key])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", origin[key], err)
		}
		static[key] = value
	}
	if inter, protocol := static["inter.broker.listener.name"], static["security.inter.broker.protocol"]; inter != "" && protocol != "" {
		return nil, nil, fmt.Errorf("%s: %w", origin["inter.broker.listener.name"], &Error{Kind: ErrInvalidValue, Key: "inter.broker.listener.name",
			Message: "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."})
	}

	b, err := build(static, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(warnings)
	return b, warnings, nil
}

// WithDynamic returns a copy of b with dynamic overrides applied on top of the
// static configuration: perBroker (set for this broker, described as
// DYNAMIC_BROKER_CONFIG) over clusterDefault (set for all brokers, described
// as DYNAMIC_DEFAULT_BROKER_CONFIG). Each call replaces the previous dynamic
// overrides. Keys must be known and Dynamic, and values valid.
func (b *Broker) WithDynamic(perBroker, clusterDefault map[string]string) (*Broker, error) {
	normalized := func(layer map[string]string) (map[string]string, error) {
		out := make(map[string]string, len(layer))
		for _, key := range sortedNames(layer) {
			raw := layer[key]
			k, ok := keyFor(key)
			if !ok {
				return nil, &Error{Kind: ErrUnknownKey, Key: key, Message: "Unknown broker config name: " + key}
			}
			if !k.Dynamic {
				return nil, &Error{Kind: ErrReadOnly, Key: key, Message: "Cannot update these configs dynamically: " + key}
			}
			value, err := k.validate(raw)
			if err != nil {
				return nil, err
			}
			out[key] = value
		}
		return out, nil
	}
	broker, err := normalized(perBroker)
	if err != nil {
		return nil, err
	}
	defaults, err := normalized(clusterDefault)
	if err != nil {
		return nil, err
	}
	return build(b.static, defaults, broker)
}

// Raw returns the effective value of every key that has one, defaults
// included, in Kafka's canonical string form. Keys whose Kafka default is
// null and that nothing set (log.retention.ms, advertised.listeners, ...) are
// absent.
func (b *Broker) Raw() map[string]string {
	out := make(map[string]string, len(b.effective))
	for k, v := range b.effective {
		out[k] = v
	}
	return out
}

// Get returns the effective value of key, and whether it has one.
func (b *Broker) Get(key string) (string, bool) {
	v, ok := b.effective[key]
	return v, ok
}

// IsController and IsBroker report the roles in process.roles.
func (b *Broker) IsController() bool { return contains(b.ProcessRoles, "controller") }
func (b *Broker) IsBroker() bool     { return contains(b.ProcessRoles, "broker") }

// build layers the values, fills the typed fields and checks the
// relationships between keys. Every layer holds normalized, valid values.
func build(static, dynamicDefault, dynamicBroker map[string]string) (*Broker, error) {
	b := &Broker{
		static:         static,
		dynamicDefault: dynamicDefault,
		dynamicBroker:  dynamicBroker,
		effective:      make(map[string]string, len(brokerKeys)),
	}
	for i := range brokerKeys {
		k := &brokerKeys[i]
		value, ok := b.layered(k.Name)
		if !ok {
			if k.NoDefault {
				continue
			}
			value = k.Default
		}
		b.effective[k.Name] = value
		if k.brokerField != nil {
			if err := setField(k.brokerField(b), k, value); err != nil {
				return nil, err
			}
		}
	}
	if err := b.derive(); err != nil {
		return nil, err
	}
	if err := b.validateRelations(); err != nil {
		return nil, err
	}
	if invariantsEnabled {
		b.checkInvariants()
	}
	return b, nil
}

// checkInvariants panics if the effective values disagree with the layers.
func (b *Broker) checkInvariants() {
	for i := range brokerKeys {
		k := &brokerKeys[i]
		want, ok := b.layered(k.Name)
		if !ok && !k.NoDefault {
			want, ok = k.Default, true
		}
		got, present := b.effective[k.Name]
		if present != ok || got != want {
			panic(fmt.Sprintf("config: effective %s = %q (%v), layers give %q (%v)", k.Name, got, present, want, ok))
		}
	}
}

// layered returns the value set for key by a dynamic or static layer.
func (b *Broker) layered(key string) (string, bool) {
	for _, layer := range []map[string]string{b.dynamicBroker, b.dynamicDefault, b.static} {
		if v, ok := layer[key]; ok {
			return v, true
		}
	}
	return "", false
}

// setField stores a normalized value into the typed field ptr points at.
func setField(ptr any, k *Key, value string) error {
	var err error
	switch field := ptr.(type) {
	case *bool:
		*field = value == "true"
	case *string:
		*field = value
	case *[]string:
		*field = splitList(value)
	case *int16:
		var n int64
		n, err = strconv.ParseInt(value, 10, 16)
		*field = int16(n)
	case *int32:
		var n int64
		n, err = strconv.ParseInt(value, 10, 32)
		*field = int32(n)
	case *int64:
		*field, err = strconv.ParseInt(value, 10, 64)
	case *float64:
		*field, err = strconv.ParseFloat(value, 64)
	default:
		panic(fmt.Sprintf("config: key %s binds an unsupported field type %T", k.Name, ptr))
	}
	if err != nil {
		return invalidValue(k.Name, value, "Out of range for the field it configures")
	}
	return nil
}

// int64Of returns the effective value of a LONG, INT or SHORT key.
func (b *Broker) int64Of(key string) (int64, bool) {
	v, ok := b.effective[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// derive fills the fields computed from more than one key.
func (b *Broker) derive() error {
	const msPerMinute, msPerHour = int64(60 * 1000), int64(60 * 60 * 1000)

	// log.retention.ms > log.retention.minutes > log.retention.hours;
	// Kafka turns any negative result into -1 (unlimited) and rejects 0.
	if ms, ok := b.int64Of("log.retention.ms"); ok {
		b.LogRetentionMs = ms
	} else if minutes, ok := b.int64Of("log.retention.minutes"); ok {
		b.LogRetentionMs = minutes * msPerMinute
	} else {
		hours, _ := b.int64Of("log.retention.hours")
		b.LogRetentionMs = hours * msPerHour
	}
	if b.LogRetentionMs < 0 {
		b.LogRetentionMs = -1
	}
	if b.LogRetentionMs == 0 {
		return &Error{Kind: ErrInvalidValue, Key: "log.retention.ms",
			Message: "log.retention.ms must be unlimited (-1) or, equal or greater than 1"}
	}

	if ms, ok := b.int64Of("log.roll.ms"); ok {
		b.LogRollMs = ms
	} else {
		hours, _ := b.int64Of("log.roll.hours")
		b.LogRollMs = hours * msPerHour
	}
	if ms, ok := b.int64Of("log.roll.jitter.ms"); ok {
		b.LogRollJitterMs = ms
	} else {
		hours, _ := b.int64Of("log.roll.jitter.hours")
		b.LogRollJitterMs = hours * msPerHour
	}
	if ms, ok := b.int64Of("log.flush.interval.ms"); ok {
		b.LogFlushIntervalMs = ms
	} else {
		b.LogFlushIntervalMs = b.LogFlushSchedulerIntervalMs
	}

	dirsKey := "log.dirs"
	dirs, ok := b.effective[dirsKey]
	if !ok {
		dirsKey, dirs = "log.dir", b.effective["log.dir"]
	}
	if reason := nonEmptyList(dirs); reason != "" {
		return invalidValue(dirsKey, dirs, reason)
	}
	b.LogDirs = splitList(dirs)
	b.MetadataLogDir = b.effective["metadata.log.dir"]
	if b.MetadataLogDir == "" {
		b.MetadataLogDir = b.LogDirs[0]
	}
	b.BrokerRack = b.effective["broker.rack"]

	voters, err := parseQuorumVoters(b.effective["controller.quorum.voters"])
	if err != nil {
		return err
	}
	b.ControllerQuorumVoters = voters
	for _, server := range b.ControllerQuorumBootstrapServers {
		if _, _, reason := splitHostPort(server); reason != "" {
			return invalidValue("controller.quorum.bootstrap.servers", server, reason)
		}
	}
	return b.deriveListeners()
}

// validateRelations checks the constraints Kafka places between keys.
func (b *Broker) validateRelations() error {
	switch {
	case b.GroupMaxSessionTimeoutMs < b.GroupMinSessionTimeoutMs:
		return relation("group.max.session.timeout.ms", "group.max.session.timeout.ms must be at least group.min.session.timeout.ms")
	case b.GroupConsumerMaxSessionTimeoutMs < b.GroupConsumerMinSessionTimeoutMs:
		return relation("group.consumer.max.session.timeout.ms", "group.consumer.max.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms")
	case b.GroupConsumerSessionTimeoutMs < b.GroupConsumerMinSessionTimeoutMs || b.GroupConsumerSessionTimeoutMs > b.GroupConsumerMaxSessionTimeoutMs:
		return relation("group.consumer.session.timeout.ms", "group.consumer.session.timeout.ms must be between group.consumer.min.session.timeout.ms and group.consumer.max.session.timeout.ms")
	case b.GroupConsumerMaxHeartbeatIntervalMs < b.GroupConsumerMinHeartbeatIntervalMs:
		return relation("group.consumer.max.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms")
	case b.GroupConsumerHeartbeatIntervalMs < b.GroupConsumerMinHeartbeatIntervalMs || b.GroupConsumerHeartbeatIntervalMs > b.GroupConsumerMaxHeartbeatIntervalMs:
		return relation("group.consumer.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms must be between group.consumer.min.heartbeat.interval.ms and group.consumer.max.heartbeat.interval.ms")
	case b.GroupConsumerHeartbeatIntervalMs >= b.GroupConsumerSessionTimeoutMs:
		return relation("group.consumer.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms")
	case int64(b.ReplicaFetchWaitMaxMs) > int64(b.ReplicaSocketTimeoutMs):
		return relation("replica.fetch.wait.max.ms", "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts")
	case int64(b.ReplicaFetchWaitMaxMs) > b.ReplicaLagTimeMaxMs:
		return relation("replica.fetch.wait.max.ms", "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR")
	case b.BrokerHeartbeatIntervalMs >= b.BrokerSessionTimeoutMs:
		return relation("broker.heartbeat.interval.ms", "broker.heartbeat.interval.ms must be less than broker.session.timeout.ms")
	case b.QueuedMaxRequestBytes > 0 && b.QueuedMaxRequestBytes < int64(b.SocketRequestMaxBytes):
		return relation("queued.max.request.bytes", "queued.max.request.bytes must be larger or equal to socket.request.max.bytes")
	}
	if err := b.validateTier(); err != nil {
		return err
	}
	if err := b.validateStreamsGroup(); err != nil {
		return err
	}
	if err := b.validateShare(); err != nil {
		return err
	}
	return b.validateRoles()
}

func relation(key, message string) error {
	return &Error{Kind: ErrInvalidValue, Key: key, Message: message}
}

// validateRoles checks process.roles against the quorum and the listeners,
// with Kafka's messages where Kafka has the check.
func (b *Broker) validateRoles() error {
	voters := b.effective["controller.quorum.voters"]
	isVoter := false
	for _, v := range b.ControllerQuorumVoters {
		isVoter = isVoter || v.NodeID == b.NodeID
	}
	if n := len(b.ControllerQuorumVoters); n%2 == 0 && n > 0 {
		return relation("controller.quorum.voters", fmt.Sprintf(
			"controller.quorum.voters=%s has %d voters: a quorum needs an odd number of voters (an even one tolerates no more failures than one voter fewer)",
			voters, n))
	}
	switch {
	case b.IsController() && len(b.ControllerQuorumVoters) > 0 && !isVoter:
		return relation("controller.quorum.voters", fmt.Sprintf(
			"If process.roles contains the 'controller' role, the node id %d must be included in the set of voters controller.quorum.voters=%s",
			b.NodeID, voters))
	case !b.IsController() && isVoter:
		return relation("controller.quorum.voters", fmt.Sprintf(
			"If process.roles contains just the 'broker' role, the node id %d must not be included in the set of voters controller.quorum.voters=%s",
			b.NodeID, voters))
	case !b.IsController() && len(b.ControllerQuorumVoters) == 0 && len(b.ControllerQuorumBootstrapServers) == 0:
		return relation("controller.quorum.voters", "If process.roles contains just the 'broker' role, controller.quorum.voters or controller.quorum.bootstrap.servers must name the controllers to follow")
	}
	for _, l := range b.Listeners {
		isControllerListener := contains(b.ControllerListenerNames, l.Name)
		switch {
		case !b.IsBroker() && !isControllerListener:
			return relation("listeners", fmt.Sprintf(
				"The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller; %s is not one", l.Name))
		case !b.IsController() && isControllerListener:
			return relation("listeners", fmt.Sprintf(
				"controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role: %s", l.Name))
		}
	}
	return nil
}

// parseQuorumVoters parses controller.quorum.voters: id@host:port entries.
func parseQuorumVoters(value string) ([]QuorumVoter, error) {
	var voters []QuorumVoter
	seen := make(map[int32]bool)
	for _, entry := range splitList(value) {
		id, address, ok := strings.Cut(entry, "@")
		n, err := strconv.ParseInt(id, 10, 32)
		if !ok || err != nil || n < 0 {
			return nil, invalidValue("controller.quorum.voters", value, "Each entry must have the form id@host:port")
		}
		host, port, reason := splitHostPort(address)
		if reason != "" {
			return nil, invalidValue("controller.quorum.voters", value, reason)
		}
		if seen[int32(n)] {
			return nil, invalidValue("controller.quorum.voters", value, fmt.Sprintf("Voter %d appears more than once", n))
		}
		seen[int32(n)] = true
		voters = append(voters, QuorumVoter{NodeID: int32(n), Host: host, Port: port})
	}
	return voters, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// sortedNames returns the keys of m in order, so that of several bad keys
// the same one is always reported.
func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// RackAwareReplicaSelector is the replica.selector.class value that makes
// leaders point consumers at a replica in their rack (Kafka's
// org.apache.kafka.common.replica.RackAwareReplicaSelector, KIP-392).
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
