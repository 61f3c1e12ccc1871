package api

// ShareFetch (key 78), versions 1-2, served by the leader of each
// partition: records acquired for one member of a share group (KIP-932).
//
// Behavior:
//   - v0 was Kafka 4.0's early access and is not served. v2 (KIP-1206,
//     KIP-1222) adds ShareAcquireMode and IsRenewAck; acquisition here is
//     per record and strict either way (MaxRecords is never exceeded).
//   - Share sessions (share.Sessions, group.share.max.share.sessions): epoch
//     0 opens one (acknowledgements with it are INVALID_REQUEST), replacing
//     the member's previous one without releasing what it acquired (the
//     member may still acknowledge it; its locks time out otherwise), -1
//     applies the acknowledgements, closes it and releases what the member
//     still holds on its partitions, and fetches nothing; any other epoch
//     must be the session's next (INVALID_SHARE_SESSION_EPOCH,
//     SHARE_SESSION_NOT_FOUND), adds the request's partitions and drops the
//     forgotten ones.
//   - Piggybacked acknowledgements are applied first, all of a partition's
//     or none (INVALID_RECORD_STATE for records not acquired by the member
//     or outside the share-partition, INVALID_REQUEST for malformed
//     batches), answered in AcknowledgeErrorCode.
//   - Each partition of the session acquires from its first available
//     offset, up to the high watermark (the last stable offset with the
//     group config share.isolation.level=read_committed, whose aborted
//     records are archived), at most MaxRecords in all; the
//     record batches holding acquired offsets are returned whole with the
//     AcquiredRecords ranges, and the client drops the rest.
//   - A share-partition starts at the log end when first fetched
//     (share.auto.offset.reset=latest, Kafka's default), or at the log
//     start with the group config share.auto.offset.reset=earliest; locks
//     last share.record.lock.duration.ms (group config) or
//     group.share.record.lock.duration.ms.
//   - With nothing acquired and MaxWaitMillis > 0 the request is parked
//     until an append to one of its partitions, a lock timing out on one,
//     or the deadline. A share-partition whose state cannot be loaded yet
//     (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
//     NOT_COORDINATOR: __share_group_state still loading on a fresh node)
//     parks the request too and is read again every 100 ms; the error is
//     answered only at the deadline, as Kafka's fetch waits for its
//     persister's retries.
//   - Partitions this node does not lead answer NOT_LEADER_OR_FOLLOWER
//     with the current leader and its endpoint.
//   - GROUP READ on the group (top-level GROUP_AUTHORIZATION_FAILED),
//     TOPIC READ on each topic (TOPIC_AUTHORIZATION_FAILED per partition).

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(78, 1, 2, handleShareFetch) }

// shareLoadRecheckMs is how soon a parked ShareFetch reads again a
// share-partition whose share coordinator could not load it yet.
const shareLoadRecheckMs = 100

// shareFetchDefaultMaxRecords bounds a request that names no MaxRecords
// (Kafka's max.poll.records default).
const shareFetchDefaultMaxRecords = 500

func handleShareFetch(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ShareFetchRequest)
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	fail := func(code *kerr.Error, message string) {
		resp.ErrorCode = code.Code
		if message != "" {
			resp.ErrorMessage = strptr(message)
		}
		c.reply(resp)
	}
	group, member := derefString(req.GroupID), derefString(req.MemberID)
	switch {
	case !b.sharesEnabled():
		fail(kerr.UnsupportedVersion, "")
		return
	// Kafka's order: the group is authorized first, then the member id
	// parsed (INVALID_REQUEST when it is not one), then the group id
	// checked.
	case !b.authorize(c, opRead, resGroup, group):
		fail(kerr.GroupAuthorizationFailed, "")
		return
	case member == "":
		fail(kerr.InvalidRequest, "MemberId can't be empty.")
		return
	case group == "":
		fail(kerr.InvalidGroupID, "")
		return
	}
	hasAcks := false
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			hasAcks = hasAcks || len(p.AcknowledgementBatches) > 0
		}
	}
	if req.ShareSessionEpoch == share.InitialEpoch && hasAcks {
		fail(kerr.InvalidRequest, "Acknowledge data present in the initial fetch request.")
		return
	}
	img := b.Image()
	nowMs := b.Now().UnixMilli()
	readable := b.topicChecker(c, opRead)
	op := &shareFetchOp{b: b, c: c, req: req, group: group, member: member, results: map[share.TopicPartition]*kmsg.ShareFetchResponseTopicPartition{}}
	var closed *share.Session
	code := b.shares().sessions.Use(share.SessionKey{Group: group, Member: member}, req.ShareSessionEpoch, nowMs, func(s *share.Session) {
		if req.ShareSessionEpoch == share.FinalEpoch {
			closed = s
			return
		}
		// A replaced session's acquisitions are not released: the
		// member still holds them, as in Kafka (ShareSessionCache.remove
		// on an initial epoch), and may acknowledge them in this session.
		// Releasing them here raced with a request of the old session
		// still being served (a ShareFetch the client gave up on): this
		// request acquired the released records again for the same
		// member, the old request's ACCEPT then acknowledged them, and the
		// member's ACCEPT of the redelivery was refused with
		// INVALID_RECORD_STATE.
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				s.Add(share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition})
			}
		}
		for _, f := range req.ForgottenTopicsData {
			for _, p := range f.Partitions {
				s.Remove(share.TopicPartition{TopicID: f.TopicID, Partition: p})
			}
		}
		op.fetching = append(op.fetching, s.Partitions...)
	})
	if code != 0 {
		fail(kerr.ErrorForCode(code).(*kerr.Error), "")
		return
	}
	// Acknowledgements first, then what the session fetches.
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition}
			target := b.resolveSharePartition(img, t.TopicID, p.Partition)
			if target.topic != "" && !readable.allowed(target.topic) {
				op.result(tp).ErrorCode = kerr.TopicAuthorizationFailed.Code
				op.denied(tp)
				continue
			}
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			batches := make([]share.AckBatch, len(p.AcknowledgementBatches))
			for i, a := range p.AcknowledgementBatches {
				batches[i] = shareAckBatch(a.FirstOffset, a.LastOffset, a.AcknowledgeTypes)
			}
			op.result(tp).AcknowledgeErrorCode = b.acknowledgeShare(group, member, target, batches, req.IsRenewAck, nowMs)
		}
	}
	if closed != nil {
		b.releaseShareSession(group, member, closed)
		op.respond()
		return
	}
	if req.IsRenewAck {
		// A renewing request only extends locks (KIP-1222).
		op.respond()
		return
	}
	if op.read() || req.MaxWaitMillis <= 0 || b.closing.Load() {
		op.respond()
		return
	}
	op.park()
}

