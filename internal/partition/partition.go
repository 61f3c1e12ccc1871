// Package partition holds the broker's view of one partition it hosts: the
// log, the replica state (leader epoch, high watermark) and the producer
// state that makes idempotent appends safe to retry. It also wakes the
// delayed operations (long-poll fetches) waiting for new data.
package partition

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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

	mu struct {
		sync.Mutex
		leaderEpoch int32
		producers   map[int64]*producerState
	}

	watchers watcherSet
	config   atomic.Pointer[config.TopicConfig]
}

// Config is the topic's effective configuration.
func (p *Partition) Config() *config.TopicConfig { return p.config.Load() }

// New wraps an opened log.
func New(topic string, index int32, topicID metadata.UUID, l *log.Log, leaderEpoch int32) *Partition {
	p := &Partition{Topic: topic, Index: index, TopicID: topicID, Log: l}
	p.mu.leaderEpoch = leaderEpoch
	p.mu.producers = map[int64]*producerState{}
	// With one replica every appended record is committed.
	l.UpdateHighWatermark(l.LogEndOffset())
	return p
}

// HighWatermark is the offset below which records are committed and visible
// to consumers. With one replica it equals the log end offset.
// Invariant: LogStartOffset <= HighWatermark <= LogEndOffset.
func (p *Partition) HighWatermark() int64 { return p.Log.HighWatermark() }

// LastStableOffset is the offset below which no transaction is open. Until
// transactions land it equals the high watermark.
func (p *Partition) LastStableOffset() int64 { return p.Log.HighWatermark() }

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

// Append appends a validated batch as leader. It enforces idempotence for
// batches with a producer id: a retried batch returns its original offsets,
// a gap in sequence numbers or a stale epoch is refused with Kafka's error.
// The returned *kerr.Error is nil on success.
func (p *Partition) Append(batch []byte, h record.Header, logAppendTime int64) (AppendResult, *kerr.Error, error) {
	p.mu.Lock()
	var producer *producerState
	if h.ProducerID >= 0 {
		var dup *cachedBatch
		var kerrCode *kerr.Error
		producer, dup, kerrCode = p.checkProducerLocked(h)
		if kerrCode != nil {
			p.mu.Unlock()
			return AppendResult{}, kerrCode, nil
		}
		if dup != nil {
			p.mu.Unlock()
			return AppendResult{BaseOffset: dup.firstOffset, LogAppendTime: -1, LogStartOffset: p.Log.LogStartOffset()}, nil, nil
		}
	}
	if logAppendTime >= 0 {
		if err := record.SetLogAppendTime(batch, logAppendTime); err != nil {
			p.mu.Unlock()
			return AppendResult{}, kerr.CorruptMessage, err
		}
	}
	res, err := p.Log.Append(batch, p.mu.leaderEpoch)
	if err != nil {
		p.mu.Unlock()
		if errors.Is(err, log.ErrStorage) {
			return AppendResult{}, kerr.KafkaStorageError, err
		}
		return AppendResult{}, kerr.UnknownServerError, err
	}
	if producer != nil {
		producer.record(h, res.BaseOffset)
	}
	p.Log.UpdateHighWatermark(p.Log.LogEndOffset())
	start := res.LogStartOffset
	p.mu.Unlock()
	p.watchers.notify()
	return AppendResult{BaseOffset: res.BaseOffset, LogAppendTime: logAppendTime, LogStartOffset: start}, nil, nil
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
