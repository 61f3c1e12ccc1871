package config

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// TopicConfig is the effective configuration of one topic: its overrides
// over the broker's defaults over Kafka's topic defaults.
type TopicConfig struct {
	CleanupPolicy          []string // "delete", "compact", both, or none
	CompressionType        string   // uncompressed, zstd, lz4, snappy, gzip or producer
	CompressionGzipLevel   int32
	CompressionLz4Level    int32
	CompressionZstdLevel   int32
	DeleteRetentionMs      int64
	FileDeleteDelayMs      int64
	FlushMessages          int64
	FlushMs                int64
	IndexIntervalBytes     int32
	LocalRetentionBytes    int64
	LocalRetentionMs       int64
	MaxCompactionLagMs     int64
	MaxMessageBytes        int32
	TimestampAfterMaxMs    int64
	TimestampBeforeMaxMs   int64
	MessageTimestampType   string // CreateTime or LogAppendTime
	MinCleanableDirtyRatio float64
	MinCompactionLagMs     int64
	MinInsyncReplicas      int32
	Preallocate            bool
	RemoteStorageEnable    bool
	RetentionBytes         int64 // -1 is unlimited
	RetentionMs            int64 // -1 is unlimited
	SegmentBytes           int32
	SegmentIndexBytes      int32
	SegmentJitterMs        int64
	SegmentMs              int64
	UncleanLeaderElection  bool

	LeaderReplicationThrottledReplicas   []string
	FollowerReplicationThrottledReplicas []string
	RemoteLogCopyDisable                 bool
	RemoteLogDeleteOnDisable             bool
	// RemoteCopyLagMs and RemoteCopyLagBytes are remote.copy.lag.ms and
	// remote.copy.lag.bytes (KIP-1241), accepted and validated; the tier
	// copies a segment once it is closed (docs/compatibility.md).
	RemoteCopyLagMs    int64
	RemoteCopyLagBytes int64
	// MaxDecompressedMessageBytes is max.decompressed.message.bytes: the
	// largest record body a compressed batch may hold once decompressed.
	MaxDecompressedMessageBytes int32

	// KeySchemaValidation and ValueSchemaValidation are Confluent
	// Server's schema id validation (keys_schema_validation.go).
	KeySchemaValidation   bool
	ValueSchemaValidation bool

	// ErrorsDeadLetterQueueGroupEnable is errors.deadletterqueue.group.enable.
	ErrorsDeadLetterQueueGroupEnable bool
}

// Compact and Delete report the cleanup policies in effect.
func (t TopicConfig) Compact() bool { return contains(t.CleanupPolicy, "compact") }
func (t TopicConfig) Delete() bool  { return contains(t.CleanupPolicy, "delete") }

// topicKeys is Kafka 4.4's topic configuration table (LogConfig), without
// the removed message.format.version and message.downconversion.enable.
// Synonym is the first of the broker keys Kafka's ServerTopicConfigSynonyms
// lists for the topic key.
var topicKeys = slices.Concat(kafkaTopicKeys, schemaValidationTopicKeys)

