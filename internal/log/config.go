package log

import (
	"log/slog"
	"math"
	"time"
)

// Config is the per-topic storage configuration, with Kafka's names (in the
// comments) and defaults.
type Config struct {
	// SegmentBytes is segment.bytes: a segment rolls before it grows past this.
	SegmentBytes int64
	// SegmentMs is segment.ms: a segment rolls once its first batch is this old.
	SegmentMs int64
	// SegmentJitterMs is segment.jitter.ms: a random amount up to this is taken
	// off SegmentMs for each segment so partitions do not roll together.
	SegmentJitterMs int64
	// SegmentIndexBytes is segment.index.bytes: the preallocated size of each
	// index file; a full index rolls the segment.
	SegmentIndexBytes int32
	// IndexIntervalBytes is index.interval.bytes: bytes of log between offset
	// index entries.
	IndexIntervalBytes int32
	// FlushMessages is flush.messages: fsync after this many messages
	// (math.MaxInt64 = never; replication gives durability).
	FlushMessages int64
	// FlushMs is flush.ms: fsync when the last flush is this old
	// (math.MaxInt64 = never). Enforced by the Manager's flush loop.
	FlushMs int64
	// RetentionMs is retention.ms: delete closed segments whose newest record
	// is older than this (-1 = unlimited).
	RetentionMs int64
	// RetentionBytes is retention.bytes: delete the oldest closed segments while
	// the log is larger than this (-1 = unlimited).
	RetentionBytes int64
	// FileDeleteDelayMs is file.delete.delay.ms: how long a deleted segment's
	// files stay open (renamed *.deleted) so in-flight reads can finish.
	FileDeleteDelayMs int64
	// Preallocate is preallocate: reserve SegmentBytes on disk for each new
	// segment file.
	Preallocate bool
	// RetentionDelete is cleanup.policy containing "delete" (the default). When
	// false, retention.ms and retention.bytes are not enforced; segments below
	// the log start offset still are.
	RetentionDelete bool
	// Compaction is cleanup.policy containing "compact" and the settings of
	// the log cleaner for this log (cleaner_config.go).
	Compaction CompactionConfig
	// RemoteStorage is remote.storage.enable on a broker with
	// remote.log.storage.system.enable (KIP-405): the log's oldest data
	// may live in the remote tier only, so the log start offset may lie
	// below the first local segment, and retention of local segments
	// follows LocalRetentionMs and LocalRetentionBytes without moving the
	// log start offset (tier.go).
	RemoteStorage bool
	// LocalRetentionMs and LocalRetentionBytes are local.retention.ms and
	// local.retention.bytes with -2 resolved to retention.*; they apply
	// only with RemoteStorage (-1 = unlimited).
	LocalRetentionMs    int64
	LocalRetentionBytes int64
	// RemoteCopyDisable is remote.log.copy.disable (KIP-950): nothing more
	// is copied, and deleting local segments moves the log start offset,
	// as on an untiered log.
	RemoteCopyDisable bool
}

// Kafka's defaults.
const (
	DefaultSegmentBytes       = 1 << 30
	DefaultSegmentMs          = 7 * 24 * 60 * 60 * 1000
	DefaultSegmentIndexBytes  = 10 << 20
	DefaultIndexIntervalBytes = 4096
	DefaultRetentionMs        = 7 * 24 * 60 * 60 * 1000
	DefaultFileDeleteDelayMs  = 60000
)

// DefaultConfig returns Kafka's default topic storage configuration.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       DefaultSegmentBytes,
		SegmentMs:          DefaultSegmentMs,
		SegmentJitterMs:    0,
		SegmentIndexBytes:  DefaultSegmentIndexBytes,
		IndexIntervalBytes: DefaultIndexIntervalBytes,
		FlushMessages:      math.MaxInt64,
		FlushMs:            math.MaxInt64,
		RetentionMs:        DefaultRetentionMs,
		RetentionBytes:     -1,
		FileDeleteDelayMs:  DefaultFileDeleteDelayMs,
		Preallocate:        false,
		RetentionDelete:    true,
		Compaction:         DefaultCompactionConfig(),
	}
}

// normalized returns c with out-of-range values replaced by usable ones, so a
// zero Config or a bad dynamic update cannot wedge the log.
func (c Config) normalized() Config {
	d := DefaultConfig()
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = d.SegmentBytes
	}
	// Offsets and positions in the index are 32-bit.
	c.SegmentBytes = min(c.SegmentBytes, math.MaxInt32)
	if c.SegmentMs <= 0 {
		c.SegmentMs = d.SegmentMs
	}
	if c.SegmentJitterMs < 0 {
		c.SegmentJitterMs = 0
	}
	if c.SegmentIndexBytes <= 0 {
		c.SegmentIndexBytes = d.SegmentIndexBytes
	}
	// At least a few entries of each index, so a roll always makes room.
	c.SegmentIndexBytes = max(c.SegmentIndexBytes, minIndexBytes)
	if c.IndexIntervalBytes < 0 {
		c.IndexIntervalBytes = d.IndexIntervalBytes
	}
	if c.FlushMessages <= 0 {
		c.FlushMessages = 1
	}
	if c.FlushMs < 0 {
		c.FlushMs = 0
	}
	if c.FileDeleteDelayMs < 0 {
		c.FileDeleteDelayMs = 0
	}
	c.Compaction = c.Compaction.normalized()
	if c.Compaction.Enabled {
		// As Kafka's LogConfig.maxSegmentMs: the active segment, which is
		// never cleaned, rolls in time for max.compaction.lag.ms.
		c.SegmentMs = min(c.SegmentMs, c.Compaction.MaxCompactionLagMs)
	}
	return c
}

// OpenOptions are the inputs to Open that come from outside the partition
// directory: the broker's checkpoints and environment.
type OpenOptions struct {
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// Logger receives recovery and retention messages; slog.Default when nil.
	Logger *slog.Logger
	// RecoveryPoint is this partition's entry in recovery-point-offset-checkpoint:
	// every offset below it was flushed. Recovery re-validates from here.
	RecoveryPoint int64
	// LogStartOffset is this partition's entry in log-start-offset-checkpoint
	// (0 when absent).
	LogStartOffset int64
	// HighWatermark is this partition's entry in replication-offset-checkpoint
	// (0 when absent); see Log.UpdateHighWatermark.
	HighWatermark int64
	// HadCleanShutdown is true when the log dir held the clean shutdown
	// marker: the log opens without scanning its segments.
	HadCleanShutdown bool
}

func (o OpenOptions) withDefaults() OpenOptions {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
