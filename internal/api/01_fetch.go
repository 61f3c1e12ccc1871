package api

// Fetch (key 1), versions 4-18.
//
// Behavior:
//   - Record bytes are not copied: each partition's data is a list of file
//     regions that the network layer sends with sendfile on plaintext
//     connections, so the response is written by hand (fetch_writer.go)
//     rather than through kmsg.
//   - read_uncommitted reads up to the high watermark, read_committed (v4+)
//     up to the last stable offset (the first offset of the oldest open
//     transaction). A read_committed answer lists the aborted transactions
//     (producer id, first offset) overlapping the batches returned, from
//     the segments' .txnindex, so the client drops their records; a
//     read_uncommitted answer carries a null list.
//   - The first partition with data may exceed max_bytes and
//     partition_max_bytes by one whole batch (KIP-74), so a consumer never
//     stalls on a large batch; later partitions stop at the limits.
//   - An offset below the log start or above the log end answers
//     OFFSET_OUT_OF_RANGE. Any failed partition tells a consumer high
//     watermark, last stable offset and log start -1, as Kafka does; a
//     follower gets the real ones (it restarts its log at the log start).
//   - v9+ current_leader_epoch: older answers FENCED_LEADER_EPOCH, newer
//     UNKNOWN_LEADER_EPOCH.
//   - v12+ last_fetched_epoch from a follower: a diverged log answers
//     DivergingEpoch with no records, at once (fetch_replica.go).
//   - v13+ names topics by id; an unknown id answers UNKNOWN_TOPIC_ID.
//   - v17 (KIP-853) adds a follower's replica_directory_id and v18
//     (KIP-1166) its high_watermark, both tagged fields for the metadata
//     quorum's followers; a broker's partitions do not use them, and the
//     response is the same as v16's.
//   - When fewer than min_bytes are available and max_wait_ms > 0 the request
//     is parked as a delayed operation and completed by the next append to
//     any of its partitions or by its deadline; no goroutine sleeps on it.
//   - Fetch sessions (KIP-227, v7+): see fetch_session.go.
//   - Fetching from the closest replica (KIP-392, v11+): a leader may name
//     a preferred read replica instead of answering with records, and a
//     follower serves consumers; see fetch_follower.go.
//   - Replication throttles (KIP-73): a catching-up follower's throttled
//     partitions get no records while the leader's replication quota is
//     exceeded; see fetch_throttle.go.

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
)

func init() { register(1, 4, 18, handleFetch) }

// fetchPartitionResult is what one partition contributes to a response.
type fetchPartitionResult struct {
	topic          string
	topicID        metadata.UUID
	partition      int32
	errorCode      int16
	highWatermark  int64
	lastStable     int64
	logStartOffset int64
	regions        []log.Region
	// remote holds whole batches read from the remote tier
	// (fetch_remote.go), written after regions; bytes counts both.
	remote []byte
	bytes  int64
	// readCommitted makes the aborted transactions list non-null.
	readCommitted bool
	aborted       []log.AbortedTxn
	// fromFollower is set when this node read the partition as a follower
	// (fetch_follower.go).
	fromFollower bool
	// preferredReadReplica is the replica the consumer should read from
	// instead, when hasPreferredReadReplica (v11+).
	preferredReadReplica    int32
	hasPreferredReadReplica bool
	// divergingEpoch answers a follower whose log diverged (KIP-320, v12+;
	// fetch_replica.go): no records, truncate first.
	divergingEpoch *partition.EpochEndOffset
	// replicationThrottled marks a catching-up follower's throttled
	// partition, whose bytes count against the leader's replication quota
	// (fetch_throttle.go).
	replicationThrottled bool
}

// fetchTarget is one partition a fetch reads, with its resolved position.
type fetchTarget struct {
	topic       string
	topicID     metadata.UUID
	partition   int32
	offset      int64
	leaderEpoch int32
	// lastFetchedEpoch is a follower's (v12+), -1 when absent.
	lastFetchedEpoch int32
	maxBytes         int32
	// logStartOffset is what a follower reports of its log (v5+; -1 from
	// consumers).
	logStartOffset int64
	// unknownTopicCode is set when the topic itself could not be resolved.
	unknownTopicCode int16
}

