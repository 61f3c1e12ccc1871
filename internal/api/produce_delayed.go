package api

// Delayed produce (Kafka's DelayedProduce): an acks=-1 produce answers
// once every in-sync replica has each appended batch, that is once the
// partition's high watermark passes the batch's last offset, or when the
// request's timeout ends (REQUEST_TIMED_OUT for the partitions still
// waiting). Fewer in-sync replicas than min.insync.replicas refuses the
// batch before it is appended (NOT_ENOUGH_REPLICAS); an ISR that shrank
// below it while the batch waited answers NOT_ENOUGH_REPLICAS_AFTER_APPEND,
// and a partition that stopped being led here NOT_LEADER_OR_FOLLOWER. The
// request is parked like a long-poll fetch and woken by the partitions'
// watchers (high watermark moves, role changes); no goroutine sleeps on it.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
)

// checkMinInsyncReplicas refuses an acks=-1 batch when the ISR is smaller
// than the topic's min.insync.replicas.
func checkMinInsyncReplicas(req *kmsg.ProduceRequest, p *partition.Partition) *kerr.Error {
	if req.Acks != -1 {
		return nil
	}
	if cfg := p.Config(); cfg != nil && p.InSyncReplicaCount() < int(cfg.MinInsyncReplicas) {
		return kerr.NotEnoughReplicas
	}
	return nil
}

// produceWait is one partition of a delayed produce.
type produceWait struct {
	p        *partition.Partition
	sp       *kmsg.ProduceResponseTopicPartition
	required int64 // the high watermark the batch needs
	done     bool
}

// produceOp is an acks=-1 produce waiting for its replicas.
type produceOp struct {
	b     *Broker
	c     *call
	resp  *kmsg.ProduceResponse
	waits []*produceWait

	finished atomic.Bool
	pending  atomic.Int64
	mu       sync.Mutex // guards waits' done and the response
	timer    *time.Timer
	unwatch  []func()
}

// replyProduce answers at once unless acks=-1 batches still wait for
// their replicas, in which case the request is parked.
func (b *Broker) replyProduce(c *call, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) {
	if req.Acks != -1 {
		c.reply(resp)
		return
	}
	op := &produceOp{b: b, c: c, resp: resp}
	for ti := range resp.Topics {
		st := &resp.Topics[ti]
		for pi := range st.Partitions {
			sp := &st.Partitions[pi]
			if sp.ErrorCode != 0 || sp.BaseOffset < 0 {
				continue
			}
			p := b.Partitions.Get(st.Topic, sp.Partition)
			if p == nil {
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				continue
			}
			required := sp.BaseOffset + 1
			if h, ok := requestBatchHeader(req, st.Topic, sp.Partition); ok {
				required = sp.BaseOffset + int64(h.LastOffsetDelta) + 1
			}
			op.waits = append(op.waits, &produceWait{p: p, sp: sp, required: required})
		}
	}
	if op.check() {
		c.reply(resp)
		return
	}
	op.park(time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond)
}

// requestBatchHeader finds the header of the batch the request sent to
// topic/partition.
func requestBatchHeader(req *kmsg.ProduceRequest, topic string, partition int32) (record.Header, bool) {
	for _, rt := range req.Topics {
		if rt.Topic != topic {
			continue
		}
		for _, rp := range rt.Partitions {
			if rp.Partition == partition {
				h, err := record.ParseHeader(rp.Records)
				return h, err == nil
			}
		}
	}
	return record.Header{}, false
}

// check settles every wait it can and reports whether none is left.
func (op *produceOp) check() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	left := false
	for _, w := range op.waits {
		if w.done {
			continue
		}
		switch {
		case w.p.Closed():
			w.sp.ErrorCode = kerr.NotLeaderForPartition.Code
			w.done = true
		case w.p.HighWatermark() >= w.required:
			if cfg := w.p.Config(); cfg != nil && w.p.InSyncReplicaCount() < int(cfg.MinInsyncReplicas) {
				w.sp.ErrorCode = kerr.NotEnoughReplicasAfterAppend.Code
			}
			w.done = true
		default:
			left = true
		}
	}
	return !left
}

func (op *produceOp) park(timeout time.Duration) {
	op.mu.Lock()
	op.b.parked.Store(op, struct{}{})
	for _, w := range op.waits {
		op.unwatch = append(op.unwatch, w.p.Watch(op.trigger))
	}
	op.timer = time.AfterFunc(timeout, op.expire)
	op.mu.Unlock()
	if op.b.closing.Load() {
		op.expire()
		return
	}
	op.trigger()
}

// trigger coalesces wake-ups into one checking goroutine, as fetchOp does.
func (op *produceOp) trigger() {
	if op.pending.Add(1) == 1 {
		go op.recheck()
	}
}

func (op *produceOp) recheck() {
	for {
		seen := op.pending.Load()
		if op.finished.Load() {
			return
		}
		if op.check() {
			op.complete()
			return
		}
		if op.pending.CompareAndSwap(seen, 0) {
			return
		}
	}
}

// expire answers with REQUEST_TIMED_OUT for the partitions still waiting.
func (op *produceOp) expire() {
	if op.finished.Load() {
		return
	}
	if op.check() {
		op.complete()
		return
	}
	op.mu.Lock()
	for _, w := range op.waits {
		if !w.done {
			w.sp.ErrorCode = kerr.RequestTimedOut.Code
			w.done = true
		}
	}
	op.mu.Unlock()
	op.complete()
}

func (op *produceOp) complete() {
	if !op.finished.CompareAndSwap(false, true) {
		return
	}
	op.mu.Lock()
	if op.timer != nil {
		op.timer.Stop()
	}
	for _, u := range op.unwatch {
		u()
	}
	op.b.parked.Delete(op)
	op.c.reply(op.resp)
	op.mu.Unlock()
}