// shareFetchOp is one ShareFetch, possibly parked for records.
type shareFetchOp struct {
	b             *Broker
	c             *call
	req           *kmsg.ShareFetchRequest
	group, member string
	// fetching are the session's partitions to acquire from.
	fetching []share.TopicPartition
	// skipped are partitions answered with an authorization error.
	skipped map[share.TopicPartition]bool
	results map[share.TopicPartition]*kmsg.ShareFetchResponseTopicPartition
	order   []share.TopicPartition
	leaders map[int32]bool

	mu      sync.Mutex // serializes reads of a parked op
	done    atomic.Bool
	pending atomic.Int64
	// loading is set by a read that found a share-partition it could not
	// load yet (its share coordinator still loading or moving); the
	// parked op reads again shortly instead of answering the error.
	loading atomic.Bool
	// final is set for the read at the deadline, which answers such
	// errors.
	final   atomic.Bool
	parking struct {
		sync.Mutex
		timer   *time.Timer
		unwatch []func()
	}
}

func (op *shareFetchOp) result(tp share.TopicPartition) *kmsg.ShareFetchResponseTopicPartition {
	if r := op.results[tp]; r != nil {
		return r
	}
	r := kmsg.NewShareFetchResponseTopicPartition()
	r.Partition = tp.Partition
	r.CurrentLeader.LeaderID, r.CurrentLeader.LeaderEpoch = -1, -1
	op.results[tp] = &r
	op.order = append(op.order, tp)
	return &r
}

func (op *shareFetchOp) denied(tp share.TopicPartition) {
	if op.skipped == nil {
		op.skipped = map[share.TopicPartition]bool{}
	}
	op.skipped[tp] = true
}