func handleFetch(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.FetchRequest)
	targets, session, sessionErr := b.fetchSessions().resolve(b, c.version, req)
	if sessionErr != nil {
		c.req.Respond(fetchErrorResponse(c.version, sessionErr.Code))
		return
	}
	b.authorizeFetch(c, fetchReplicaID(c.version, req), targets)
	op := &fetchOp{
		b: b, c: c, req: req, targets: targets, session: session,
		readCommitted: c.version >= 4 && req.IsolationLevel == 1,
		replicaID:     fetchReplicaID(c.version, req),
	}
	c.quota.exempt = op.replicaID >= 0
	op.quotaMaxBytes = c.fetchQuotaMaxBytes()
	results, bytes, respondNow := op.read(getFetchResults())
	op.scratch = results
	if op.remoteWanted() {
		// Wait for the remote tier, not for min_bytes (fetch_remote.go).
		op.startRemote()
		return
	}
	if bytes >= op.minBytes() || req.MaxWaitMillis <= 0 || respondNow || len(targets) == 0 {
		op.respond(results)
		putFetchResults(results)
		return
	}
	op.park()
}

// fetchOp is a fetch in progress, possibly parked in the purgatory.
type fetchOp struct {
	b             *Broker
	c             *call
	req           *kmsg.FetchRequest
	targets       []fetchTarget
	session       *fetchSession
	readCommitted bool
	// scratch holds the results of the first read and of the re-checks,
	// which run one at a time, so a parked fetch woken by every append does
	// not allocate them anew each time; it comes from and goes back to
	// fetchResults. The deadline's read (expire), which may overlap a
	// re-check, uses its own.
	scratch []fetchPartitionResult
	// replicaID is the follower fetching (fetch_replica.go), -1 for a
	// consumer.
	replicaID int32
	// quotaMaxBytes bounds the response under the consumer's
	// consumer_byte_rate (quota.go), math.MaxInt64 without one.
	quotaMaxBytes int64

	done    atomic.Bool
	pending atomic.Int64
	// remote is the part of the fetch read from the remote tier.
	remote remoteFetch
	// throttleWaitMs, when above zero, is how long until the replication
	// throttle lets a held partition go (fetch_throttle.go); a parked fetch
	// waits no longer than that.
	throttleWaitMs atomic.Int64

	// parking guards the timer and watches, which park sets up while a
	// trigger, the timer or a shutdown may already be completing the op.
	parking struct {
		sync.Mutex
		timer   *time.Timer
		unwatch []func()
	}
}

