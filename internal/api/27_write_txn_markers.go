package api

// WriteTxnMarkers (key 27), versions 0-2.
//
// Behavior:
//   - Sent by a transaction coordinator to the leaders of a transaction's
//     partitions: each partition gets a COMMIT or ABORT control batch for the
//     producer. On one node the coordinator calls WriteTxnMarkers directly.
//   - Per partition: UNKNOWN_TOPIC_OR_PARTITION for a partition that does
//     not exist, NOT_LEADER_OR_FOLLOWER for one led elsewhere,
//     INVALID_PRODUCER_EPOCH for a marker older than the producer's epoch
//     (v2 with transaction version 2: not newer, unless the transaction
//     already ended there), TRANSACTION_COORDINATOR_FENCED for a marker from
//     an older coordinator epoch, KAFKA_STORAGE_ERROR when the log is
//     offline.
//   - A marker in __consumer_offsets also completes the group's pending
//     transactional offsets: committed ones become visible, aborted ones go.
//     That runs off the request handler (the group's partition may be held
//     by a write waiting for its replicas, see offHandler) and before the
//     answer.
//   - Markers are appended with acks=-1, as Kafka's handler does: the
//     answer waits until every in-sync replica has them (bounded by
//     request.timeout.ms: REQUEST_TIMED_OUT), so a leader that dies after
//     answering cannot lose a marker the coordinator counted as written.
//     NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
//     min.insync.replicas meanwhile; the coordinator retries both.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/partition"
)

func init() { register(27, 0, 2, handleWriteTxnMarkers) }

func handleWriteTxnMarkers(b *Broker, c *call, r kmsg.Request) {
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(writeTxnMarkersErrors(r.(*kmsg.WriteTxnMarkersRequest), kerr.ClusterAuthorizationFailed))
		return
	}
	b.WriteTxnMarkers(r.(*kmsg.WriteTxnMarkersRequest), func(resp *kmsg.WriteTxnMarkersResponse) { c.reply(resp) })
}

// WriteTxnMarkers writes the markers of req into the partitions this node
// leads and calls done with the answer per partition once the markers
// written are replicated to the ISR (or could not be), possibly from
// another goroutine.
func (b *Broker) WriteTxnMarkers(req *kmsg.WriteTxnMarkersRequest, done func(*kmsg.WriteTxnMarkersResponse)) {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.Version = req.Version
	now := b.Now().UnixMilli()
	var waits []ReplicaWait
	var completions []groupCompletion
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		tv := int8(0)
		if req.Version >= 2 {
			tv = m.TransactionVersion
		}
		marker := partition.TxnMarker{
			ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, CoordinatorEpoch: m.CoordinatorEpoch,
			Commit: m.Committed, TransactionVersion: tv, TimestampMs: now,
		}
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, 0, len(t.Partitions))
			for _, idx := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = idx
				var w *ReplicaWait
				rp.ErrorCode, w = b.writeTxnMarker(t.Topic, idx, marker)
				rt.Partitions = append(rt.Partitions, rp)
				if w != nil && t.Topic == controller.ConsumerOffsetsTopic && b.Groups != nil {
					completions = append(completions, groupCompletion{partition: idx, producerID: m.ProducerID, commit: m.Committed})
				}
				if w != nil {
					// The partitions' array never grows past its
					// capacity, so the pointer stays good.
					w.code = &rt.Partitions[len(rt.Partitions)-1].ErrorCode
					waits = append(waits, *w)
				}
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	timeout := time.Duration(b.Config().RequestTimeoutMs) * time.Millisecond
	if len(completions) == 0 {
		AwaitReplicated(waits, timeout, func() { done(resp) })
		return
	}
	offHandler(func() {
		for _, gc := range completions {
			b.Groups.CompleteTransaction(gc.partition, gc.producerID, gc.commit)
		}
		AwaitReplicated(waits, timeout, func() { done(resp) })
	})
}

// groupCompletion is a marker written to __consumer_offsets whose group
// offsets are still to complete.
type groupCompletion struct {
	partition  int32
	producerID int64
	commit     bool
}

