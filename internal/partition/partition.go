// Package partition holds the broker's view of one partition it hosts: the
// log, the replica state (leader epoch, high watermark, last stable offset)
// and the producer state that makes idempotent appends safe to retry and
// tracks transactions. It also wakes the delayed operations (long-poll
// fetches) waiting for new data.
//
// # Producer state
//
// Per producer id (Kafka's ProducerStateManager): the epoch, the last 5
// batches (first/last sequence and offset, to recognise retries), the epoch
// of the transaction coordinator that wrote the last marker, and the first
// offset of the producer's open transaction. The open transactions, and the
// decided ones whose marker is not yet below the high watermark, give the
// last stable offset: the first offset of the oldest one, else the high
// watermark. An ABORT marker ending a transaction with data here is
// recorded in the segment's .txnindex (package log) with the LSO at that
// point, for read_committed fetches.
//
// The state is written as a snapshot file when a segment rolls (named by
// the new segment's base offset) and at clean shutdown (named by the log
// end offset). Opening a partition loads the newest readable snapshot at or
// below the log end and replays only the batches after it; producers idle
// for producer.id.expiration.ms are not loaded. Two snapshots are kept.
//
// # <offset>.snapshot, Kafka's producer snapshot version 1
//
// All integers big-endian:
//
//	offset  size  field
//	     0     2  version      int16: 1
//	     2     4  crc          uint32: CRC-32C of every byte from offset 6 to the end
//	     6     4  count        int32: number of entries
//	    10    46  entries[count]:
//	                 0  8  producerId             int64
//	                 8  2  epoch                  int16
//	                10  4  lastSequence           int32, -1 when no batch is cached
//	                14  8  lastOffset             int64, -1 when no batch is cached
//	                22  4  offsetDelta            int32: lastOffset - firstOffset of the last batch
//	                26  8  timestamp              int64: max timestamp of the last batch
//	                34  4  coordinatorEpoch       int32
//	                38  8  currentTxnFirstOffset  int64, -1 when no transaction is open
//
// Only the last batch of each producer is kept, as in Kafka: after a restart
// a retry of an older batch gets OUT_OF_ORDER_SEQUENCE_NUMBER rather than
// being recognised as a duplicate. A role change on a running node (follower
// to leader or back) keeps all of them: the partition opened under the new
// role takes the producer state over from memory (handoff.go).
package partition

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/record"
)

// Partition is one hosted partition.
type Partition struct {
	Topic   string
	Index   int32
	TopicID metadata.UUID
	Log     *log.Log

	// appendMu serialises appends (data and markers), so producer-state
	// checks and the offsets they predict hold until the batch is written.
	appendMu sync.Mutex

	mu struct {
		sync.Mutex
		leaderEpoch int32
	}

	// producers is swapped whole when a follower truncates (replica.go),
	// under appendMu; fetches read it without a lock. Use state().
	producers atomic.Pointer[producerState]
	// closed is set once the manager stops hosting the partition (retire);
	// its log may live on under a new Partition, so the roll hook goes.
	closed atomic.Bool
	// unhookRoll removes this Partition's roll hook from its log.
	unhookRoll func()
	watchers   watcherSet
	config     atomic.Pointer[config.TopicConfig]
	now        func() time.Time
	logger     *slog.Logger

	// Replication state (replica.go): replicaMu guards replica and
	// replicaEpoch, the leader epoch the replica state was built for.
	replicaMu              sync.Mutex
	replica                replicaState
	replicaEpoch           int32
	producerIDExpirationMs int64
	// isrChanges counts the ISR changes this partition made as leader; nil
	// counts nothing.
	isrChanges *ISRChangeCounts
}

// Options are what New needs beyond the log.
type Options struct {
	// ProducerIDExpirationMs is producer.id.expiration.ms: producers idle
	// this long are not loaded back from a snapshot.
	ProducerIDExpirationMs int64
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
	// ISRChanges, when set, counts the ISR changes made as leader.
	ISRChanges *ISRChangeCounts
}

// Config is the topic's effective configuration.
func (p *Partition) Config() *config.TopicConfig { return p.config.Load() }