// read reads every target once into dst. respondNow is set when a partition has an
// error or a preferred read replica, which are answered without waiting.
func (op *fetchOp) read(dst []fetchPartitionResult) (results []fetchPartitionResult, total int64, respondNow bool) {
	remaining := int64(op.req.MaxBytes)
	if op.c.version < 3 || remaining <= 0 {
		remaining = int64(op.b.Config().MessageMaxBytes) * 50
	}
	if op.quotaMaxBytes > 0 {
		remaining = min(remaining, op.quotaMaxBytes)
	}
	results = slices.Grow(dst[:0], len(op.targets))
	for i, t := range op.targets {
		res := fetchPartitionResult{topic: t.topic, topicID: t.topicID, partition: t.partition, highWatermark: -1, lastStable: -1, logStartOffset: -1, readCommitted: op.readCommitted}
		if t.unknownTopicCode != 0 {
			res.errorCode = t.unknownTopicCode
			results = append(results, res)
			respondNow = true
			continue
		}
		p, fromFollower := op.partitionFor(t)
		if p == nil {
			res.errorCode = notHostedError(op.b, t.topic, t.partition).Code
			results = append(results, res)
			respondNow = true
			continue
		}
		res.fromFollower = fromFollower
		res.highWatermark = p.HighWatermark()
		res.lastStable = p.LastStableOffset()
		res.logStartOffset = p.Log.LogStartOffset()
		if code := checkLeaderEpoch(p, t.leaderEpoch); code != 0 {
			res.errorCode = code
			op.hideOffsetsOnError(&res)
			results = append(results, res)
			respondNow = true
			continue
		}
		if id, ok := op.preferredReadReplica(p, t); ok {
			res.preferredReadReplica, res.hasPreferredReadReplica = id, true
			results = append(results, res)
			respondNow = true
			continue
		}
		upper := res.highWatermark
		if op.readCommitted {
			upper = res.lastStable
		}
		if op.replicaID >= 0 {
			p.UpdateFollowerLogStartOffset(op.replicaID, t.logStartOffset)
			var answerNow bool
			if upper, answerNow = followerFetch(p, op.replicaID, t, &res); answerNow {
				results = append(results, res)
				respondNow = true
				continue
			}
			var held bool
			if res.replicationThrottled, held = op.leaderThrottle(p, t); held {
				results = append(results, res)
				continue
			}
		}
		limit := int64(t.maxBytes)
		if limit > remaining {
			limit = remaining
		}
		minOne := total == 0
		if limit > 0 || minOne {
			rr, err := p.Log.Read(t.offset, int32(max(limit, 0)), upper, minOne)
			switch {
			case isRemoteRead(err) && op.replicaID >= 0:
				res.errorCode = kerr.OffsetMovedToTieredStorage.Code
				respondNow = true
			case isRemoteRead(err):
				if op.readRemote(i, t, p, max(limit, 0), upper, minOne, &res) {
					respondNow = true
				}
				total += res.bytes
				remaining -= res.bytes
			case errors.Is(err, log.ErrOffsetOutOfRange):
				res.errorCode = kerr.OffsetOutOfRange.Code
				respondNow = true
			case errors.Is(err, log.ErrStorage):
				res.errorCode = kerr.KafkaStorageError.Code
				respondNow = true
			case err != nil:
				res.errorCode = kerr.UnknownServerError.Code
				respondNow = true
			default:
				res.regions = rr.Regions
				res.bytes = rr.Bytes
				total += rr.Bytes
				remaining -= rr.Bytes
				if op.readCommitted && rr.Bytes > 0 {
					if code := collectAborted(p, t.offset, rr, &res); code != 0 {
						res.errorCode, res.regions, res.bytes = code, nil, 0
						respondNow = true
					}
				}
			}
		}
		op.hideOffsetsOnError(&res)
		results = append(results, res)
	}
	return results, total, respondNow
}

// hideOffsetsOnError answers a consumer's failed partition with high
// watermark, last stable offset and log start -1, as Kafka does. A
// follower keeps the real values: it restarts its log at the leader's log
// start from an OFFSET_OUT_OF_RANGE answer.
func (op *fetchOp) hideOffsetsOnError(res *fetchPartitionResult) {
	if res.errorCode != 0 && op.replicaID < 0 {
		res.highWatermark, res.lastStable, res.logStartOffset = -1, -1, -1
	}
}

// collectAborted fills the aborted transactions overlapping the batches rr
// holds, which a read_committed consumer needs to drop their records.
func collectAborted(p *partition.Partition, fetchOffset int64, rr log.ReadResult, res *fetchPartitionResult) int16 {
	end, err := rr.NextOffset()
	if err == nil {
		res.aborted, err = p.CollectAbortedTxns(fetchOffset, end)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, log.ErrStorage):
		return kerr.KafkaStorageError.Code
	}
	return kerr.UnknownServerError.Code
}

func checkLeaderEpoch(p *partition.Partition, requested int32) int16 {
	if requested < 0 {
		return 0
	}
	current := p.LeaderEpoch()
	switch {
	case requested < current:
		return kerr.FencedLeaderEpoch.Code
	case requested > current:
		return kerr.UnknownLeaderEpoch.Code
	}
	return 0
}