var kafkaTopicKeys = []Key{
	{Name: "cleanup.policy", Type: typeList, Default: "delete", Check: listOf("compact", "delete"), Synonym: "log.cleanup.policy",
		Doc:        "Retention policy of old segments: delete discards them past the retention limits, compact keeps the latest value of each key. Either, both, or none.",
		topicField: func(t *TopicConfig) any { return &t.CleanupPolicy }},
	{Name: "compression.gzip.level", Type: typeInt, Default: "-1", Check: gzipLevel, Synonym: "compression.gzip.level",
		Doc:        "Compression level when compression.type is gzip.",
		topicField: func(t *TopicConfig) any { return &t.CompressionGzipLevel }},
	{Name: "compression.lz4.level", Type: typeInt, Default: "9", Check: between(1, 17), Synonym: "compression.lz4.level",
		Doc:        "Compression level when compression.type is lz4.",
		topicField: func(t *TopicConfig) any { return &t.CompressionLz4Level }},
	{Name: "compression.type", Type: typeString, Default: "producer", Check: oneOf(compressionTypes...), Synonym: "compression.type",
		Doc:        "Final compression of the topic's data: uncompressed, zstd, lz4, snappy, gzip, or producer to keep the producer's codec.",
		topicField: func(t *TopicConfig) any { return &t.CompressionType }},
	{Name: "compression.zstd.level", Type: typeInt, Default: "3", Check: between(-131072, 22), Synonym: "compression.zstd.level",
		Doc:        "Compression level when compression.type is zstd.",
		topicField: func(t *TopicConfig) any { return &t.CompressionZstdLevel }},
	{Name: "delete.retention.ms", Type: typeLong, Default: "86400000", Check: atLeast(0), Synonym: "log.cleaner.delete.retention.ms",
		Doc:        "How long delete tombstones are kept in a compacted topic.",
		topicField: func(t *TopicConfig) any { return &t.DeleteRetentionMs }},
	{Name: "errors.deadletterqueue.group.enable", Type: typeBoolean, Default: "false",
		Doc: "Whether share groups may write undeliverable records to this topic as their dead-letter queue (Kafka 4.4). " +
			"Samsa's share groups have no dead-letter queue yet, so the flag is stored and described but changes nothing.",
		topicField: func(t *TopicConfig) any { return &t.ErrorsDeadLetterQueueGroupEnable }},
	{Name: "file.delete.delay.ms", Type: typeLong, Default: "60000", Check: atLeast(0), Synonym: "log.segment.delete.delay.ms",
		Doc:        "Time to wait before deleting a file from the filesystem.",
		topicField: func(t *TopicConfig) any { return &t.FileDeleteDelayMs }},
	{Name: "flush.messages", Type: typeLong, Default: longMax, Check: atLeast(1), Synonym: "log.flush.interval.messages",
		Doc:        "Messages appended after which the log is fsynced.",
		topicField: func(t *TopicConfig) any { return &t.FlushMessages }},
	{Name: "flush.ms", Type: typeLong, Default: longMax, Check: atLeast(0), Synonym: "log.flush.interval.ms",
		Doc:        "Time after which the log is fsynced.",
		topicField: func(t *TopicConfig) any { return &t.FlushMs }},
	{Name: "follower.replication.throttled.replicas", Type: typeList, Default: "", Check: throttledReplicas,
		Doc:        "Replicas, as partitionId:brokerId pairs or *, whose follower-side replication is throttled.",
		topicField: func(t *TopicConfig) any { return &t.FollowerReplicationThrottledReplicas }},
	{Name: "index.interval.bytes", Type: typeInt, Default: "4096", Check: atLeast(0), Synonym: "log.index.interval.bytes",
		Doc:        "Bytes of log between offset index entries.",
		topicField: func(t *TopicConfig) any { return &t.IndexIntervalBytes }},
	{Name: "leader.replication.throttled.replicas", Type: typeList, Default: "", Check: throttledReplicas,
		Doc:        "Replicas, as partitionId:brokerId pairs or *, whose leader-side replication is throttled.",
		topicField: func(t *TopicConfig) any { return &t.LeaderReplicationThrottledReplicas }},
	{Name: "local.retention.bytes", Type: typeLong, Default: "-2", Check: atLeast(-2), Synonym: "log.local.retention.bytes",
		Doc:        "Local retention size of a tiered topic; -2 uses retention.bytes. See docs/tiered-storage.md.",
		topicField: func(t *TopicConfig) any { return &t.LocalRetentionBytes }},
	{Name: "local.retention.ms", Type: typeLong, Default: "-2", Check: atLeast(-2), Synonym: "log.local.retention.ms",
		Doc:        "Local retention time of a tiered topic; -2 uses retention.ms. See docs/tiered-storage.md.",
		topicField: func(t *TopicConfig) any { return &t.LocalRetentionMs }},
	{Name: "max.compaction.lag.ms", Type: typeLong, Default: longMax, Check: atLeast(1), Synonym: "log.cleaner.max.compaction.lag.ms",
		Doc:        "Maximum time a message stays ineligible for compaction.",
		topicField: func(t *TopicConfig) any { return &t.MaxCompactionLagMs }},
	{Name: "max.decompressed.message.bytes", Type: typeInt, Default: "2147483639", Check: between(1, 2147483639), Synonym: "max.decompressed.message.bytes",
		Doc:        "Largest decompressed size of one record of a compressed batch; a larger one is refused with INVALID_RECORD.",
		topicField: func(t *TopicConfig) any { return &t.MaxDecompressedMessageBytes }},
	{Name: "max.message.bytes", Type: typeInt, Default: "1048588", Check: atLeast(0), Synonym: "message.max.bytes",
		Doc:        "Largest record batch size the topic accepts, after compression.",
		topicField: func(t *TopicConfig) any { return &t.MaxMessageBytes }},
	{Name: "message.timestamp.after.max.ms", Type: typeLong, Default: "3600000", Check: atLeast(0), Synonym: "log.message.timestamp.after.max.ms",
		Doc:        "How far a CreateTime timestamp may lie after the broker's clock before the batch is rejected.",
		topicField: func(t *TopicConfig) any { return &t.TimestampAfterMaxMs }},
	{Name: "message.timestamp.before.max.ms", Type: typeLong, Default: longMax, Check: atLeast(0), Synonym: "log.message.timestamp.before.max.ms",
		Doc:        "How far a CreateTime timestamp may lie before the broker's clock before the batch is rejected.",
		topicField: func(t *TopicConfig) any { return &t.TimestampBeforeMaxMs }},
	{Name: "message.timestamp.type", Type: typeString, Default: "CreateTime", Check: oneOf("CreateTime", "LogAppendTime"), Synonym: "log.message.timestamp.type",
		Doc:        "Whether record timestamps are the producer's create time or the broker's append time.",
		topicField: func(t *TopicConfig) any { return &t.MessageTimestampType }},
	{Name: "min.cleanable.dirty.ratio", Type: typeDouble, Default: "0.5", Check: betweenDouble(0, 1), Synonym: "log.cleaner.min.cleanable.ratio",
		Doc:        "Minimum ratio of dirty log to total log for the log to be compacted.",
		topicField: func(t *TopicConfig) any { return &t.MinCleanableDirtyRatio }},
	{Name: "min.compaction.lag.ms", Type: typeLong, Default: "0", Check: atLeast(0), Synonym: "log.cleaner.min.compaction.lag.ms",
		Doc:        "Minimum time a message stays uncompacted.",
		topicField: func(t *TopicConfig) any { return &t.MinCompactionLagMs }},
	{Name: "min.insync.replicas", Type: typeInt, Default: "1", Check: atLeast(1), Synonym: "min.insync.replicas",
		Doc:        "Minimum number of in-sync replicas that must acknowledge an acks=all write.",
		topicField: func(t *TopicConfig) any { return &t.MinInsyncReplicas }},
	{Name: "preallocate", Type: typeBoolean, Default: "false", Synonym: "log.preallocate",
		Doc:        "Whether segment files are preallocated on disk.",
		topicField: func(t *TopicConfig) any { return &t.Preallocate }},
	{Name: "remote.copy.lag.bytes", Type: typeLong, Default: "-1", Check: atLeast(-1), Synonym: "log.remote.copy.lag.bytes",
		Doc:        "Bytes of newer local data after which a closed segment of a tiered topic may be copied (KIP-1241); -1 follows local.retention.bytes. Accepted without effect: see docs/compatibility.md.",
		topicField: func(t *TopicConfig) any { return &t.RemoteCopyLagBytes }},
	{Name: "remote.copy.lag.ms", Type: typeLong, Default: "0", Check: atLeast(-1), Synonym: "log.remote.copy.lag.ms",
		Doc:        "Age after which a closed segment of a tiered topic may be copied (KIP-1241); -1 follows local.retention.ms. Accepted without effect: see docs/compatibility.md.",
		topicField: func(t *TopicConfig) any { return &t.RemoteCopyLagMs }},
	{Name: "remote.log.copy.disable", Type: typeBoolean, Default: "false",
		Doc:        "Whether copying to tiered storage is stopped. See docs/tiered-storage.md.",
		topicField: func(t *TopicConfig) any { return &t.RemoteLogCopyDisable }},
	{Name: "remote.log.delete.on.disable", Type: typeBoolean, Default: "false",
		Doc:        "Whether tiered data is deleted when tiering is disabled. See docs/tiered-storage.md.",
		topicField: func(t *TopicConfig) any { return &t.RemoteLogDeleteOnDisable }},
	{Name: "remote.storage.enable", Type: typeBoolean, Default: "false",
		Doc:        "Whether the topic uses tiered storage. See docs/tiered-storage.md.",
		topicField: func(t *TopicConfig) any { return &t.RemoteStorageEnable }},
	{Name: "retention.bytes", Type: typeLong, Default: "-1", Synonym: "log.retention.bytes",
		Doc:        "Maximum size of a partition before old segments are deleted under the delete policy; -1 for no limit.",
		topicField: func(t *TopicConfig) any { return &t.RetentionBytes }},
	{Name: "retention.ms", Type: typeLong, Default: "604800000", Check: atLeast(-1), Synonym: "log.retention.ms",
		Doc:        "How long old segments are kept under the delete policy; -1 for no limit.",
		topicField: func(t *TopicConfig) any { return &t.RetentionMs }},
	{Name: "segment.bytes", Type: typeInt, Default: "1073741824", Check: atLeast(1 << 20), Synonym: "log.segment.bytes",
		Doc:        "Size of one segment file.",
		topicField: func(t *TopicConfig) any { return &t.SegmentBytes }},
	{Name: "segment.index.bytes", Type: typeInt, Default: "10485760", Check: atLeast(4), Synonym: "log.index.size.max.bytes",
		Doc:        "Size of the offset index preallocated for each segment.",
		topicField: func(t *TopicConfig) any { return &t.SegmentIndexBytes }},
	{Name: "segment.jitter.ms", Type: typeLong, Default: "0", Check: atLeast(0), Synonym: "log.roll.jitter.ms",
		Doc:        "Maximum random jitter subtracted from the segment roll time.",
		topicField: func(t *TopicConfig) any { return &t.SegmentJitterMs }},
	{Name: "segment.ms", Type: typeLong, Default: "604800000", Check: atLeast(1), Synonym: "log.roll.ms",
		Doc:        "Time after which a segment is rolled even if it is not full.",
		topicField: func(t *TopicConfig) any { return &t.SegmentMs }},
	{Name: "unclean.leader.election.enable", Type: typeBoolean, Default: "false", Synonym: "unclean.leader.election.enable",
		Doc:        "Whether a replica outside the ISR may become leader as a last resort, losing data.",
		topicField: func(t *TopicConfig) any { return &t.UncleanLeaderElection }},
}

