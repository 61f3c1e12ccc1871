package log

import "math"

// CompactionConfig is the per-topic configuration of log compaction, with
// Kafka's names (in the comments) and defaults.
type CompactionConfig struct {
	// Enabled is cleanup.policy containing "compact": the log cleaner keeps
	// the latest record of every key. With "delete" as well, retention.ms
	// and retention.bytes still remove whole segments.
	Enabled bool
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: the log is cleaned
	// once the bytes not yet cleaned are this share of the log (0.5).
	MinCleanableDirtyRatio float64
	// DeleteRetentionMs is delete.retention.ms: how long a tombstone (and a
	// transaction marker with nothing left to mark) stays after the cleaner
	// first sees it, so consumers reading from the start see the delete.
	DeleteRetentionMs int64
	// MinCompactionLagMs is min.compaction.lag.ms: a segment holding a record
	// younger than this is not cleaned (0).
	MinCompactionLagMs int64
	// MaxCompactionLagMs is max.compaction.lag.ms: a dirty record older than
	// this makes the log cleanable whatever its dirty ratio (math.MaxInt64).
	MaxCompactionLagMs int64
}

// Kafka's compaction defaults.
const (
	DefaultMinCleanableDirtyRatio = 0.5
	DefaultDeleteRetentionMs      = 24 * 60 * 60 * 1000
)

// DefaultCompactionConfig returns Kafka's topic defaults (compaction off).
func DefaultCompactionConfig() CompactionConfig {
	return CompactionConfig{
		MinCleanableDirtyRatio: DefaultMinCleanableDirtyRatio,
		DeleteRetentionMs:      DefaultDeleteRetentionMs,
		MaxCompactionLagMs:     math.MaxInt64,
	}
}

func (c CompactionConfig) normalized() CompactionConfig {
	if c.MinCleanableDirtyRatio < 0 || c.MinCleanableDirtyRatio > 1 || math.IsNaN(c.MinCleanableDirtyRatio) {
		c.MinCleanableDirtyRatio = DefaultMinCleanableDirtyRatio
	}
	c.DeleteRetentionMs = max(c.DeleteRetentionMs, 0)
	c.MinCompactionLagMs = max(c.MinCompactionLagMs, 0)
	if c.MaxCompactionLagMs <= 0 {
		c.MaxCompactionLagMs = math.MaxInt64
	}
	return c
}

// CleanerOptions configure the broker's log cleaner, with Kafka's
// log.cleaner.* names and defaults.
type CleanerOptions struct {
	// Enable is log.cleaner.enable (true in Kafka; false in the zero value,
	// so a Manager runs no cleaner unless asked to).
	Enable bool
	// Threads is log.cleaner.threads (1): logs cleaned at the same time; 0
	// runs no cleaner.
	Threads int
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size (128 MiB): the
	// memory of all threads' offset maps together. One pass cleans at most
	// as many keys as fit; the rest waits for the next pass.
	DedupeBufferSize int64
	// DedupeBufferLoadFactor is log.cleaner.io.buffer.load.factor (0.9): how
	// full an offset map may get.
	DedupeBufferLoadFactor float64
	// IOBufferSize is log.cleaner.io.buffer.size (512 KiB): the read and
	// write buffers of all threads together. A batch larger than a thread's
	// share is read whole all the same.
	IOBufferSize int
	// IOMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second: the
	// cleaner's reads plus writes are throttled below it (unlimited).
	IOMaxBytesPerSecond float64
	// BackoffMs is log.cleaner.backoff.ms (15000): how long a thread sleeps
	// when no log needs cleaning.
	BackoffMs int64
	// ProducerIDExpirationMs is producer.id.expiration.ms (86400000): the
	// last batch of a producer seen this recently is kept, if only as an
	// empty batch, so its sequence survives a restart.
	ProducerIDExpirationMs int64
}

// Kafka's log cleaner defaults.
const (
	DefaultCleanerDedupeBufferSize       = 128 << 20
	DefaultCleanerDedupeBufferLoadFactor = 0.9
	DefaultCleanerIOBufferSize           = 512 << 10
	DefaultCleanerBackoffMs              = 15000
	DefaultProducerIDExpirationMs        = 86400000
	// minCleanerIOBufferBytes keeps a thread's buffers useful when the
	// configured total is tiny.
	minCleanerIOBufferBytes = 64 << 10
)

func (o CleanerOptions) withDefaults() CleanerOptions {
	if o.Threads < 0 || !o.Enable {
		o.Threads = 0
	}
	if o.DedupeBufferSize <= 0 {
		o.DedupeBufferSize = DefaultCleanerDedupeBufferSize
	}
	if o.DedupeBufferLoadFactor <= 0 || o.DedupeBufferLoadFactor > 1 {
		o.DedupeBufferLoadFactor = DefaultCleanerDedupeBufferLoadFactor
	}
	if o.IOBufferSize <= 0 {
		o.IOBufferSize = DefaultCleanerIOBufferSize
	}
	if o.IOMaxBytesPerSecond <= 0 || math.IsNaN(o.IOMaxBytesPerSecond) {
		o.IOMaxBytesPerSecond = math.MaxFloat64
	}
	if o.BackoffMs <= 0 {
		o.BackoffMs = DefaultCleanerBackoffMs
	}
	if o.ProducerIDExpirationMs <= 0 {
		o.ProducerIDExpirationMs = DefaultProducerIDExpirationMs
	}
	return o
}

// perThread returns the dedupe memory and the size of each of the read and
// write buffers of one thread.
func (o CleanerOptions) perThread() (dedupeBytes int64, ioBufferBytes int) {
	threads := max(o.Threads, 1)
	return o.DedupeBufferSize / int64(threads), max(o.IOBufferSize/threads/2, minCleanerIOBufferBytes)
}