// park waits for data or the deadline. A broker that is shutting down does
// not park: it answers at once with what there is.
func (op *fetchOp) park() {
	op.parking.Lock()
	op.b.parked.Store(op, struct{}{})
	op.b.Metrics.FetchParkedAdd(1)
	for _, t := range op.targets {
		if p, _ := op.partitionFor(t); p != nil {
			op.parking.unwatch = append(op.parking.unwatch, p.Watch(op.trigger))
		}
	}
	waitMs := int64(op.req.MaxWaitMillis)
	if throttled := op.throttleWaitMs.Load(); throttled > 0 {
		waitMs = min(waitMs, throttled)
	}
	op.parking.timer = time.AfterFunc(time.Duration(waitMs)*time.Millisecond, op.expire)
	op.parking.Unlock()
	if op.b.closing.Load() {
		op.expire()
		return
	}
	// Data may have arrived between the first read and the watch.
	op.trigger()
}

// trigger schedules a re-check; concurrent triggers coalesce into one
// checking goroutine that loops until no trigger arrived during its check.
func (op *fetchOp) trigger() {
	if op.pending.Add(1) == 1 {
		go op.recheck()
	}
}

func (op *fetchOp) recheck() {
	for {
		seen := op.pending.Load()
		if op.done.Load() {
			return
		}
		results, bytes, respondNow := op.read(op.scratch)
		op.scratch = results
		if bytes >= op.minBytes() || respondNow {
			if op.complete(results) {
				putFetchResults(results)
			}
			return
		}
		if op.pending.CompareAndSwap(seen, 0) {
			return
		}
	}
}

// minBytes is min_bytes, bounded by what the consumer's quota lets one
// fetch return (Kafka's fetchMinBytes).
func (op *fetchOp) minBytes() int64 {
	if op.quotaMaxBytes > 0 {
		return min(int64(op.req.MinBytes), op.quotaMaxBytes)
	}
	return int64(op.req.MinBytes)
}

func (op *fetchOp) expire() {
	if op.done.Load() {
		return
	}
	results, _, _ := op.read(nil)
	op.complete(results)
}

// complete answers the fetch with results unless it was answered already,
// and reports whether it did.
func (op *fetchOp) complete(results []fetchPartitionResult) bool {
	if !op.done.CompareAndSwap(false, true) {
		return false
	}
	op.parking.Lock()
	if op.parking.timer != nil {
		op.parking.timer.Stop()
	}
	for _, u := range op.parking.unwatch {
		u()
	}
	op.parking.Unlock()
	op.stopRemote()
	if _, parked := op.b.parked.LoadAndDelete(op); parked {
		op.b.Metrics.FetchParkedAdd(-1)
	}
	op.respond(results)
	return true
}

// fetchResults recycles the result slices of answered fetches: a consumer
// at the log end sends thousands of fetches a second.
var fetchResults sync.Pool

// maxPooledFetchResults keeps a fetch of very many partitions from pinning
// a large slice in the pool.
const maxPooledFetchResults = 1024

func getFetchResults() []fetchPartitionResult {
	if p, _ := fetchResults.Get().(*[]fetchPartitionResult); p != nil {
		return (*p)[:0]
	}
	return nil
}

// putFetchResults pools r once the response written from it no longer needs
// it (writeFetchResponse copies everything out).
func putFetchResults(r []fetchPartitionResult) {
	if cap(r) == 0 || cap(r) > maxPooledFetchResults {
		return
	}
	clear(r[:cap(r)]) // drop the file regions and names they hold
	fetchResults.Put(&r)
}

func (op *fetchOp) respond(results []fetchPartitionResult) {
	var total int64
	for i := range results {
		total += results[i].bytes
	}
	if throttleMs := op.c.recordFetch(total); throttleMs > 0 {
		// Throttled: no records, and the bytes did not count (Kafka's
		// getThrottledResponse).
		sessionID := int32(0)
		if op.session != nil {
			sessionID = op.session.id
		}
		op.c.req.Respond(withFetchThrottle(writeFetchResponse(op.c.version, 0, sessionID, nil), throttleMs))
		return
	}
	for i := range results {
		op.b.Metrics.BytesOut(results[i].topic, results[i].bytes)
	}
	op.observeReplicaReads(results)
	op.recordReplicationThrottle(results)
	sessionID := int32(0)
	if op.session != nil {
		sessionID = op.session.id
		results = op.session.filter(results, op.c.version)
	}
	op.c.req.Respond(writeFetchResponse(op.c.version, 0, sessionID, results))
}
