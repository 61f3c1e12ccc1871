package config

import (
	"fmt"
	"strconv"
	"strings"
)

// TierConfig is the broker's tiered-storage configuration (KIP-405), Kafka's
// RemoteLogManagerConfig plus the bucket of Samsa's built-in remote storage
// manager. Tiered storage is off unless RemoteLogStorageSystemEnable is set.
type TierConfig struct {
	RemoteLogStorageSystemEnable bool
	// BucketURL names the object store (internal/blob), under Kafka's
	// remote.log.storage.manager.impl.prefix, rsm.config.
	BucketURL string
	// BucketPrefix starts every object key, so clusters can share a bucket.
	BucketPrefix string
	// RestoreEnable brings the bucket's topics back into a cluster that
	// lacks them (samsa.tiered.restore.enable).
	RestoreEnable bool

	TaskIntervalMs               int64
	TaskRetryBackoffMs           int64
	TaskRetryBackoffMaxMs        int64
	TaskRetryJitter              float64
	ThreadPoolSize               int32
	CopierThreadPoolSize         int32
	ExpirationThreadPoolSize     int32
	ReaderThreads                int32
	ReaderMaxPendingTasks        int32
	FetchMaxWaitMs               int32
	IndexFileCacheTotalSizeBytes int64
	CopyMaxBytesPerSecond        int64
	FetchMaxBytesPerSecond       int64
	CustomMetadataMaxBytes       int32
	ListOffsetsRequestTimeoutMs  int64
	LocalRetentionMs             int64 // log.local.retention.ms; -2 inherits
	LocalRetentionBytes          int64 // log.local.retention.bytes; -2 inherits
}

