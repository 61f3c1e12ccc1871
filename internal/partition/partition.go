// Package partition holds the broker's view of one partition it hosts: the
// log, the replica state (leader epoch, high watermark) and the producer
// state that makes idempotent appends safe to retry. It also wakes the
// delayed operations (long-poll fetches) waiting for new data.
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

	producers *producerState
	// closed is set once the manager stops hosting the partition; its log
	// may live on under a new Partition, so the roll hook goes quiet.
	closed   atomic.Bool
	watchers watcherSet
	config   atomic.Pointer[config.TopicConfig]
	now      func() time.Time
	logger   *slog.Logger
}

// Options are what New needs beyond the log.
type Options struct {
	// ProducerIDExpirationMs is producer.id.expiration.ms: producers idle
	// this long are not loaded back from a snapshot.
	ProducerIDExpirationMs int64
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// Config is the topic's effective configuration.
func (p *Partition) Config() *config.TopicConfig { return p.config.Load() }

// New wraps an opened log and rebuilds its producer state from the newest
// snapshot and the batches after it.
func New(topic string, index int32, topicID metadata.UUID, l *log.Log, leaderEpoch int32, opts Options) (*Partition, error) {
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
	p.mu.leaderEpoch = leaderEpoch
	producers, err := loadProducerState(l, opts.Now().UnixMilli(), opts.ProducerIDExpirationMs, opts.Logger)
	if err != nil {
		return nil, err
	}
	p.producers = producers
	l.OnRoll(func(int64) {
		if p.closed.Load() {
			return
		}
		if err := p.producers.takeSnapshot(l); err != nil {
			p.logger.Warn("writing producer snapshot at roll", "partition", p, "err", err)
		}
	})
	// With one replica every appended record is committed.
	l.UpdateHighWatermark(l.LogEndOffset())
	return p, nil
}

// defaultProducerIDExpirationMs is producer.id.expiration.ms's default.
const defaultProducerIDExpirationMs = 86400000

// HighWatermark is the offset below which records are committed and visible
// to consumers. With one replica it equals the log end offset.
// Invariant: LogStartOffset <= HighWatermark <= LogEndOffset.
func (p *Partition) HighWatermark() int64 { return p.Log.HighWatermark() }

// LastStableOffset is the offset below which every transaction is decided:
// the first offset of the oldest open transaction, else the high watermark.
// read_committed consumers read up to it.
// Invariant: LastStableOffset <= HighWatermark.
func (p *Partition) LastStableOffset() int64 {
	hw := p.Log.HighWatermark()
	if first := p.producers.firstUnstable.Load(); first >= 0 && first < hw {
		return first
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
		entry, dup, code = p.producers.prepareData(h, p.Log.LogEndOffset(), opts)
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
		p.producers.commitData(entry, h, res.LastOffset)
	} else {
		p.producers.advance(res.LastOffset)
	}
	p.Log.UpdateHighWatermark(p.Log.LogEndOffset())
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
