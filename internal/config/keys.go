package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Key describes one configuration key: its type, default, validation and
// documentation. The broker table (BrokerKeys) and the topic table
// (TopicKeys) are the only places a key is defined; parsing, validation,
// DescribeConfigs and IncrementalAlterConfigs are all driven from them.
type Key struct {
	Name string
	Type kmsg.ConfigType
	// Default is the value used when nothing sets the key, in Kafka's
	// canonical string form. It is meaningless when NoDefault is set.
	Default string
	// NoDefault marks keys whose Kafka default is null: unset, they have no
	// value and another key supplies the behaviour (log.retention.ms falls
	// back to log.retention.minutes, then log.retention.hours).
	NoDefault bool
	Doc       string
	// Dynamic broker keys may be changed at runtime with
	// IncrementalAlterConfigs; the rest are described as read-only.
	Dynamic   bool
	Sensitive bool
	// Check validates a value already normalized by Type; nil accepts any.
	Check Validator
	// Synonym, for a topic key, names the broker key whose effective value
	// is the topic's default (retention.ms <- log.retention.ms).
	Synonym string

	// brokerField and topicField point at the typed field the key fills.
	brokerField func(*Broker) any
	topicField  func(*TopicConfig) any
}

// validate normalizes raw for the key and checks it, returning the canonical
// value or an *Error naming the key, the value and what is expected.
func (k *Key) validate(raw string) (string, error) {
	value, reason := normalize(k.Type, raw)
	if reason == "" && k.Check != nil {
		reason = k.Check(value)
	}
	if reason != "" {
		shown := strings.TrimSpace(raw)
		if k.Sensitive {
			shown = "[hidden]"
		}
		shown, reason, message := unpackReason(shown, reason)
		if message != "" {
			return "", &Error{Kind: ErrInvalidValue, Key: k.Name, Message: fmt.Sprintf(message, k.Name)}
		}
		return "", invalidValue(k.Name, shown, reason)
	}
	return value, nil
}

// brokerKeys is the broker configuration table: the core keys below and the
// tables of each capability that has keys of its own, each in its own file
// (keys_<area>.go).
var brokerKeys = slices.Concat(
	coreBrokerKeys,
	tlsBrokerKeys,
	saslBrokerKeys,
	authorizerBrokerKeys,
	tierBrokerKeys,
	protocolBrokerKeys,
	telemetryBrokerKeys,
	registryBrokerKeys,
	consoleBrokerKeys,
	streamsBrokerKeys,
	httpProxyBrokerKeys,
	schemaValidationBrokerKeys,
	tokenBrokerKeys,
	metricsAuthBrokerKeys,
	quotaBrokerKeys,
	shareBrokerKeys,
	replicationQuotaBrokerKeys,
)