// New wraps an opened log and rebuilds its producer state from the newest
// snapshot and the batches after it.
func New(topic string, index int32, topicID metadata.UUID, l *log.Log, leaderEpoch int32, opts Options) (*Partition, error) {
	return open(topic, index, topicID, l, leaderEpoch, opts, nil)
}

// open is New taking over the producer state from the Partition that hosted
// l before, when from fits l (handoff.go).
func open(topic string, index int32, topicID metadata.UUID, l *log.Log, leaderEpoch int32, opts Options, from *handoff) (*Partition, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ProducerIDExpirationMs <= 0 {
		opts.ProducerIDExpirationMs = defaultProducerIDExpirationMs
	}
	p := &Partition{Topic: topic, Index: index, TopicID: topicID, Log: l, now: opts.Now, logger: opts.Logger}
	p.producerIDExpirationMs = opts.ProducerIDExpirationMs
	p.isrChanges = opts.ISRChanges
	p.mu.leaderEpoch = leaderEpoch
	nowMs := opts.Now().UnixMilli()
	if producers := from.producersFor(topicID, l); producers != nil {
		// As loading a snapshot would, forget the producers expired by now.
		producers.removeExpired(nowMs, opts.ProducerIDExpirationMs)
		p.producers.Store(producers)
	} else {
		producers, err := loadProducerState(l, nowMs, opts.ProducerIDExpirationMs, opts.Logger)
		if err != nil {
			return nil, err
		}
		p.producers.Store(producers)
	}
	// Registered last, so a failed open leaves no hook behind; retire
	// removes it.
	p.unhookRoll = l.OnRoll(func(int64) {
		if p.closed.Load() {
			return // a roll that raced with retire
		}
		if err := p.state().takeSnapshot(l); err != nil {
			p.logger.Warn("writing producer snapshot at roll", "partition", p, "err", err)
		}
	})
	// The high watermark stays what the log recovered (its
	// replication-offset-checkpoint entry): a leader advances it once it
	// knows its in-sync replicas have the records (UpdateReplicaState; at
	// once with a single replica), so a node that restarts as leader does
	// not expose records the ISR may lack.
	return p, nil
}

// state is the current producer state (see producers).
func (p *Partition) state() *producerState { return p.producers.Load() }

// retire marks the partition closed and removes its roll hook: its log may
// be hosted by the next Partition, which registers its own. Idempotent.
func (p *Partition) retire() {
	p.closed.Store(true)
	p.unhookRoll()
}

// defaultProducerIDExpirationMs is producer.id.expiration.ms's default.
const defaultProducerIDExpirationMs = 86400000

// HighWatermark is the offset below which records are committed and visible
// to consumers. With one replica it equals the log end offset.
// Invariant: LogStartOffset <= HighWatermark <= LogEndOffset.
func (p *Partition) HighWatermark() int64 { return p.Log.HighWatermark() }

// LastStableOffset is the offset below which every transaction is decided
// for good: the first offset of the oldest transaction still open or whose
// marker is not yet below the high watermark, else the high watermark.
// read_committed consumers read up to it.
// Invariant: LogStartOffset <= LastStableOffset <= HighWatermark.
func (p *Partition) LastStableOffset() int64 {
	hw := p.Log.HighWatermark()
	if first := p.state().firstUnstableOffset(hw); first >= 0 && first < hw {
		// Retention or DeleteRecords may have removed the transaction's
		// start; the LSO never falls below the log start.
		return max(first, p.Log.LogStartOffset())
	}
	return hw
}

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.leaderEpoch
}

// SetLeaderEpoch updates the leader epoch after a leadership change.
func (p *Partition) SetLeaderEpoch(epoch int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.leaderEpoch = epoch
}

// AppendResult is the outcome of a produce append.
type AppendResult struct {
	BaseOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset int64
}

// AppendOptions qualify an append.
type AppendOptions struct {
	// LogAppendTime stamps the batch with this time when >= 0.
	LogAppendTime int64
	Origin        Origin
	// RequireVerification refuses a client's transactional batch with
	// INVALID_TXN_STATE unless the producer already has a transaction open
	// here at the batch's epoch or Verification is the producer's current
	// guard (transaction.partition.verification.enable, KIP-890).
	RequireVerification bool
	Verification        *TxnVerification
}