// tierBrokerKeys are the broker keys of tiered storage: Kafka 4.x's
// remote.log.* and log.local.retention.* keys with Kafka's defaults, and the
// bucket keys of Samsa's built-in RemoteStorageManager under Kafka's
// rsm.config. prefix.
var tierBrokerKeys = []Key{
	{Name: "remote.log.storage.system.enable", Type: typeBoolean, Default: "false",
		Doc:         "Whether tiered storage is enabled on this broker: closed segments of topics with remote.storage.enable=true are copied to the bucket named by rsm.config.bucket.url and served from it once local retention has deleted them.",
		brokerField: func(b *Broker) any { return &b.Tier.RemoteLogStorageSystemEnable }},
	{Name: "rsm.config.bucket.url", Type: typeString, Default: "", Sensitive: true,
		Doc:         "Samsa: the object store tiered segments go to, as a URL: file:///path, s3://bucket?region=R (AWS), or s3://bucket?endpoint=http://host:port&use_path_style=true&region=R for any S3-compatible service. Credentials come from the AWS SDK's standard chain (environment, shared files, instance roles), never from this URL.",
		brokerField: func(b *Broker) any { return &b.Tier.BucketURL }},
	{Name: "rsm.config.bucket.prefix", Type: typeString, Default: "",
		Check:       objectKeyPrefix,
		Doc:         "Samsa: a prefix for every object key in the bucket, so several clusters can share one bucket.",
		brokerField: func(b *Broker) any { return &b.Tier.BucketPrefix }},
	{Name: "samsa.tiered.restore.enable", Type: typeBoolean, Default: "false",
		Doc:         "Samsa: restore tiered topics from the bucket. The active controller creates every topic of the bucket's cluster manifest that the cluster lacks, under its old topic id, with its partition count, replication factor and configs, and each broker starts the logs of its replicas where the bucket ends, so they are readable from their log start. Meant for the first start of a cluster on empty data directories; turn it off once the topics are back. Needs remote.log.storage.system.enable=true.",
		brokerField: func(b *Broker) any { return &b.Tier.RestoreEnable }},
	{Name: "remote.log.storage.manager.impl.prefix", Type: typeString, Default: "rsm.config.", Check: oneOf("rsm.config."),
		Doc: "Prefix of the remote storage manager's keys. Samsa's storage manager is built in and reads rsm.config.*."},
	{Name: "remote.log.metadata.manager.impl.prefix", Type: typeString, Default: "rlmm.config.", Check: oneOf("rlmm.config."),
		Doc: "Prefix of the remote log metadata manager's keys. Samsa's metadata manager is built in and has none."},
	{Name: "remote.log.manager.task.interval.ms", Type: typeLong, Default: "30000", Check: atLeast(1),
		Doc:         "Interval at which the remote log manager copies segments and expires remote segments of each partition.",
		brokerField: func(b *Broker) any { return &b.Tier.TaskIntervalMs }},
	{Name: "remote.log.manager.task.retry.backoff.ms", Type: typeLong, Default: "500", Check: atLeast(1),
		Doc:         "Initial wait before a failed remote log manager task is tried again.",
		brokerField: func(b *Broker) any { return &b.Tier.TaskRetryBackoffMs }},
	{Name: "remote.log.manager.task.retry.backoff.max.ms", Type: typeLong, Default: "30000", Check: atLeast(1),
		Doc:         "Longest wait before a failed remote log manager task is tried again; the wait doubles up to it.",
		brokerField: func(b *Broker) any { return &b.Tier.TaskRetryBackoffMaxMs }},
	{Name: "remote.log.manager.task.retry.jitter", Type: typeDouble, Default: "0.2", Check: betweenDouble(0, 0.5),
		Doc:         "Random jitter factor applied to the retry backoff: a wait is multiplied by a value in [1-jitter, 1+jitter).",
		brokerField: func(b *Broker) any { return &b.Tier.TaskRetryJitter }},
	{Name: "remote.log.manager.thread.pool.size", Type: typeInt, Default: "2", Check: atLeast(1),
		Doc:         "Workers of the follower tasks of the remote log manager (reading remote metadata for partitions this broker follows).",
		brokerField: func(b *Broker) any { return &b.Tier.ThreadPoolSize }},
	{Name: "remote.log.manager.copier.thread.pool.size", Type: typeInt, Default: "10", Check: atLeast(1),
		Doc:         "Workers copying segments to the remote tier; at most this many uploads run at once.",
		brokerField: func(b *Broker) any { return &b.Tier.CopierThreadPoolSize }},
	{Name: "remote.log.manager.expiration.thread.pool.size", Type: typeInt, Default: "10", Check: atLeast(1),
		Doc:         "Workers deleting expired remote segments.",
		brokerField: func(b *Broker) any { return &b.Tier.ExpirationThreadPoolSize }},
	{Name: "remote.log.reader.threads", Type: typeInt, Default: "10", Check: atLeast(1),
		Doc:         "Workers serving fetches from the remote tier.",
		brokerField: func(b *Broker) any { return &b.Tier.ReaderThreads }},
	{Name: "remote.log.reader.max.pending.tasks", Type: typeInt, Default: "100", Check: atLeast(1),
		Doc:         "Most remote reads waiting for a reader; when the queue is full a fetch of remote data is answered with an error.",
		brokerField: func(b *Broker) any { return &b.Tier.ReaderMaxPendingTasks }},
	{Name: "remote.fetch.max.wait.ms", Type: typeInt, Default: "500", Check: atLeast(1), Dynamic: true,
		Doc:         "Longest a fetch waits for data from the remote tier before it is answered with what it has.",
		brokerField: func(b *Broker) any { return &b.Tier.FetchMaxWaitMs }},
	{Name: "remote.log.index.file.cache.total.size.bytes", Type: typeLong, Default: "1073741824", Check: atLeast(1), Dynamic: true,
		Doc:         "Disk space for the cache of remote index files and read chunks.",
		brokerField: func(b *Broker) any { return &b.Tier.IndexFileCacheTotalSizeBytes }},
	{Name: "remote.log.manager.copy.max.bytes.per.second", Type: typeLong, Default: longMax, Check: atLeast(1), Dynamic: true,
		Doc:         "Upper bound of the rate at which this broker copies to the remote tier (KIP-956).",
		brokerField: func(b *Broker) any { return &b.Tier.CopyMaxBytesPerSecond }},
	{Name: "remote.log.manager.fetch.max.bytes.per.second", Type: typeLong, Default: longMax, Check: atLeast(1), Dynamic: true,
		Doc:         "Upper bound of the rate at which this broker reads from the remote tier (KIP-956).",
		brokerField: func(b *Broker) any { return &b.Tier.FetchMaxBytesPerSecond }},
	{Name: "remote.log.metadata.custom.metadata.max.bytes", Type: typeInt, Default: "128", Check: atLeast(0),
		Doc:         "Largest custom metadata a remote storage manager may attach to a segment.",
		brokerField: func(b *Broker) any { return &b.Tier.CustomMetadataMaxBytes }},
	{Name: "remote.list.offsets.request.timeout.ms", Type: typeLong, Default: "30000", Check: atLeast(1), Dynamic: true,
		Doc:         "Longest a ListOffsets by timestamp waits for the remote tier (KIP-1075).",
		brokerField: func(b *Broker) any { return &b.Tier.ListOffsetsRequestTimeoutMs }},
	{Name: "log.local.retention.ms", Type: typeLong, Default: "-2", Check: atLeast(-2), Dynamic: true,
		Doc:         "How long local segments of a tiered topic are kept once copied; -2 uses log.retention.ms. Must not exceed log.retention.ms.",
		brokerField: func(b *Broker) any { return &b.Tier.LocalRetentionMs }},
	{Name: "log.local.retention.bytes", Type: typeLong, Default: "-2", Check: atLeast(-2), Dynamic: true,
		Doc:         "Largest local size of a partition of a tiered topic once copied; -2 uses log.retention.bytes. Must not exceed log.retention.bytes.",
		brokerField: func(b *Broker) any { return &b.Tier.LocalRetentionBytes }},
	{Name: "log.remote.copy.lag.ms", Type: typeLong, Default: "0", Check: atLeast(-1), Dynamic: true,
		Doc: "Age after which a closed segment may be copied to the remote tier (KIP-1241); -1 follows log.local.retention.ms. Topic override: remote.copy.lag.ms."},
	{Name: "log.remote.copy.lag.bytes", Type: typeLong, Default: "-1", Check: atLeast(-1), Dynamic: true,
		Doc: "Bytes of newer local data after which a closed segment may be copied to the remote tier (KIP-1241); -1 follows log.local.retention.bytes. Topic override: remote.copy.lag.bytes."},
}