var topicKeyIndex = indexTopicKeys()

func indexTopicKeys() map[string]int {
	index := make(map[string]int, len(topicKeys))
	for i, k := range topicKeys {
		if _, dup := index[k.Name]; dup {
			panic("config: topic key defined twice: " + k.Name)
		}
		if k.Synonym != "" {
			if _, ok := brokerKeyIndex[k.Synonym]; !ok {
				panic("config: topic key " + k.Name + " has unknown broker synonym " + k.Synonym)
			}
		}
		index[k.Name] = i
	}
	return index
}

// TopicKeys returns the topic key table, sorted by name.
func TopicKeys() []Key {
	return sortedKeys(topicKeys)
}

// LookupTopic returns the topic key called name.
func LookupTopic(name string) (Key, bool) {
	i, ok := topicKeyIndex[name]
	if !ok {
		return Key{}, false
	}
	return topicKeys[i], true
}

// ValidateTopicConfigs checks topic overrides as given to CreateTopics,
// AlterConfigs or IncrementalAlterConfigs: every key must be a topic key
// (ErrUnknownKey otherwise), every value valid for it (ErrInvalidValue), and
// the values consistent with each other and with the topic defaults. A nil
// value is rejected, as Kafka rejects null topic config values. Keys are
// checked in sorted order so the error is deterministic.
//
// It judges as a broker with tiered storage off and Kafka's topic defaults;
// Broker.ValidateTopicConfigs judges against a broker's configuration.
func ValidateTopicConfigs(m map[string]*string) error {
	return validateTopicConfigs(m, nil)
}