// Append appends a client's validated batch as leader (see AppendWith).
func (p *Partition) Append(batch []byte, h record.Header, logAppendTime int64) (AppendResult, *kerr.Error, error) {
	return p.AppendWith(batch, h, AppendOptions{LogAppendTime: logAppendTime, Origin: OriginClient})
}

// AppendWith appends a validated batch as leader. It enforces Kafka's
// producer rules for batches with a producer id: a retried batch returns
// its original offsets, a gap in sequence numbers answers
// OUT_OF_ORDER_SEQUENCE_NUMBER, a stale epoch INVALID_PRODUCER_EPOCH, a
// non-transactional batch inside an open transaction INVALID_TXN_STATE. The
// returned *kerr.Error is nil on success.
func (p *Partition) AppendWith(batch []byte, h record.Header, opts AppendOptions) (AppendResult, *kerr.Error, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return AppendResult{}, kerr.NotLeaderForPartition, nil
	}
	var entry producerEntry
	if h.HasProducerID() {
		var dup *batchMetadata
		var code *kerr.Error
		entry, dup, code = p.state().prepareData(h, p.Log.LogEndOffset(), opts)
		if code != nil {
			return AppendResult{}, code, nil
		}
		if dup != nil {
			return AppendResult{BaseOffset: dup.firstOffset, LogAppendTime: -1, LogStartOffset: p.Log.LogStartOffset()}, nil, nil
		}
	}
	if opts.LogAppendTime >= 0 {
		if err := record.SetLogAppendTime(batch, opts.LogAppendTime); err != nil {
			return AppendResult{}, kerr.CorruptMessage, err
		}
	}
	res, err := p.Log.Append(batch, p.LeaderEpoch())
	if err != nil {
		return AppendResult{}, appendErrorCode(err), err
	}
	if h.HasProducerID() {
		p.state().commitData(entry, h, res.LastOffset)
	} else {
		p.state().advance(res.LastOffset)
	}
	p.maybeIncrementHighWatermark()
	p.watchers.notify()
	return AppendResult{BaseOffset: res.BaseOffset, LogAppendTime: opts.LogAppendTime, LogStartOffset: res.LogStartOffset}, nil, nil
}

func appendErrorCode(err error) *kerr.Error {
	if errors.Is(err, log.ErrStorage) {
		return kerr.KafkaStorageError
	}
	return kerr.UnknownServerError
}

// Watch registers fn to be called (from the appending goroutine, so it must
// not block) after each append or log change. It returns a function that
// removes the watcher.
func (p *Partition) Watch(fn func()) (unwatch func()) { return p.watchers.add(fn) }

// Notify wakes the watchers, e.g. after the log start offset moved.
func (p *Partition) Notify() { p.watchers.notify() }

// DeleteRecordsBefore advances the log start offset (DeleteRecords). offset
// -1 means the high watermark.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, *kerr.Error) {
	hw := p.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, kerr.OffsetOutOfRange
	}
	if err := p.Log.DeleteRecordsBefore(offset); err != nil {
		if errors.Is(err, log.ErrStorage) {
			return -1, kerr.KafkaStorageError
		}
		return -1, kerr.UnknownServerError
	}
	p.watchers.notify()
	return p.Log.LogStartOffset(), nil
}

func (p *Partition) String() string { return fmt.Sprintf("%s-%d", p.Topic, p.Index) }

// watcherSet is a set of callbacks run on every change.
type watcherSet struct {
	mu     sync.Mutex
	nextID uint64
	fns    map[uint64]func()
}

func (w *watcherSet) add(fn func()) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[uint64]func(){}
	}
	id := w.nextID
	w.nextID++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.fns, id)
	}
}

func (w *watcherSet) notify() {
	w.mu.Lock()
	if len(w.fns) == 0 {
		w.mu.Unlock()
		return
	}
	fns := make([]func(), 0, len(w.fns))
	for _, fn := range w.fns {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