// coreBrokerKeys is Kafka's KafkaConfig subset a single Samsa node uses, plus
// Samsa's own keys. Defaults are Kafka 4.0's except where marked "Samsa".
var coreBrokerKeys = []Key{
	// KRaft and node identity.
	{Name: "node.id", Type: typeInt, Default: "1", Check: atLeast(0),
		Doc:         "The node ID of this server within the cluster. Samsa default: 1.",
		brokerField: func(b *Broker) any { return &b.NodeID }},
	{Name: "process.roles", Type: typeList, Default: "broker,controller",
		Check:       allOf(nonEmptyList, listOf("broker", "controller")),
		Doc:         "The roles this node plays: broker, controller, or both. Samsa default: broker,controller.",
		brokerField: func(b *Broker) any { return &b.ProcessRoles }},
	{Name: "controller.quorum.voters", Type: typeList, Default: "",
		Doc: "The voters a new controller quorum starts with, as a list of id@host:port entries (kraft.version 0). After kraft.version 1 the voter set in the metadata log wins."},
	{Name: "controller.quorum.bootstrap.servers", Type: typeList, Default: "",
		Doc:         "host:port pairs used to discover the controller quorum. A controller with these and no controller.quorum.voters joins a running quorum as an observer until AddRaftVoter adds it (KIP-853).",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumBootstrapServers }},
	{Name: "controller.listener.names", Type: typeList, Default: "CONTROLLER",
		Doc:         "Names of the listeners used by the controller. Samsa default: CONTROLLER.",
		brokerField: func(b *Broker) any { return &b.ControllerListenerNames }},
	{Name: "controller.quorum.election.timeout.ms", Type: typeInt, Default: "1000", Check: atLeast(1),
		Doc:         "Maximum time without a leader before a voter starts an election.",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumElectionTimeoutMs }},
	{Name: "controller.quorum.fetch.timeout.ms", Type: typeInt, Default: "2000", Check: atLeast(1),
		Doc:         "Maximum time without a successful fetch from the leader before a voter becomes a candidate.",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumFetchTimeoutMs }},
	{Name: "controller.quorum.election.backoff.max.ms", Type: typeInt, Default: "1000", Check: atLeast(1),
		Doc:         "Maximum time to wait before starting a new election.",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumElectionBackoffMaxMs }},
	{Name: "controller.quorum.append.linger.ms", Type: typeInt, Default: "25", Check: atLeast(0),
		Doc:         "How long the quorum leader waits for writes to accumulate before flushing.",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumAppendLingerMs }},
	{Name: "controller.quorum.request.timeout.ms", Type: typeInt, Default: "2000", Check: atLeast(0),
		Doc:         "Maximum time to wait for the response to a quorum request.",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumRequestTimeoutMs }},
	{Name: "controller.quorum.retry.backoff.ms", Type: typeInt, Default: "20", Check: atLeast(0),
		Doc:         "Time to wait before retrying a failed quorum request.",
		brokerField: func(b *Broker) any { return &b.ControllerQuorumRetryBackoffMs }},
	{Name: "broker.heartbeat.interval.ms", Type: typeInt, Default: "2000", Check: atLeast(1),
		Doc:         "Interval between broker heartbeats to the controller.",
		brokerField: func(b *Broker) any { return &b.BrokerHeartbeatIntervalMs }},
	{Name: "broker.session.timeout.ms", Type: typeInt, Default: "9000", Check: atLeast(1),
		Doc:         "How long a broker lease lasts without a heartbeat.",
		brokerField: func(b *Broker) any { return &b.BrokerSessionTimeoutMs }},
	{Name: "metadata.log.dir", Type: typeString, NoDefault: true,
		Doc: "Directory of the cluster metadata log. If not set, the first log directory is used."},
	{Name: "metadata.log.segment.bytes", Type: typeInt, Default: "1073741824", Check: atLeast(8 << 20),
		Doc:         "Maximum size of one metadata log segment.",
		brokerField: func(b *Broker) any { return &b.MetadataLogSegmentBytes }},
	{Name: "metadata.log.segment.ms", Type: typeLong, Default: "604800000", Check: atLeast(1),
		Doc:         "Maximum time before a new metadata log segment is rolled.",
		brokerField: func(b *Broker) any { return &b.MetadataLogSegmentMs }},
	{Name: "metadata.max.retention.bytes", Type: typeLong, Default: "104857600",
		Doc:         "Maximum combined size of metadata log and snapshots before old snapshots and segments are deleted.",
		brokerField: func(b *Broker) any { return &b.MetadataMaxRetentionBytes }},
	{Name: "metadata.max.retention.ms", Type: typeLong, Default: "604800000",
		Doc:         "How long to keep a metadata log segment or snapshot before deleting it.",
		brokerField: func(b *Broker) any { return &b.MetadataMaxRetentionMs }},
	{Name: "metadata.log.max.record.bytes.between.snapshots", Type: typeLong, Default: "20971520", Check: atLeast(1),
		Doc:         "Bytes appended to the metadata log after which a new snapshot is generated.",
		brokerField: func(b *Broker) any { return &b.MetadataLogMaxRecordBytesBetweenSnapshots }},
	{Name: "metadata.log.max.snapshot.interval.ms", Type: typeLong, Default: "3600000", Check: atLeast(0),
		Doc:         "Maximum time between metadata snapshots; 0 disables time-based snapshots.",
		brokerField: func(b *Broker) any { return &b.MetadataLogMaxSnapshotIntervalMs }},
	{Name: "cluster.id", Type: typeString, Default: "",
		Doc: "Samsa: the cluster ID, a base64url-encoded 16-byte UUID. If empty, the ID stored in the log directory is used, or a new one is generated when the directory is formatted.",
		Check: func(v string) string {
			if v != "" && !validClusterID(v) {
				return "Must be a base64url-encoded 16-byte UUID (22 characters)"
			}
			return ""
		},
		brokerField: func(b *Broker) any { return &b.ClusterID }},

	// Listeners and the socket server.
	{Name: "listeners", Type: typeList, Default: "PLAINTEXT://127.0.0.1:9092", Check: nonEmptyList,
		Doc: "Listeners as NAME://host:port; an empty host binds all interfaces. Samsa default: PLAINTEXT://127.0.0.1:9092."},
	{Name: "advertised.listeners", Type: typeList, NoDefault: true,
		Doc: "Listeners published to clients, if different from listeners. 0.0.0.0 cannot be advertised."},
	{Name: "listener.security.protocol.map", Type: typeString,
		Default: "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
		Doc:     "Map from listener names to security protocols, as NAME:PROTOCOL pairs."},
	{Name: "inter.broker.listener.name", Type: typeString, NoDefault: true,
		Doc: "Listener used between brokers. If unset, the listener named by security.inter.broker.protocol."},
	{Name: "security.inter.broker.protocol", Type: typeString, Default: "PLAINTEXT",
		Check: oneOf("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
		Doc:   "Security protocol between brokers. It is an error to set this and inter.broker.listener.name."},
	{Name: "metrics.listener", Type: typeString, Default: "127.0.0.1:9644", Check: hostPort,
		Doc:         "Samsa: host:port of the HTTP metrics and health endpoint; empty disables it.",
		brokerField: func(b *Broker) any { return &b.MetricsListener }},

	// Samsa's own logging keys. Levels are slog's; "log." here is the
	// broker's own log, not a partition log.
	{Name: "log.format", Type: typeString, Default: "text", Check: oneOf("text", "json"),
		Doc:         "Samsa: format of the broker's own log lines on stderr: text (key=value) or json (one object per line).",
		brokerField: func(b *Broker) any { return &b.LogFormat }},
	{Name: "log.level", Type: typeString, Default: "info", Check: oneOf(LogLevels...),
		Doc:         "Samsa: lowest level of the broker's own log lines that are written: debug, info, warn or error.",
		brokerField: func(b *Broker) any { return &b.LogLevel }},
	{Name: "log.level.network", Type: typeString, NoDefault: true, Check: oneOf(LogLevels...),
		Doc: "Samsa: log level of the network layer (listeners, connections, request queue). If not set, log.level is used."},
	{Name: "log.level.api", Type: typeString, NoDefault: true, Check: oneOf(LogLevels...),
		Doc: "Samsa: log level of the Kafka API handlers. If not set, log.level is used."},
	{Name: "log.level.log", Type: typeString, NoDefault: true, Check: oneOf(LogLevels...),
		Doc: "Samsa: log level of the storage layer (partition logs, recovery, retention, flushes). If not set, log.level is used."},
	{Name: "log.level.group", Type: typeString, NoDefault: true, Check: oneOf(LogLevels...),
		Doc: "Samsa: log level of the group coordinator. If not set, log.level is used."},
	{Name: "log.level.controller", Type: typeString, NoDefault: true, Check: oneOf(LogLevels...),
		Doc: "Samsa: log level of the controller and metadata log. If not set, log.level is used."},
	{Name: "log.level.request", Type: typeString, NoDefault: true, Check: oneOf(LogLevels...),
		Doc: "Samsa: log level of the request log (Kafka's kafka.request.logger), whose sampled lines are written at debug. If not set, debug when log.request.sample.rate is above 0, else log.level."},
	{Name: "log.request.sample.rate", Type: typeInt, Default: "0", Check: atLeast(0),
		Doc:         "Samsa: write one request in this many to the request log at debug level, with its API, version, client id and latency; 1 logs every request, 0 none.",
		brokerField: func(b *Broker) any { return &b.LogRequestSampleRate }},
	{Name: "num.network.threads", Type: typeInt, Default: "3", Check: atLeast(1), Dynamic: true,
		Doc:         "Number of threads receiving requests from and sending responses to the network.",
		brokerField: func(b *Broker) any { return &b.NumNetworkThreads }},
	{Name: "socket.send.buffer.bytes", Type: typeInt, Default: "102400",
		Doc:         "SO_SNDBUF of server sockets; -1 uses the OS default.",
		brokerField: func(b *Broker) any { return &b.SocketSendBufferBytes }},
	{Name: "socket.receive.buffer.bytes", Type: typeInt, Default: "102400",
		Doc:         "SO_RCVBUF of server sockets; -1 uses the OS default.",
		brokerField: func(b *Broker) any { return &b.SocketReceiveBufferBytes }},
	{Name: "socket.request.max.bytes", Type: typeInt, Default: "104857600", Check: atLeast(1),
		Doc:         "Maximum size of one request.",
		brokerField: func(b *Broker) any { return &b.SocketRequestMaxBytes }},
	{Name: "socket.listen.backlog.size", Type: typeInt, Default: "50", Check: atLeast(1),
		Doc:         "Maximum number of pending connections on a listening socket.",
		brokerField: func(b *Broker) any { return &b.SocketListenBacklogSize }},
	{Name: "max.connections", Type: typeInt, Default: intMax, Check: atLeast(0), Dynamic: true,
		Doc:         "Maximum number of connections the broker accepts at once.",
		brokerField: func(b *Broker) any { return &b.MaxConnections }},
	{Name: "max.connections.per.ip", Type: typeInt, Default: intMax, Check: atLeast(0), Dynamic: true,
		Doc:         "Maximum number of connections accepted from one IP address.",
		brokerField: func(b *Broker) any { return &b.MaxConnectionsPerIP }},
	{Name: "connections.max.idle.ms", Type: typeLong, Default: "600000",
		Doc:         "Idle connections are closed after this many milliseconds.",
		brokerField: func(b *Broker) any { return &b.ConnectionsMaxIdleMs }},
	{Name: "queued.max.requests", Type: typeInt, Default: "500", Check: atLeast(1),
		Doc:         "Number of queued requests allowed before the network threads stop reading.",
		brokerField: func(b *Broker) any { return &b.QueuedMaxRequests }},
	{Name: "queued.max.request.bytes", Type: typeLong, Default: "-1",
		Doc:         "Number of queued bytes allowed before no more requests are read; -1 is unlimited. When set, at least socket.request.max.bytes.",
		brokerField: func(b *Broker) any { return &b.QueuedMaxRequestBytes }},
	{Name: "request.timeout.ms", Type: typeInt, Default: "30000",
		Doc:         "How long the broker's own clients wait for a response.",
		brokerField: func(b *Broker) any { return &b.RequestTimeoutMs }},

	// Server.
	{Name: "num.io.threads", Type: typeInt, Default: "8", Check: atLeast(1), Dynamic: true,
		Doc:         "Number of threads processing requests, which may include disk I/O.",
		brokerField: func(b *Broker) any { return &b.NumIOThreads }},
	{Name: "background.threads", Type: typeInt, Default: "10", Check: atLeast(1), Dynamic: true,
		Doc:         "Number of threads for background tasks.",
		brokerField: func(b *Broker) any { return &b.BackgroundThreads }},
	{Name: "message.max.bytes", Type: typeInt, Default: "1048588", Check: atLeast(0), Dynamic: true,
		Doc:         "Largest record batch size the broker accepts. Topic override: max.message.bytes.",
		brokerField: func(b *Broker) any { return &b.MessageMaxBytes }},
	{Name: "max.decompressed.message.bytes", Type: typeInt, Default: "2147483639", Check: between(1, 2147483639), Dynamic: true,
		Doc: "Largest decompressed size of one record of a compressed batch. Topic override: max.decompressed.message.bytes."},
	{Name: "fetch.max.bytes", Type: typeInt, Default: "57671680", Check: atLeast(1024),
		Doc:         "Maximum number of bytes returned for one fetch request.",
		brokerField: func(b *Broker) any { return &b.FetchMaxBytes }},
	{Name: "max.incremental.fetch.session.cache.slots", Type: typeInt, Default: "1000", Check: atLeast(0),
		Doc:         "Maximum number of incremental fetch sessions kept.",
		brokerField: func(b *Broker) any { return &b.MaxIncrementalFetchSessionCacheSlots }},
	{Name: "broker.rack", Type: typeString, NoDefault: true,
		Doc: "Rack of the broker, used for rack-aware replica placement."},
	{Name: "delete.topic.enable", Type: typeBoolean, Default: "true",
		Doc:         "Whether topics can be deleted.",
		brokerField: func(b *Broker) any { return &b.DeleteTopicEnable }},
	{Name: "auto.create.topics.enable", Type: typeBoolean, Default: "true",
		Doc:         "Whether a topic is created when a client asks for metadata of a topic that does not exist.",
		brokerField: func(b *Broker) any { return &b.AutoCreateTopicsEnable }},
	{Name: "num.partitions", Type: typeInt, Default: "1", Check: atLeast(1),
		Doc:         "Default number of partitions of a new topic.",
		brokerField: func(b *Broker) any { return &b.NumPartitions }},
	{Name: "default.replication.factor", Type: typeInt, Default: "1", Check: between(1, 32767),
		Doc:         "Default replication factor of a new topic.",
		brokerField: func(b *Broker) any { return &b.DefaultReplicationFactor }},
	{Name: "min.insync.replicas", Type: typeInt, Default: "1", Check: atLeast(1), Dynamic: true,
		Doc:         "Minimum number of in-sync replicas that must acknowledge an acks=all write.",
		brokerField: func(b *Broker) any { return &b.MinInsyncReplicas }},
	{Name: "unclean.leader.election.enable", Type: typeBoolean, Default: "false", Dynamic: true,
		Doc:         "Whether a replica outside the ISR may become leader as a last resort, losing data.",
		brokerField: func(b *Broker) any { return &b.UncleanLeaderElectionEnable }},
	{Name: "compression.type", Type: typeString, Default: "producer", Check: oneOf(compressionTypes...), Dynamic: true,
		Doc:         "Final compression of topic data: uncompressed, zstd, lz4, snappy, gzip, or producer to keep the producer's codec.",
		brokerField: func(b *Broker) any { return &b.CompressionType }},
	{Name: "compression.gzip.level", Type: typeInt, Default: "-1", Check: gzipLevel, Dynamic: true,
		Doc:         "Compression level when compression.type is gzip.",
		brokerField: func(b *Broker) any { return &b.CompressionGzipLevel }},
	{Name: "compression.lz4.level", Type: typeInt, Default: "9", Check: between(1, 17), Dynamic: true,
		Doc:         "Compression level when compression.type is lz4.",
		brokerField: func(b *Broker) any { return &b.CompressionLz4Level }},
	{Name: "compression.zstd.level", Type: typeInt, Default: "3", Check: between(-131072, 22), Dynamic: true,
		Doc:         "Compression level when compression.type is zstd.",
		brokerField: func(b *Broker) any { return &b.CompressionZstdLevel }},

	// Replication.
	{Name: "replica.lag.time.max.ms", Type: typeLong, Default: "30000",
		Doc:         "A follower that has not caught up for this long is removed from the ISR.",
		brokerField: func(b *Broker) any { return &b.ReplicaLagTimeMaxMs }},
	{Name: "replica.fetch.max.bytes", Type: typeInt, Default: "1048576", Check: atLeast(0),
		Doc:         "Bytes a follower tries to fetch per partition.",
		brokerField: func(b *Broker) any { return &b.ReplicaFetchMaxBytes }},
	{Name: "replica.fetch.response.max.bytes", Type: typeInt, Default: "10485760", Check: atLeast(0),
		Doc:         "Bytes a follower expects at most in one fetch response.",
		brokerField: func(b *Broker) any { return &b.ReplicaFetchResponseMaxBytes }},
	{Name: "replica.fetch.wait.max.ms", Type: typeInt, Default: "500",
		Doc:         "Maximum wait of a follower's fetch request.",
		brokerField: func(b *Broker) any { return &b.ReplicaFetchWaitMaxMs }},
	{Name: "replica.fetch.min.bytes", Type: typeInt, Default: "1",
		Doc:         "Minimum bytes a follower's fetch waits for.",
		brokerField: func(b *Broker) any { return &b.ReplicaFetchMinBytes }},
	{Name: "replica.fetch.backoff.ms", Type: typeInt, Default: "1000", Check: atLeast(0),
		Doc:         "Time to sleep after a partition fetch error.",
		brokerField: func(b *Broker) any { return &b.ReplicaFetchBackoffMs }},
	{Name: "replica.socket.timeout.ms", Type: typeInt, Default: "30000",
		Doc:         "Socket timeout of follower fetches; at least replica.fetch.wait.max.ms.",
		brokerField: func(b *Broker) any { return &b.ReplicaSocketTimeoutMs }},
	{Name: "replica.socket.receive.buffer.bytes", Type: typeInt, Default: "65536",
		Doc:         "Socket receive buffer of follower fetches.",
		brokerField: func(b *Broker) any { return &b.ReplicaSocketReceiveBufferBytes }},
	{Name: "num.replica.fetchers", Type: typeInt, Default: "1", Dynamic: true,
		Doc:         "Number of fetcher threads per source broker.",
		brokerField: func(b *Broker) any { return &b.NumReplicaFetchers }},
	{Name: "replica.selector.class", Type: typeClass, NoDefault: true, Check: oneOf("", RackAwareReplicaSelector),
		Doc: "How the leader picks a preferred read replica for consumers (KIP-392). Unset: consumers read from the leader. " +
			RackAwareReplicaSelector + ": a consumer that sends client.rack is pointed at an in-sync replica in its rack.",
		brokerField: func(b *Broker) any { return &b.ReplicaSelectorClass }},
	{Name: "replica.high.watermark.checkpoint.interval.ms", Type: typeLong, Default: "5000",
		Doc:         "How often the high watermark is saved to disk.",
		brokerField: func(b *Broker) any { return &b.ReplicaHighWatermarkCheckpointIntervalMs }},
	{Name: "fetch.purgatory.purge.interval.requests", Type: typeInt, Default: "1000",
		Doc:         "Purge interval, in requests, of the fetch purgatory.",
		brokerField: func(b *Broker) any { return &b.FetchPurgatoryPurgeIntervalRequests }},
	{Name: "producer.purgatory.purge.interval.requests", Type: typeInt, Default: "1000",
		Doc:         "Purge interval, in requests, of the produce purgatory.",
		brokerField: func(b *Broker) any { return &b.ProducerPurgatoryPurgeIntervalRequests }},
	{Name: "delete.records.purgatory.purge.interval.requests", Type: typeInt, Default: "1",
		Doc:         "Purge interval, in requests, of the delete-records purgatory.",
		brokerField: func(b *Broker) any { return &b.DeleteRecordsPurgatoryPurgeIntervalRequests }},
	{Name: "auto.leader.rebalance.enable", Type: typeBoolean, Default: "true",
		Doc:         "Whether leadership is moved back to preferred replicas periodically.",
		brokerField: func(b *Broker) any { return &b.AutoLeaderRebalanceEnable }},
	{Name: "leader.imbalance.per.broker.percentage", Type: typeInt, Default: "10",
		Doc:         "Leader imbalance, in percent, that triggers a rebalance.",
		brokerField: func(b *Broker) any { return &b.LeaderImbalancePerBrokerPercentage }},
	{Name: "leader.imbalance.check.interval.seconds", Type: typeLong, Default: "300", Check: atLeast(1),
		Doc:         "How often leader imbalance is checked.",
		brokerField: func(b *Broker) any { return &b.LeaderImbalanceCheckIntervalSeconds }},

	// Log.
	{Name: "log.dir", Type: typeList, Default: "./samsa-data",
		Doc: "Directory where log data is kept, used when log.dirs is not set. Samsa default: ./samsa-data."},
	{Name: "log.dirs", Type: typeList, NoDefault: true,
		Doc: "Directories where log data is kept. If not set, log.dir is used."},
	{Name: "log.segment.bytes", Type: typeInt, Default: "1073741824", Check: atLeast(1 << 20), Dynamic: true,
		Doc:         "Maximum size of one log segment file.",
		brokerField: func(b *Broker) any { return &b.LogSegmentBytes }},
	{Name: "log.roll.ms", Type: typeLong, NoDefault: true, Dynamic: true,
		Doc: "Maximum time before a new log segment is rolled. If not set, log.roll.hours is used."},
	{Name: "log.roll.hours", Type: typeInt, Default: "168", Check: atLeast(1),
		Doc: "Maximum time, in hours, before a new log segment is rolled; secondary to log.roll.ms."},
	{Name: "log.roll.jitter.ms", Type: typeLong, NoDefault: true, Dynamic: true,
		Doc: "Maximum jitter subtracted from the roll time. If not set, log.roll.jitter.hours is used."},
	{Name: "log.roll.jitter.hours", Type: typeInt, Default: "0", Check: atLeast(0),
		Doc: "Maximum jitter, in hours, subtracted from the roll time; secondary to log.roll.jitter.ms."},
	{Name: "log.retention.ms", Type: typeLong, NoDefault: true, Dynamic: true,
		Doc: "How long to keep a log segment before deleting it; -1 for no limit. If not set, log.retention.minutes is used."},
	{Name: "log.retention.minutes", Type: typeInt, NoDefault: true,
		Doc: "Retention in minutes; secondary to log.retention.ms. If not set, log.retention.hours is used."},
	{Name: "log.retention.hours", Type: typeInt, Default: "168",
		Doc: "Retention in hours; tertiary to log.retention.ms."},
	{Name: "log.retention.bytes", Type: typeLong, Default: "-1", Dynamic: true,
		Doc:         "Maximum size of a partition's log before old segments are deleted; -1 for no limit.",
		brokerField: func(b *Broker) any { return &b.LogRetentionBytes }},
	{Name: "log.retention.check.interval.ms", Type: typeLong, Default: "300000", Check: atLeast(1),
		Doc:         "How often logs are checked for segments to delete.",
		brokerField: func(b *Broker) any { return &b.LogRetentionCheckIntervalMs }},
	{Name: "log.cleanup.policy", Type: typeList, Default: "delete", Check: listOf("compact", "delete"), Dynamic: true,
		Doc:         "Default cleanup policy of segments beyond the retention window: delete, compact, or both.",
		brokerField: func(b *Broker) any { return &b.LogCleanupPolicy }},
	{Name: "log.index.size.max.bytes", Type: typeInt, Default: "10485760", Check: atLeast(4), Dynamic: true,
		Doc:         "Maximum size of an offset index file.",
		brokerField: func(b *Broker) any { return &b.LogIndexSizeMaxBytes }},
	{Name: "log.index.interval.bytes", Type: typeInt, Default: "4096", Check: atLeast(0), Dynamic: true,
		Doc:         "Bytes of log between offset index entries.",
		brokerField: func(b *Broker) any { return &b.LogIndexIntervalBytes }},
	{Name: "log.flush.interval.messages", Type: typeLong, Default: longMax, Check: atLeast(1), Dynamic: true,
		Doc:         "Messages appended to a partition before it is flushed to disk.",
		brokerField: func(b *Broker) any { return &b.LogFlushIntervalMessages }},
	{Name: "log.flush.interval.ms", Type: typeLong, NoDefault: true, Dynamic: true,
		Doc: "Maximum time a message stays unflushed. If not set, log.flush.scheduler.interval.ms is used."},
	{Name: "log.flush.scheduler.interval.ms", Type: typeLong, Default: longMax,
		Doc:         "How often the flusher checks whether a log needs flushing.",
		brokerField: func(b *Broker) any { return &b.LogFlushSchedulerIntervalMs }},
	{Name: "log.flush.offset.checkpoint.interval.ms", Type: typeInt, Default: "60000", Check: atLeast(0),
		Doc:         "How often the recovery point checkpoint is written.",
		brokerField: func(b *Broker) any { return &b.LogFlushOffsetCheckpointIntervalMs }},
	{Name: "log.flush.start.offset.checkpoint.interval.ms", Type: typeInt, Default: "60000", Check: atLeast(0),
		Doc:         "How often the log start offset checkpoint is written.",
		brokerField: func(b *Broker) any { return &b.LogFlushStartOffsetCheckpointIntervalMs }},
	{Name: "log.segment.delete.delay.ms", Type: typeLong, Default: "60000", Check: atLeast(0), Dynamic: true,
		Doc:         "Time to wait before deleting a file from the filesystem.",
		brokerField: func(b *Broker) any { return &b.LogSegmentDeleteDelayMs }},
	{Name: "log.preallocate", Type: typeBoolean, Default: "false", Dynamic: true,
		Doc:         "Whether segment files are preallocated.",
		brokerField: func(b *Broker) any { return &b.LogPreallocate }},
	{Name: "log.message.timestamp.type", Type: typeString, Default: "CreateTime",
		Check: oneOf("CreateTime", "LogAppendTime"), Dynamic: true,
		Doc:         "Whether record timestamps are the producer's create time or the broker's append time.",
		brokerField: func(b *Broker) any { return &b.LogMessageTimestampType }},
	{Name: "log.message.timestamp.before.max.ms", Type: typeLong, Default: longMax, Check: atLeast(0), Dynamic: true,
		Doc:         "How far a CreateTime timestamp may lie before the broker's clock.",
		brokerField: func(b *Broker) any { return &b.LogMessageTimestampBeforeMaxMs }},
	{Name: "log.message.timestamp.after.max.ms", Type: typeLong, Default: "3600000", Check: atLeast(0), Dynamic: true,
		Doc:         "How far a CreateTime timestamp may lie after the broker's clock.",
		brokerField: func(b *Broker) any { return &b.LogMessageTimestampAfterMaxMs }},
	{Name: "num.recovery.threads.per.data.dir", Type: typeInt, Default: "2", Check: atLeast(1), Dynamic: true,
		Doc:         "Threads per log directory for recovery at startup and flushing at shutdown.",
		brokerField: func(b *Broker) any { return &b.NumRecoveryThreadsPerDataDir }},
	{Name: "log.dir.failure.timeout.ms", Type: typeLong, Default: "30000", Check: atLeast(1),
		Doc:         "How long a log directory failure may go unreported to the controller before the broker shuts down.",
		brokerField: func(b *Broker) any { return &b.LogDirFailureTimeoutMs }},

	// Log cleaner.
	{Name: "log.cleaner.enable", Type: typeBoolean, Default: "true",
		Doc:         "Whether the log cleaner compacts topics with cleanup.policy=compact.",
		brokerField: func(b *Broker) any { return &b.LogCleanerEnable }},
	{Name: "log.cleaner.threads", Type: typeInt, Default: "1", Check: atLeast(0), Dynamic: true,
		Doc:         "Number of log cleaner threads.",
		brokerField: func(b *Broker) any { return &b.LogCleanerThreads }},
	{Name: "log.cleaner.dedupe.buffer.size", Type: typeLong, Default: "134217728", Dynamic: true,
		Doc:         "Memory used for deduplication across all cleaner threads.",
		brokerField: func(b *Broker) any { return &b.LogCleanerDedupeBufferSize }},
	{Name: "log.cleaner.io.buffer.size", Type: typeInt, Default: "524288", Check: atLeast(0), Dynamic: true,
		Doc:         "Memory used for cleaner I/O buffers across all cleaner threads.",
		brokerField: func(b *Broker) any { return &b.LogCleanerIOBufferSize }},
	{Name: "log.cleaner.io.buffer.load.factor", Type: typeDouble, Default: "0.9", Dynamic: true,
		Doc:         "Load factor of the cleaner's dedupe buffer.",
		brokerField: func(b *Broker) any { return &b.LogCleanerIOBufferLoadFactor }},
	{Name: "log.cleaner.io.max.bytes.per.second", Type: typeDouble, Default: "1.7976931348623157E308", Dynamic: true,
		Doc:         "Read plus write I/O of the cleaner is throttled below this rate.",
		brokerField: func(b *Broker) any { return &b.LogCleanerIOMaxBytesPerSecond }},
	{Name: "log.cleaner.backoff.ms", Type: typeLong, Default: "15000", Check: atLeast(0), Dynamic: true,
		Doc:         "Time to sleep when there are no logs to clean.",
		brokerField: func(b *Broker) any { return &b.LogCleanerBackoffMs }},
	{Name: "log.cleaner.min.cleanable.ratio", Type: typeDouble, Default: "0.5", Check: betweenDouble(0, 1), Dynamic: true,
		Doc:         "Minimum ratio of dirty log to total log for a log to be cleaned.",
		brokerField: func(b *Broker) any { return &b.LogCleanerMinCleanableRatio }},
	{Name: "log.cleaner.delete.retention.ms", Type: typeLong, Default: "86400000", Check: atLeast(0), Dynamic: true,
		Doc:         "How long delete tombstones are kept in compacted topics.",
		brokerField: func(b *Broker) any { return &b.LogCleanerDeleteRetentionMs }},
	{Name: "log.cleaner.min.compaction.lag.ms", Type: typeLong, Default: "0", Check: atLeast(0), Dynamic: true,
		Doc:         "Minimum time a message stays uncompacted.",
		brokerField: func(b *Broker) any { return &b.LogCleanerMinCompactionLagMs }},
	{Name: "log.cleaner.max.compaction.lag.ms", Type: typeLong, Default: longMax, Check: atLeast(1), Dynamic: true,
		Doc:         "Maximum time a message stays ineligible for compaction.",
		brokerField: func(b *Broker) any { return &b.LogCleanerMaxCompactionLagMs }},

	// Group coordinator.
	{Name: "offsets.topic.num.partitions", Type: typeInt, Default: "50", Check: atLeast(1),
		Doc:         "Number of partitions of __consumer_offsets; do not change after deployment.",
		brokerField: func(b *Broker) any { return &b.OffsetsTopicNumPartitions }},
	{Name: "offsets.topic.replication.factor", Type: typeShort, Default: "3", Check: atLeast(1),
		Doc:         "Replication factor of __consumer_offsets: it is created once this many brokers are alive (a node without controller.quorum.voters caps it at its one broker).",
		brokerField: func(b *Broker) any { return &b.OffsetsTopicReplicationFactor }},
	{Name: "offsets.topic.segment.bytes", Type: typeInt, Default: "104857600", Check: atLeast(1),
		Doc:         "Segment size of __consumer_offsets.",
		brokerField: func(b *Broker) any { return &b.OffsetsTopicSegmentBytes }},
	{Name: "offsets.topic.compression.codec", Type: typeInt, Default: "0",
		Doc:         "Compression codec id for __consumer_offsets.",
		brokerField: func(b *Broker) any { return &b.OffsetsTopicCompressionCodec }},
	{Name: "offsets.load.buffer.size", Type: typeInt, Default: "5242880", Check: atLeast(1),
		Doc:         "Batch size for reading __consumer_offsets when loading groups.",
		brokerField: func(b *Broker) any { return &b.OffsetsLoadBufferSize }},
	{Name: "offsets.retention.minutes", Type: typeInt, Default: "10080", Check: atLeast(1),
		Doc:         "How long committed offsets of an empty group are kept.",
		brokerField: func(b *Broker) any { return &b.OffsetsRetentionMinutes }},
	{Name: "offsets.retention.check.interval.ms", Type: typeLong, Default: "600000", Check: atLeast(1),
		Doc:         "How often stale offsets are looked for.",
		brokerField: func(b *Broker) any { return &b.OffsetsRetentionCheckIntervalMs }},
	{Name: "offsets.commit.timeout.ms", Type: typeInt, Default: "5000", Check: atLeast(1),
		Doc:         "How long an offset commit waits for the offsets topic replicas.",
		brokerField: func(b *Broker) any { return &b.OffsetsCommitTimeoutMs }},
	{Name: "offset.metadata.max.bytes", Type: typeInt, Default: "4096",
		Doc:         "Maximum size of the metadata of an offset commit.",
		brokerField: func(b *Broker) any { return &b.OffsetMetadataMaxBytes }},
	{Name: "group.min.session.timeout.ms", Type: typeInt, Default: "6000",
		Doc:         "Minimum session timeout of classic group members.",
		brokerField: func(b *Broker) any { return &b.GroupMinSessionTimeoutMs }},
	{Name: "group.max.session.timeout.ms", Type: typeInt, Default: "1800000",
		Doc:         "Maximum session timeout of classic group members.",
		brokerField: func(b *Broker) any { return &b.GroupMaxSessionTimeoutMs }},
	{Name: "group.initial.rebalance.delay.ms", Type: typeInt, Default: "3000",
		Doc:         "How long a new classic group waits for more members before the first rebalance.",
		brokerField: func(b *Broker) any { return &b.GroupInitialRebalanceDelayMs }},
	{Name: "group.max.size", Type: typeInt, Default: intMax, Check: atLeast(1),
		Doc:         "Maximum number of members of a classic group.",
		brokerField: func(b *Broker) any { return &b.GroupMaxSize }},
	{Name: "group.coordinator.rebalance.protocols", Type: typeList, Default: "classic,consumer,streams",
		Check: allOf(listOf("classic", "consumer", "share", "streams"), func(v string) string {
			for _, p := range splitList(v) {
				if p == "classic" {
					return ""
				}
			}
			return "The classic protocol must be enabled"
		}),
		Doc:         "Rebalance protocols the group coordinator accepts.",
		brokerField: func(b *Broker) any { return &b.GroupCoordinatorRebalanceProtocols }},
	{Name: "group.consumer.session.timeout.ms", Type: typeInt, Default: "45000", Check: atLeast(1),
		Doc:         "Session timeout of consumer-protocol (KIP-848) group members.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerSessionTimeoutMs }},
	{Name: "group.consumer.min.session.timeout.ms", Type: typeInt, Default: "45000", Check: atLeast(1),
		Doc:         "Minimum session timeout of consumer-protocol group members.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerMinSessionTimeoutMs }},
	{Name: "group.consumer.max.session.timeout.ms", Type: typeInt, Default: "60000", Check: atLeast(1),
		Doc:         "Maximum session timeout of consumer-protocol group members.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerMaxSessionTimeoutMs }},
	{Name: "group.consumer.heartbeat.interval.ms", Type: typeInt, Default: "5000", Check: atLeast(1),
		Doc:         "Heartbeat interval given to consumer-protocol group members.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerHeartbeatIntervalMs }},
	{Name: "group.consumer.min.heartbeat.interval.ms", Type: typeInt, Default: "5000", Check: atLeast(1),
		Doc:         "Minimum heartbeat interval of consumer-protocol group members.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerMinHeartbeatIntervalMs }},
	{Name: "group.consumer.max.heartbeat.interval.ms", Type: typeInt, Default: "15000", Check: atLeast(1),
		Doc:         "Maximum heartbeat interval of consumer-protocol group members.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerMaxHeartbeatIntervalMs }},
	{Name: "group.consumer.max.size", Type: typeInt, Default: intMax, Check: atLeast(1),
		Doc:         "Maximum number of members of a consumer-protocol group.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerMaxSize }},
	{Name: "group.consumer.assignors", Type: typeList, Default: "uniform,range",
		Check: allOf(nonEmptyList, listOf("uniform", "range",
			"org.apache.kafka.coordinator.group.assignor.UniformAssignor",
			"org.apache.kafka.coordinator.group.assignor.RangeAssignor")),
		Doc:         "Server-side assignors of consumer-protocol groups; the first is used when a member names none.",
		brokerField: func(b *Broker) any { return &b.GroupConsumerAssignors }},
	{Name: "share.coordinator.state.topic.num.partitions", Type: typeInt, Default: "50", Check: atLeast(1),
		Doc:         "Number of partitions of __share_group_state.",
		brokerField: func(b *Broker) any { return &b.ShareCoordinatorStateTopicNumPartitions }},
	{Name: "share.coordinator.state.topic.replication.factor", Type: typeShort, Default: "3", Check: atLeast(1),
		Doc:         "Replication factor of __share_group_state.",
		brokerField: func(b *Broker) any { return &b.ShareCoordinatorStateTopicReplicationFactor }},
	{Name: "share.coordinator.state.topic.min.isr", Type: typeShort, Default: "2", Check: atLeast(1),
		Doc:         "min.insync.replicas of __share_group_state.",
		brokerField: func(b *Broker) any { return &b.ShareCoordinatorStateTopicMinISR }},

	// Transactions and producer state.
	{Name: "transaction.state.log.num.partitions", Type: typeInt, Default: "50", Check: atLeast(1),
		Doc:         "Number of partitions of __transaction_state; do not change after deployment.",
		brokerField: func(b *Broker) any { return &b.TransactionStateLogNumPartitions }},
	{Name: "transaction.state.log.replication.factor", Type: typeShort, Default: "3", Check: atLeast(1),
		Doc:         "Replication factor of __transaction_state: it is created once this many brokers are alive (a node without controller.quorum.voters caps it at its one broker).",
		brokerField: func(b *Broker) any { return &b.TransactionStateLogReplicationFactor }},
	{Name: "transaction.state.log.segment.bytes", Type: typeInt, Default: "104857600", Check: atLeast(1),
		Doc:         "Segment size of __transaction_state.",
		brokerField: func(b *Broker) any { return &b.TransactionStateLogSegmentBytes }},
	{Name: "transaction.state.log.min.isr", Type: typeInt, Default: "2", Check: atLeast(1),
		Doc:         "min.insync.replicas of __transaction_state, set when it is created, capped at its replication factor.",
		brokerField: func(b *Broker) any { return &b.TransactionStateLogMinISR }},
	{Name: "transaction.state.log.load.buffer.size", Type: typeInt, Default: "5242880", Check: atLeast(1),
		Doc:         "Batch size for reading __transaction_state when loading transactions.",
		brokerField: func(b *Broker) any { return &b.TransactionStateLogLoadBufferSize }},
	{Name: "transactional.id.expiration.ms", Type: typeInt, Default: "604800000", Check: atLeast(1),
		Doc:         "How long an idle transactional id is kept.",
		brokerField: func(b *Broker) any { return &b.TransactionalIDExpirationMs }},
	{Name: "transaction.max.timeout.ms", Type: typeInt, Default: "900000", Check: atLeast(1),
		Doc:         "Maximum transaction timeout a producer may ask for.",
		brokerField: func(b *Broker) any { return &b.TransactionMaxTimeoutMs }},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Type: typeInt, Default: "10000", Check: atLeast(1),
		Doc:         "How often timed-out transactions are rolled back.",
		brokerField: func(b *Broker) any { return &b.TransactionAbortTimedOutTransactionCleanupIntervalMs }},
	{Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Type: typeInt, Default: "3600000", Check: atLeast(1),
		Doc:         "How often expired transactional ids are removed.",
		brokerField: func(b *Broker) any { return &b.TransactionRemoveExpiredTransactionCleanupIntervalMs }},
	{Name: "transaction.partition.verification.enable", Type: typeBoolean, Default: "true", Dynamic: true,
		Doc:         "Whether a transactional produce is checked against the partitions added to the transaction.",
		brokerField: func(b *Broker) any { return &b.TransactionPartitionVerificationEnable }},
	{Name: "add.partitions.to.txn.retry.backoff.ms", Type: typeInt, Default: "20", Check: atLeast(1),
		Doc:         "How long a partition leader waits before asking the transaction coordinator again to add a partition of a transactional produce that got CONCURRENT_TRANSACTIONS (transactions v2).",
		brokerField: func(b *Broker) any { return &b.AddPartitionsToTxnRetryBackoffMs }},
	{Name: "add.partitions.to.txn.retry.backoff.max.ms", Type: typeInt, Default: "100", Check: atLeast(0),
		Doc:         "How long in all a partition leader retries adding a partition of a transactional produce before answering the producer; no longer than request.timeout.ms.",
		brokerField: func(b *Broker) any { return &b.AddPartitionsToTxnRetryBackoffMaxMs }},
	{Name: "producer.id.expiration.ms", Type: typeInt, Default: "86400000", Check: atLeast(1), Dynamic: true,
		Doc:         "How long producer state of an idle producer id is kept.",
		brokerField: func(b *Broker) any { return &b.ProducerIDExpirationMs }},
	{Name: "producer.id.expiration.check.interval.ms", Type: typeInt, Default: "600000", Check: atLeast(1),
		Doc:         "How often expired producer ids are removed.",
		brokerField: func(b *Broker) any { return &b.ProducerIDExpirationCheckIntervalMs }},
}

// LogLevels are the values of log.level and log.level.<component>, lowest
// first.
var LogLevels = []string{"debug", "info", "warn", "error"}

// LogComponents name the parts of the broker whose log level can be set
// apart with log.level.<component>.
var LogComponents = []string{"network", "api", "log", "group", "controller", "request"}

// brokerKeyIndex and envKeyIndex map a key name, and the SAMSA_ environment
// variable name derived from it, to its place in brokerKeys.
var brokerKeyIndex, envKeyIndex = indexBrokerKeys()

func indexBrokerKeys() (map[string]int, map[string]int) {
	byName := make(map[string]int, len(brokerKeys))
	byEnv := make(map[string]int, len(brokerKeys))
	for i, k := range brokerKeys {
		if _, dup := byName[k.Name]; dup {
			panic("config: broker key defined twice: " + k.Name)
		}
		byName[k.Name] = i
		byEnv[EnvName(k.Name)] = i
	}
	return byName, byEnv
}

// EnvPrefix starts every environment variable Load reads.
const EnvPrefix = "SAMSA_"

// EnvName is the environment variable that sets a broker key: SAMSA_, then the
// key upper-cased with dots and dashes turned into underscores
// (log.dirs -> SAMSA_LOG_DIRS).
func EnvName(key string) string {
	return EnvPrefix + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(key))
}

// BrokerKeys returns the broker key table, sorted by name.
func BrokerKeys() []Key {
	return sortedKeys(brokerKeys)
}

// LookupBroker returns the broker key called name.
func LookupBroker(name string) (Key, bool) {
	i, ok := brokerKeyIndex[name]
	if !ok {
		return Key{}, false
	}
	return brokerKeys[i], true
}

func sortedKeys(keys []Key) []Key {
	out := append([]Key(nil), keys...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