// read acquires records on every partition of the session and reports
// whether the answer should go out now (records or errors).
func (op *shareFetchOp) read() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.done.Load() {
		return true
	}
	for _, r := range op.results {
		if len(r.AcquiredRecords) > 0 {
			return true // acquired by an earlier read; not answered yet
		}
	}
	b := op.b
	img := b.Image()
	nowMs := b.Now().UnixMilli()
	maxRecords := int(op.req.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = shareFetchDefaultMaxRecords
	}
	remainingBytes := op.req.MaxBytes
	if remainingBytes <= 0 {
		remainingBytes = b.Config().MessageMaxBytes * 50
	}
	answerNow := false
	op.loading.Store(false)
	for _, tp := range op.fetching {
		if op.skipped[tp] || maxRecords <= 0 {
			continue
		}
		partitionMaxBytes := remainingBytes
		for _, t := range op.req.Topics {
			for _, p := range t.Partitions {
				if t.TopicID == tp.TopicID && p.Partition == tp.Partition && p.PartitionMaxBytes > 0 {
					partitionMaxBytes = min(partitionMaxBytes, p.PartitionMaxBytes)
				}
			}
		}
		target := b.resolveSharePartition(img, tp.TopicID, tp.Partition)
		if target.code != 0 {
			r := op.result(tp)
			r.ErrorCode = target.code
			if target.code == kerr.NotLeaderForPartition.Code {
				r.CurrentLeader.LeaderID, r.CurrentLeader.LeaderEpoch = currentLeader(img, target)
				op.noteLeader(r.CurrentLeader.LeaderID)
			}
			answerNow = true
			continue
		}
		got := b.acquireShareRecords(op.group, op.member, target, partitionMaxBytes, maxRecords, nowMs)
		if got.code != 0 && share.RetriableStateError(got.code) && op.req.MaxWaitMillis > 0 && !op.final.Load() && !b.closing.Load() {
			// Kafka's fetch waits while its persister retries; here the
			// parked op reads again (shareLoadRecheckMs).
			op.loading.Store(true)
			continue
		}
		if got.code != 0 {
			op.result(tp).ErrorCode = got.code
			answerNow = true
			continue
		}
		if len(got.acquired) == 0 {
			continue
		}
		r := op.result(tp)
		r.Records = got.records
		for _, a := range got.acquired {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.FirstOffset, a.LastOffset, a.DeliveryCount
			r.AcquiredRecords = append(r.AcquiredRecords, ar)
			maxRecords -= int(a.LastOffset - a.FirstOffset + 1)
		}
		remainingBytes -= int32(len(got.records))
		answerNow = true
	}
	for _, r := range op.results {
		if r.ErrorCode != 0 || r.AcknowledgeErrorCode != 0 {
			answerNow = true
		}
	}
	return answerNow
}

func (op *shareFetchOp) noteLeader(id int32) {
	if id < 0 {
		return
	}
	if op.leaders == nil {
		op.leaders = map[int32]bool{}
	}
	op.leaders[id] = true
}

// respond answers the request with what was gathered, once.
func (op *shareFetchOp) respond() {
	if !op.done.CompareAndSwap(false, true) {
		return
	}
	op.parking.Lock()
	if op.parking.timer != nil {
		op.parking.timer.Stop()
	}
	for _, u := range op.parking.unwatch {
		u()
	}
	op.parking.Unlock()
	if _, parked := op.b.parked.LoadAndDelete(op); parked {
		op.b.Metrics.FetchParkedAdd(-1)
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	resp := op.req.ResponseKind().(*kmsg.ShareFetchResponse)
	resp.AcquisitionLockTimeoutMillis = int32(op.b.shareSettings(op.group).partition.RecordLockDurationMs)
	byTopic := map[[16]byte]int{}
	for _, tp := range op.order {
		i, ok := byTopic[tp.TopicID]
		if !ok {
			i = len(resp.Topics)
			byTopic[tp.TopicID] = i
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = tp.TopicID
			resp.Topics = append(resp.Topics, t)
		}
		rp := *op.results[tp]
		if rp.Records == nil {
			// Kafka's schema has records non-nullable: the Java client
			// refuses a null.
			rp.Records = []byte{}
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	if len(op.leaders) > 0 {
		resp.NodeEndpoints = shareNodeEndpoints(op.c, op.b.Image(), op.leaders)
	}
	op.c.reply(resp)
}

// park waits for records: an append to a partition of the session, a
// lock timing out on one, or the deadline.
func (op *shareFetchOp) park() {
	b := op.b
	op.parking.Lock()
	b.parked.Store(op, struct{}{})
	b.Metrics.FetchParkedAdd(1)
	img := b.Image()
	for _, tp := range op.fetching {
		if t := b.resolveSharePartition(img, tp.TopicID, tp.Partition); t.p != nil {
			op.parking.unwatch = append(op.parking.unwatch, t.p.Watch(op.trigger))
		}
	}
	wait := time.Duration(op.req.MaxWaitMillis) * time.Millisecond
	deadline := b.Now().Add(wait)
	op.parking.timer = time.AfterFunc(wait, op.expire)
	if lockMs, ok := b.shareLockDeadline(op.group, op.fetching); ok {
		if lock := time.UnixMilli(lockMs); lock.Before(deadline) {
			time.AfterFunc(max(time.Until(lock), 0)+time.Millisecond, op.trigger)
		}
	}
	op.parking.Unlock()
	if b.closing.Load() {
		op.expire()
		return
	}
	op.trigger() // records may have arrived before the watches
}

func (op *shareFetchOp) trigger() {
	if op.pending.Add(1) == 1 {
		go op.recheck()
	}
}

func (op *shareFetchOp) recheck() {
	for {
		seen := op.pending.Load()
		if op.done.Load() {
			return
		}
		if op.read() {
			op.respond()
			return
		}
		if op.loading.Load() {
			time.AfterFunc(shareLoadRecheckMs*time.Millisecond, op.trigger)
		}
		if op.pending.CompareAndSwap(seen, 0) {
			return
		}
	}
}

// expire answers at the deadline with whatever a last read finds.
func (op *shareFetchOp) expire() {
	if op.done.Load() {
		return
	}
	op.final.Store(true)
	op.read()
	op.respond()
}