func (b *Broker) writeTxnMarker(topic string, idx int32, m partition.TxnMarker) (int16, *ReplicaWait) {
	p := b.Partitions.Get(topic, idx)
	if p == nil {
		return notHostedError(b, topic, idx).Code, nil
	}
	offset, code, err := p.AppendTxnMarker(m)
	if err != nil {
		b.Logger.Error("writing transaction marker", "partition", p, "producer_id", m.ProducerID, "err", err)
	}
	if code != nil {
		return code.Code, nil
	}
	return 0, &ReplicaWait{p: p, required: offset + 1}
}

// ReplicaWait is one partition whose high watermark must reach required
// (an acks=-1 append); code, when set, receives the failure.
type ReplicaWait struct {
	p        *partition.Partition
	required int64
	code     *int16
}

// NewReplicaWait waits for p's high watermark to pass lastOffset, writing
// a failure to code.
func NewReplicaWait(p *partition.Partition, lastOffset int64, code *int16) ReplicaWait {
	return ReplicaWait{p: p, required: lastOffset + 1, code: code}
}

// AwaitReplicated calls done once every wait settled: its high watermark
// reached the offset required (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the
// ISR is below min.insync.replicas by then), its partition stopped being
// led here (NOT_LEADER_OR_FOLLOWER), or timeout passed (REQUEST_TIMED_OUT
// for those still waiting). Like a delayed produce it is parked on the
// partitions' watchers and checked on a goroutine of its own when one
// fires (watchers run with partition locks held).
func AwaitReplicated(waits []ReplicaWait, timeout time.Duration, done func()) {
	op := &replicaWaitOp{waits: waits, settled: make([]bool, len(waits)), done: done}
	if op.check(false) {
		done()
		return
	}
	op.mu.Lock()
	for _, w := range waits {
		op.unwatch = append(op.unwatch, w.p.Watch(op.trigger))
	}
	op.timer = time.AfterFunc(timeout, func() {
		op.expired.Store(true)
		op.trigger()
	})
	op.mu.Unlock()
	op.trigger() // the high watermark may have moved before the watch
}

type replicaWaitOp struct {
	waits   []ReplicaWait
	done    func()
	pending atomic.Int64
	expired atomic.Bool

	mu      sync.Mutex // guards the fields below
	settled []bool
	unwatch []func()
	timer   *time.Timer
	// finished is set once done was called.
	finished bool
}

func (op *replicaWaitOp) trigger() {
	if op.pending.Add(1) == 1 {
		go op.recheck()
	}
}

func (op *replicaWaitOp) recheck() {
	for {
		seen := op.pending.Load()
		if op.check(op.expired.Load()) {
			op.finish()
			return
		}
		if op.pending.CompareAndSwap(seen, 0) {
			return
		}
	}
}

func (op *replicaWaitOp) finish() {
	op.mu.Lock()
	if op.finished {
		op.mu.Unlock()
		return
	}
	op.finished = true
	unwatch := op.unwatch
	op.unwatch = nil
	if op.timer != nil {
		op.timer.Stop()
	}
	op.mu.Unlock()
	for _, fn := range unwatch {
		fn()
	}
	op.done()
}

// check settles every wait it can, failing those left when expired, and
// reports whether none is left.
func (op *replicaWaitOp) check(expired bool) bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.finished {
		return false
	}
	left := false
	for i, w := range op.waits {
		if op.settled[i] {
			continue
		}
		var code *kerr.Error
		switch {
		case w.p.Closed():
			code = kerr.NotLeaderForPartition
		case w.p.HighWatermark() >= w.required:
			if cfg := w.p.Config(); cfg != nil && w.p.InSyncReplicaCount() < int(cfg.MinInsyncReplicas) {
				code = kerr.NotEnoughReplicasAfterAppend
			}
		case expired:
			code = kerr.RequestTimedOut
		default:
			left = true
			continue
		}
		op.settled[i] = true
		if code != nil && w.code != nil {
			*w.code = code.Code
		}
	}
	return !left
}