// ValidateTopicConfigs is the package function judged against this broker:
// its defaults stand in for keys not given, and remote.storage.enable is
// accepted when remote.log.storage.system.enable is on.
func (b *Broker) ValidateTopicConfigs(m map[string]*string) error {
	return validateTopicConfigs(m, b)
}

func validateTopicConfigs(m map[string]*string, b *Broker) error {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	// Names first, as Kafka's LogConfig.validateNames runs before any value
	// is parsed.
	for _, name := range names {
		if _, ok := topicKeyIndex[name]; !ok {
			return &Error{Kind: ErrUnknownKey, Key: name, Message: "Unknown topic config name: " + name}
		}
	}
	values := make(map[string]string, len(m))
	for _, name := range names {
		i := topicKeyIndex[name]
		if m[name] == nil {
			return &Error{Kind: ErrInvalidValue, Key: name, Message: "Null value not supported for topic configs: " + name}
		}
		value, err := topicKeys[i].validate(*m[name])
		if err != nil {
			return err
		}
		values[name] = value
	}
	return validateTopicRelations(values, b)
}

// validateTopicRelations checks the constraints between topic keys, taking
// Kafka's topic defaults for keys not given.
func validateTopicRelations(values map[string]string, b *Broker) error {
	get := func(name string) string {
		if v, ok := values[name]; ok {
			return v
		}
		k := &topicKeys[topicKeyIndex[name]]
		if b != nil && k.Synonym != "" {
			return b.serverDefault(k.Synonym)
		}
		return k.Default
	}
	minLag, _ := strconv.ParseInt(get("min.compaction.lag.ms"), 10, 64)
	maxLag, _ := strconv.ParseInt(get("max.compaction.lag.ms"), 10, 64)
	if minLag > maxLag {
		return &Error{Kind: ErrInvalidValue, Key: "min.compaction.lag.ms", Message: fmt.Sprintf(
			"conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag)}
	}
	return validateTieredTopic(get, b != nil && b.Tier.RemoteLogStorageSystemEnable)
}

// topicValue returns the effective value of topic key k: the override if
// there is a valid one, else the broker's value for the key's synonym, else
// Kafka's topic default.
func (b *Broker) topicValue(k *Key, overrides map[string]string) (string, bool) {
	if raw, ok := overrides[k.Name]; ok {
		if value, err := k.validate(raw); err == nil {
			return value, true
		}
	}
	if k.Synonym != "" {
		return b.serverDefault(k.Synonym), false
	}
	return k.Default, false
}

// serverDefault is the broker's effective value for a topic key's synonym,
// the value Kafka's KafkaConfig.extractLogConfigMap passes to LogConfig:
// derived for the keys that fall back to others.
func (b *Broker) serverDefault(synonym string) string {
	switch synonym {
	case "log.retention.ms":
		return strconv.FormatInt(b.LogRetentionMs, 10)
	case "log.roll.ms":
		return strconv.FormatInt(b.LogRollMs, 10)
	case "log.roll.jitter.ms":
		return strconv.FormatInt(b.LogRollJitterMs, 10)
	case "log.flush.interval.ms":
		return strconv.FormatInt(b.LogFlushIntervalMs, 10)
	}
	return b.effective[synonym]
}

// ResolveTopic returns the effective configuration of a topic with the given
// overrides. Overrides should have passed ValidateTopicConfigs; an unknown
// key is ignored and an invalid value falls back to the broker default, so
// a bad stored override cannot stop a partition from loading.
func (b *Broker) ResolveTopic(overrides map[string]string) TopicConfig {
	var t TopicConfig
	for i := range topicKeys {
		k := &topicKeys[i]
		value, _ := b.topicValue(k, overrides)
		if err := setField(k.topicField(&t), k, value); err != nil {
			_ = setField(k.topicField(&t), k, k.Default)
		}
	}
	return t
}