// objectKeyPrefix accepts an empty prefix or one of path-safe characters
// ending in a slash.
func objectKeyPrefix(v string) string {
	if v == "" {
		return ""
	}
	if strings.HasPrefix(v, "/") || !strings.HasSuffix(v, "/") || strings.Contains(v, "..") {
		return "a bucket prefix must not start with /, must end with /, and must not contain .."
	}
	return ""
}

// validateTier checks the tiered-storage keys against each other and the
// retention keys, as Kafka's KafkaConfig does when remote storage is on.
func (b *Broker) validateTier() error {
	t := b.Tier
	if !t.RemoteLogStorageSystemEnable {
		if t.RestoreEnable {
			return relation("samsa.tiered.restore.enable", "samsa.tiered.restore.enable=true needs remote.log.storage.system.enable=true and the bucket to restore from")
		}
		return nil
	}
	if t.BucketURL == "" {
		return relation("rsm.config.bucket.url", "remote.log.storage.system.enable=true needs rsm.config.bucket.url, the object store tiered segments go to")
	}
	retentionMs := b.LogRetentionMs
	if t.LocalRetentionMs != -2 && retentionMs != -1 && (t.LocalRetentionMs == -1 || t.LocalRetentionMs > retentionMs) {
		return invalidValue("log.local.retention.ms", strconv.FormatInt(t.LocalRetentionMs, 10), fmt.Sprintf(
			"Value must not be more than log.retention.ms property value: %d", retentionMs))
	}
	retentionBytes, _ := b.int64Of("log.retention.bytes")
	if t.LocalRetentionBytes != -2 && retentionBytes != -1 && (t.LocalRetentionBytes == -1 || t.LocalRetentionBytes > retentionBytes) {
		return invalidValue("log.local.retention.bytes", strconv.FormatInt(t.LocalRetentionBytes, 10), fmt.Sprintf(
			"Value must not be more than log.retention.bytes property value: %d", retentionBytes))
	}
	return nil
}

// validateTieredTopic checks a topic's tiered-storage keys as Kafka's
// LogConfig does: remote.storage.enable needs the broker's
// remote.log.storage.system.enable and the delete cleanup policy alone, and
// local.retention.* (-2 inherits retention.*) must not exceed retention.*.
// get returns a key's value, given or default.
func validateTieredTopic(get func(string) string, systemEnabled bool) error {
	if get("remote.storage.enable") != "true" {
		return nil
	}
	if !systemEnabled {
		return &Error{Kind: ErrInvalidValue, Key: "remote.storage.enable",
			Message: "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."}
	}
	if contains(splitList(get("cleanup.policy")), "compact") {
		return &Error{Kind: ErrInvalidValue, Key: "remote.storage.enable",
			Message: "Remote log storage only supports topics with cleanup.policy=delete"}
	}
	for _, pair := range [][2]string{{"local.retention.ms", "retention.ms"}, {"local.retention.bytes", "retention.bytes"}} {
		local, _ := strconv.ParseInt(get(pair[0]), 10, 64)
		total, _ := strconv.ParseInt(get(pair[1]), 10, 64)
		if local == -2 || total == -1 {
			continue
		}
		if local == -1 {
			return &Error{Kind: ErrInvalidValue, Key: pair[0], Message: fmt.Sprintf(
				"Value must not be -1 as %s value is set as %d.", pair[1], total)}
		}
		if local > total {
			return &Error{Kind: ErrInvalidValue, Key: pair[0], Message: fmt.Sprintf(
				"Value must not be more than %s property value: %d", pair[1], total)}
		}
	}
	// A positive copy lag must not exceed the effective local retention
	// (KIP-1241), size first, as Kafka's LogConfig checks them.
	for _, keys := range [][3]string{{"remote.copy.lag.bytes", "local.retention.bytes", "retention.bytes"}, {"remote.copy.lag.ms", "local.retention.ms", "retention.ms"}} {
		lag, _ := strconv.ParseInt(get(keys[0]), 10, 64)
		local, _ := strconv.ParseInt(get(keys[1]), 10, 64)
		if local == -2 {
			local, _ = strconv.ParseInt(get(keys[2]), 10, 64)
		}
		if lag > 0 && local >= 0 && lag > local {
			return invalidValue(keys[0], strconv.FormatInt(lag, 10), fmt.Sprintf("Value must not exceed %s (effective value: %d)", keys[1], local))
		}
	}
	return nil
}

// EffectiveLocalRetention returns a tiered topic's local retention time and
// size with -2 resolved to retention.ms and retention.bytes.
func (t TopicConfig) EffectiveLocalRetention() (retentionMs, retentionBytes int64) {
	retentionMs, retentionBytes = t.LocalRetentionMs, t.LocalRetentionBytes
	if retentionMs == -2 {
		retentionMs = t.RetentionMs
	}
	if retentionBytes == -2 {
		retentionBytes = t.RetentionBytes
	}
	return retentionMs, retentionBytes
}
