package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Limits on what one benchmark may ask for, so a typo cannot exhaust the
// machine.
const (
	// RecordBytesMax bounds the value size; Kafka's default
	// max.message.bytes is about 1 MiB.
	RecordBytesMax = 16 << 20
	// ProducersMax bounds the number of concurrent producer clients.
	ProducersMax = 256
	// KeysMax bounds the number of distinct keys a key distribution uses.
	KeysMax = 1 << 24
	// timestampBytes is the size of the send time embedded in end-to-end
	// records.
	timestampBytes = 8
	// flushTimeoutMax bounds the wait for outstanding records once a
	// producer stops sending.
	flushTimeoutMax = 60 * time.Second
)

// Defaults shared by the CLI and the comparison program. They follow
// Kafka 4.x producer defaults where franz-go allows (linger 5 ms, 5 requests
// in flight, 32 MiB buffer), and franz-go's 1 MB batch limit rather than
// Kafka's 16 KiB batch.size, which would make throughput a measure of
// request count.
const (
	DefaultRecordBytes       = 1024
	DefaultLinger            = 5 * time.Millisecond
	DefaultBatchBytes        = 1_000_000
	DefaultBufferBytes       = 32 << 20
	DefaultMaxInFlight       = 5
	DefaultFetchMaxBytes     = 50 << 20
	DefaultPartitionMaxBytes = 1 << 20
	DefaultFetchMaxWait      = 500 * time.Millisecond
	DefaultProgressInterval  = time.Second
)

// Acks is the producer's required acknowledgements: 0, 1 or -1 (all).
type Acks int

// ParseAcks reads "0", "1", "all" or "-1".
func ParseAcks(s string) (Acks, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "0":
		return 0, nil
	case "1":
		return 1, nil
	case "all", "-1":
		return -1, nil
	}
	return 0, fmt.Errorf("bench: invalid acks %q: want 0, 1 or all", s)
}

func (a Acks) String() string {
	if a < 0 {
		return "all"
	}
	return strconv.Itoa(int(a))
}

func (a Acks) kgo() kgo.Acks {
	switch a {
	case 0:
		return kgo.NoAck()
	case 1:
		return kgo.LeaderAck()
	}
	return kgo.AllISRAcks()
}

// ParseCompression reads none, gzip, snappy, lz4 or zstd.
func ParseCompression(s string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("bench: invalid compression %q: want none, gzip, snappy, lz4 or zstd", s)
}

// KeyKind is how records are keyed and so partitioned.
type KeyKind int

const (
	// KeysNone sends null keys; franz-go's default sticky partitioner fills
	// one partition's batch at a time.
	KeysNone KeyKind = iota
	// KeysRoundRobin sends null keys to each partition in turn, one record
	// each: many small batches, the load of many light partitions.
	KeysRoundRobin
	// KeysRandom picks one of Count keys uniformly at random.
	KeysRandom
	// KeysSequential cycles through Count keys in order.
	KeysSequential
)

// KeyDistribution is a key kind and, for keyed kinds, the number of keys.
type KeyDistribution struct {
	Kind  KeyKind
	Count int
}

// ParseKeyDistribution reads "none", "round-robin", "random:N" or
// "sequential:N".
func ParseKeyDistribution(s string) (KeyDistribution, error) {
	name, countText, hasCount := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	var d KeyDistribution
	switch name {
	case "", "none":
		d.Kind = KeysNone
	case "round-robin", "roundrobin":
		d.Kind = KeysRoundRobin
	case "random":
		d.Kind = KeysRandom
	case "sequential", "seq":
		d.Kind = KeysSequential
	default:
		return d, fmt.Errorf("bench: invalid key distribution %q: want none, round-robin, random:N or sequential:N", s)
	}
	keyed := d.Kind == KeysRandom || d.Kind == KeysSequential
	if keyed != hasCount {
		if keyed {
			return d, fmt.Errorf("bench: key distribution %q needs a key count, as in %s:1000", s, name)
		}
		return d, fmt.Errorf("bench: key distribution %q takes no key count", s)
	}
	if keyed {
		n, err := strconv.Atoi(countText)
		if err != nil || n < 1 || n > KeysMax {
			return d, fmt.Errorf("bench: invalid key count %q: want 1 to %d", countText, KeysMax)
		}
		d.Count = n
	}
	return d, nil
}

func (d KeyDistribution) String() string {
	switch d.Kind {
	case KeysRoundRobin:
		return "round-robin"
	case KeysRandom:
		return fmt.Sprintf("random:%d", d.Count)
	case KeysSequential:
		return fmt.Sprintf("sequential:%d", d.Count)
	}
	return "none"
}

// Progress is what a running benchmark reports every interval.
type Progress struct {
	Elapsed  time.Duration
	Records  int64 // since the start
	Bytes    int64 // since the start
	Errors   int64 // since the start
	Interval time.Duration
	// IntervalRecords and IntervalBytes count the last interval alone.
	IntervalRecords int64
	IntervalBytes   int64
	// Latency digests the last interval: acknowledgement latency for
	// produce, produce-to-consume latency for end-to-end, empty for consume.
	Latency LatencySummary
}

// RecordsPerSecond is the rate over the last interval.
func (p Progress) RecordsPerSecond() float64 { return perSecond(p.IntervalRecords, p.Interval) }

// MBPerSecond is the rate over the last interval in 10^6 bytes a second.
func (p Progress) MBPerSecond() float64 { return perSecond(p.IntervalBytes, p.Interval) / 1e6 }

// Result is the outcome of one benchmark run.
type Result struct {
	Records int64
	Bytes   int64
	Errors  int64
	// FirstError is the first failure seen, if any.
	FirstError error
	Elapsed    time.Duration
	// Latency is acknowledgement latency for produce and produce-to-consume
	// latency for end-to-end.
	Latency LatencySummary
}

// RecordsPerSecond is the mean rate over the run.
func (r Result) RecordsPerSecond() float64 { return perSecond(r.Records, r.Elapsed) }

// MBPerSecond is the mean rate over the run in 10^6 bytes a second.
func (r Result) MBPerSecond() float64 { return perSecond(r.Bytes, r.Elapsed) / 1e6 }

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
