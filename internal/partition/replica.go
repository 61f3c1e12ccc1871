package partition

// Replica state (Kafka's Partition.scala, KIP-497).
//
// A leader tracks, for every follower, the log end offset the follower
// last fetched from and when it was last caught up. The high watermark is
// the smallest log end offset over the ISR and never goes backwards; a
// follower whose fetch offset reaches the high watermark (and the leader
// epoch's start offset) is proposed to join the ISR, one not caught up for
// replica.lag.time.max.ms is proposed to leave it. Proposals go to the
// active controller (AlterPartition) and only the committed ISR counts for
// min.insync.replicas; while a proposal is in flight the high watermark is
// computed over the union of the committed and the proposed ISR (Kafka's
// "maximal ISR"), so an ISR change never lets it move too early.
//
// A follower appends the leader's batches byte for byte, keeping producer
// state current so it can take over as leader, and keeps its high watermark
// at min(leader high watermark, own log end offset); consumers that read
// from it (KIP-392) read below that and are woken when it moves. The leader
// offers as such read replicas the ISR members whose log, as their fetches
// report it, holds the consumer's offset (ReadReplicaCandidates).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
)

// AlterPartitionFunc asks the active controller to change a partition's
// ISR. It returns the committed ISR and partition epoch, or an error (a
// Kafka error from the controller or a connection failure).
type AlterPartitionFunc func(ctx context.Context, req AlterPartitionRequest) (isr []int32, partitionEpoch int32, err error)

// AlterPartitionRequest is one ISR change a leader proposes.
type AlterPartitionRequest struct {
	Topic          string
	TopicID        [16]byte
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []int32
}

// alterPartitionTimeout bounds one AlterPartition round trip.
const alterPartitionTimeout = 10 * time.Second

// alterPartitionBackoffMs spaces retries of a failed ISR change.
const alterPartitionBackoffMs = 200

// followerState is what the leader knows of one follower.
type followerState struct {
	// logEndOffset is the follower's last fetch offset; -1 until it fetches
	// from this leader in this epoch.
	logEndOffset int64
	// logStartOffset is the follower's log start as its fetches report it;
	// -1 until known.
	logStartOffset              int64
	lastFetchTimeMs             int64
	lastFetchLeaderLogEndOffset int64
	lastCaughtUpTimeMs          int64
}

// replicaState is the partition's replication state. It is guarded by
// Partition.replicaMu.
type replicaState struct {
	// initialized is false for a partition no metadata described yet (a
	// single replica: the high watermark follows the log end).
	initialized bool
	nodeID      int32
	leaderID    int32
	replicas    []int32
	// isr is the committed ISR, as in the metadata image.
	// Invariant: leader => slices.Contains(isr, nodeID).
	isr            []int32
	partitionEpoch int32
	// pendingISR is an ISR change in flight, nil when none.
	pendingISR          []int32
	lastAlterFailTimeMs int64
	followers           map[int32]*followerState
	// epochStartOffset is the log end offset when this leader epoch began.
	epochStartOffset int64
	alter            AlterPartitionFunc
}

// LeaderState is the metadata a leader or follower is told about.
type LeaderState struct {
	NodeID         int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
	Alter          AlterPartitionFunc
}

// UpdateReplicaState applies the metadata image's view of the partition. A
// new leader epoch on the leader records the epoch's start offset and
// forgets what it knew of followers (each starts out caught up now, so none
// is dropped from the ISR before it had a chance to fetch).
func (p *Partition) UpdateReplicaState(s LeaderState) error {
	nowMs := p.now().UnixMilli()
	p.SetLeaderEpoch(s.LeaderEpoch)
	p.replicaMu.Lock()
	rs := &p.replica
	newEpoch := !rs.initialized || rs.leaderID != s.Leader || p.replicaEpoch != s.LeaderEpoch
	rs.initialized = true
	rs.nodeID, rs.leaderID, rs.alter = s.NodeID, s.Leader, s.Alter
	rs.replicas = slices.Clone(s.Replicas)
	if s.PartitionEpoch >= rs.partitionEpoch || newEpoch {
		rs.isr = slices.Clone(s.ISR)
		rs.partitionEpoch = s.PartitionEpoch
		rs.pendingISR = nil
	}
	var assign bool
	if newEpoch {
		p.replicaEpoch = s.LeaderEpoch
		rs.followers = map[int32]*followerState{}
		for _, r := range s.Replicas {
			if r != s.NodeID {
				rs.followers[r] = &followerState{logEndOffset: -1, logStartOffset: -1, lastCaughtUpTimeMs: nowMs}
			}
		}
		rs.epochStartOffset = p.Log.LogEndOffset()
		assign = s.Leader == s.NodeID
	} else {
		rs.matchFollowersLocked(nowMs)
	}
	p.replicaMu.Unlock()
	if assign {
		// Kafka's new leader records its epoch at its log end, so followers
		// asking OffsetForLeaderEpoch about an older epoch find where it ended.
		p.appendMu.Lock()
		err := p.Log.MaybeAssignEpochStartOffset(s.LeaderEpoch, p.Log.LogEndOffset())
		p.appendMu.Unlock()
		if err != nil {
			return err
		}
	}
	if s.Leader == s.NodeID {
		p.maybeIncrementHighWatermark()
	}
	p.watchers.notify()
	return nil
}

// matchFollowersLocked keeps the follower states in step with a replica
// set that changed within a leader epoch (a reassignment adding or removing
// replicas): a new replica starts out not fetched yet and caught up now, a
// removed one is forgotten.
func (rs *replicaState) matchFollowersLocked(nowMs int64) {
	for _, r := range rs.replicas {
		if _, ok := rs.followers[r]; !ok && r != rs.nodeID {
			rs.followers[r] = &followerState{logEndOffset: -1, lastCaughtUpTimeMs: nowMs}
		}
	}
	for r := range rs.followers {
		if !slices.Contains(rs.replicas, r) {
			delete(rs.followers, r)
		}
	}
}

// ISR is the committed in-sync replica set.
func (p *Partition) ISR() []int32 {
	p.replicaMu.Lock()
	defer p.replicaMu.Unlock()
	if !p.replica.initialized {
		return nil
	}
	return slices.Clone(p.replica.isr)
}

// InISR reports whether replica is in the committed in-sync replica set.
func (p *Partition) InISR(replica int32) bool {
	p.replicaMu.Lock()
	defer p.replicaMu.Unlock()
	return p.replica.initialized && slices.Contains(p.replica.isr, replica)
}

// InSyncReplicaCount is the size of the committed ISR (1 for a partition no
// metadata described).
func (p *Partition) InSyncReplicaCount() int {
	p.replicaMu.Lock()
	defer p.replicaMu.Unlock()
	if !p.replica.initialized {
		return 1
	}
	return len(p.replica.isr)
}

// Closed reports whether the partition stopped being served here (it was
// unhosted, deleted, or changed role).
func (p *Partition) Closed() bool { return p.closed.Load() }

// maximalISRLocked is the committed ISR plus any member a pending change
// adds.
func (rs *replicaState) maximalISRLocked() []int32 {
	out := slices.Clone(rs.isr)
	for _, r := range rs.pendingISR {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// maybeIncrementHighWatermark moves the leader's high watermark to the
// smallest log end offset over the maximal ISR, never backwards.
func (p *Partition) maybeIncrementHighWatermark() {
	leo := p.Log.LogEndOffset()
	p.replicaMu.Lock()
	rs := &p.replica
	newHW := leo
	if rs.initialized {
		for _, r := range rs.maximalISRLocked() {
			if r == rs.nodeID {
				continue
			}
			f := rs.followers[r]
			if f == nil || f.logEndOffset < 0 {
				newHW = -1
				break
			}
			newHW = min(newHW, f.logEndOffset)
		}
	}
	moved := false
	if newHW > p.Log.HighWatermark() {
		p.Log.UpdateHighWatermark(newHW)
		moved = true
	}
	p.replicaMu.Unlock()
	if moved {
		p.watchers.notify()
	}
}

// UpdateFollowerFetch records a fetch from replica at fetchOffset (its log
// end offset) on the leader: it may add the replica to the ISR and move the
// high watermark, waking acks=all produces.
func (p *Partition) UpdateFollowerFetch(replica int32, fetchOffset int64) {
	nowMs := p.now().UnixMilli()
	leo := p.Log.LogEndOffset()
	p.replicaMu.Lock()
	rs := &p.replica
	f := rs.followers[replica]
	if !rs.initialized || rs.leaderID != rs.nodeID || f == nil {
		p.replicaMu.Unlock()
		return
	}
	switch {
	case fetchOffset >= leo:
		f.lastCaughtUpTimeMs = max(f.lastCaughtUpTimeMs, nowMs)
	case fetchOffset >= f.lastFetchLeaderLogEndOffset:
		f.lastCaughtUpTimeMs = max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs)
	}
	f.logEndOffset = fetchOffset
	f.lastFetchLeaderLogEndOffset = leo
	f.lastFetchTimeMs = nowMs
	// Expand: a follower out of the ISR that reached the high watermark
	// and this epoch's start joins it (Kafka's isFollowerInSync).
	var proposal *AlterPartitionRequest
	if rs.pendingISR == nil && !slices.Contains(rs.isr, replica) &&
		fetchOffset >= p.Log.HighWatermark() && fetchOffset >= rs.epochStartOffset &&
		nowMs-rs.lastAlterFailTimeMs >= alterPartitionBackoffMs {
		proposal = p.proposeISRLocked(append(slices.Clone(rs.isr), replica))
	}
	p.replicaMu.Unlock()
	if proposal != nil {
		go p.sendAlterPartition(*proposal, isrExpand)
	}
	p.maybeIncrementHighWatermark()
}

// UpdateFollowerLogStartOffset records the log start offset a follower's
// fetch reported, which decides whether a consumer can be sent to read
// from it (ReadReplicaCandidates).
func (p *Partition) UpdateFollowerLogStartOffset(replica int32, logStartOffset int64) {
	p.replicaMu.Lock()
	defer p.replicaMu.Unlock()
	if f := p.replica.followers[replica]; f != nil {
		f.logStartOffset = logStartOffset
	}
}

// ReplicaCandidate is a follower a consumer could read from (KIP-392), as
// the leader last heard of it.
type ReplicaCandidate struct {
	ID           int32
	LogEndOffset int64
	// TimeSinceCaughtUpMs is how long ago the follower was last caught up
	// with the leader's log end.
	TimeSinceCaughtUpMs int64
}

// ReadReplicaCandidates returns, on a leader, the followers in the
// committed ISR whose logs hold fetchOffset, as Kafka's ReplicaManager
// offers them to its replica selector: a follower out of the ISR may lag
// without bound, so it is never a candidate. ok is false when this replica
// does not lead.
func (p *Partition) ReadReplicaCandidates(fetchOffset int64) (candidates []ReplicaCandidate, ok bool) {
	nowMs := p.now().UnixMilli()
	p.replicaMu.Lock()
	defer p.replicaMu.Unlock()
	rs := &p.replica
	if !rs.initialized || rs.leaderID != rs.nodeID {
		return nil, false
	}
	for _, r := range rs.isr {
		f := rs.followers[r]
		if r == rs.nodeID || f == nil || f.logEndOffset < fetchOffset || f.logStartOffset < 0 || f.logStartOffset > fetchOffset {
			continue
		}
		candidates = append(candidates, ReplicaCandidate{ID: r, LogEndOffset: f.logEndOffset, TimeSinceCaughtUpMs: max(nowMs-f.lastCaughtUpTimeMs, 0)})
	}
	return candidates, true
}

// ISRChangeCounts counts the ISR changes leaders made through the
// controller: Kafka's IsrShrinksPerSec, IsrExpandsPerSec and
// FailedIsrUpdatesPerSec. A replica the controller itself drops from the ISR
// (its broker was fenced) is not counted, as in Kafka.
type ISRChangeCounts struct {
	Shrinks, Expands, Failed atomic.Int64
}

// isrChangeKind is whether a proposed ISR change adds or removes members.
type isrChangeKind bool

const (
	isrExpand isrChangeKind = true
	isrShrink isrChangeKind = false
)

// MaybeShrinkISR proposes removing the ISR members not caught up for
// lagMaxMs (replica.lag.time.max.ms). Called periodically on leaders.
func (p *Partition) MaybeShrinkISR(lagMaxMs int64) {
	nowMs := p.now().UnixMilli()
	leo := p.Log.LogEndOffset()
	p.replicaMu.Lock()
	rs := &p.replica
	if !rs.initialized || rs.leaderID != rs.nodeID || rs.pendingISR != nil || nowMs-rs.lastAlterFailTimeMs < alterPartitionBackoffMs {
		p.replicaMu.Unlock()
		return
	}
	var keep []int32
	for _, r := range rs.isr {
		f := rs.followers[r]
		if r != rs.nodeID && f != nil && (f.logEndOffset < leo || f.logEndOffset < 0) && nowMs-f.lastCaughtUpTimeMs > lagMaxMs {
			continue
		}
		keep = append(keep, r)
	}
	var proposal *AlterPartitionRequest
	if len(keep) < len(rs.isr) {
		proposal = p.proposeISRLocked(keep)
	}
	p.replicaMu.Unlock()
	if proposal != nil {
		p.logger.Info("shrinking ISR", "partition", p, "isr", keep)
		go p.sendAlterPartition(*proposal, isrShrink)
	}
}

func (p *Partition) proposeISRLocked(isr []int32) *AlterPartitionRequest {
	rs := &p.replica
	if rs.alter == nil {
		return nil
	}
	rs.pendingISR = isr
	return &AlterPartitionRequest{Topic: p.Topic, TopicID: p.TopicID, Partition: p.Index,
		LeaderEpoch: p.replicaEpoch, PartitionEpoch: rs.partitionEpoch, NewISR: slices.Clone(isr)}
}

func (p *Partition) sendAlterPartition(req AlterPartitionRequest, kind isrChangeKind) {
	p.replicaMu.Lock()
	alter := p.replica.alter
	p.replicaMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), alterPartitionTimeout)
	defer cancel()
	isr, partitionEpoch, err := alter(ctx, req)
	// Counted before the checks below: the metadata image may have
	// delivered the committed change before this response did.
	p.countISRChange(kind, err)
	p.replicaMu.Lock()
	rs := &p.replica
	if !slices.Equal(rs.pendingISR, req.NewISR) || p.replicaEpoch != req.LeaderEpoch {
		p.replicaMu.Unlock()
		return
	}
	rs.pendingISR = nil
	if err != nil {
		rs.lastAlterFailTimeMs = p.now().UnixMilli()
		p.replicaMu.Unlock()
		p.logger.Info("ISR change failed", "partition", p, "isr", req.NewISR, "err", err)
		return
	}
	if partitionEpoch > rs.partitionEpoch {
		rs.isr, rs.partitionEpoch = isr, partitionEpoch
	}
	p.replicaMu.Unlock()
	p.logger.Info("ISR changed", "partition", p, "isr", isr, "partition.epoch", partitionEpoch)
	p.maybeIncrementHighWatermark()
	p.watchers.notify()
}

func (p *Partition) countISRChange(kind isrChangeKind, err error) {
	switch c := p.isrChanges; {
	case c == nil:
	case err != nil:
		c.Failed.Add(1)
	case kind == isrExpand:
		c.Expands.Add(1)
	default:
		c.Shrinks.Add(1)
	}
}

// FollowLeaderLogStart moves a follower's log start offset up to the
// leader's, as a fetch response reports it (Kafka's
// maybeIncrementLogStartOffset with LeaderOffsetIncremented): records the
// leader deleted (DeleteRecords, retention) go here too, so a new leader
// starts where the old one did. The offset is bounded by this replica's
// high watermark, and never moves the start down.
func (p *Partition) FollowLeaderLogStart(leaderLogStartOffset int64) error {
	offset := min(leaderLogStartOffset, p.Log.HighWatermark())
	if offset <= p.Log.LogStartOffset() {
		return nil
	}
	if err := p.Log.DeleteRecordsBefore(offset); err != nil {
		return err
	}
	p.watchers.notify()
	return nil
}

// AppendAsFollower appends batches fetched from the leader, byte for byte,
// skipping any already in the log, and replays them into the producer
// state; the high watermark becomes min(leaderHighWatermark, log end).
func (p *Partition) AppendAsFollower(batches []byte, leaderHighWatermark int64) error {
	defer p.notifyIfHighWatermarkMoved(p.Log.HighWatermark())
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return fmt.Errorf("partition %s: %w", p, errClosedPartition)
	}
	leo := p.Log.LogEndOffset()
	data := batches
	for len(data) > 0 {
		h, err := record.ParseHeader(data)
		if err != nil || h.Size() > len(data) {
			data = nil
			break
		}
		if h.LastOffset() >= leo {
			break
		}
		data = data[h.Size():]
	}
	// A trailing partial batch (cut by the fetch size) is left for the next
	// fetch.
	whole := 0
	for rest := data; len(rest) > 0; {
		h, err := record.ParseHeader(rest)
		if err != nil || h.Size() > len(rest) {
			break
		}
		whole += h.Size()
		rest = rest[h.Size():]
	}
	data = data[:whole]
	if len(data) > 0 {
		if err := p.Log.AppendAsFollower(data); err != nil {
			return err
		}
		for rest := data; len(rest) > 0; {
			h, _ := record.ParseHeader(rest)
			batch := rest[:h.Size()]
			rest = rest[h.Size():]
			if h.HasProducerID() {
				if err := p.state().replayBatch(p.Log, batch, h); err != nil {
					return err
				}
			}
			p.state().advance(h.LastOffset())
		}
	}
	p.Log.UpdateHighWatermark(min(leaderHighWatermark, p.Log.LogEndOffset()))
	return nil
}

// UpdateFollowerHighWatermark sets a follower's high watermark to
// min(leaderHighWatermark, log end).
func (p *Partition) UpdateFollowerHighWatermark(leaderHighWatermark int64) {
	defer p.notifyIfHighWatermarkMoved(p.Log.HighWatermark())
	p.Log.UpdateHighWatermark(min(leaderHighWatermark, p.Log.LogEndOffset()))
}

// notifyIfHighWatermarkMoved wakes the consumer fetches parked on a
// follower (KIP-392) once its high watermark moved from before.
func (p *Partition) notifyIfHighWatermarkMoved(before int64) {
	if p.Log.HighWatermark() != before {
		p.watchers.notify()
	}
}

// TruncateTo cuts a follower's log at offset (see log.TruncateTo) and
// rebuilds the producer state from what is left.
func (p *Partition) TruncateTo(offset int64) error {
	return p.truncate(func() error { return p.Log.TruncateTo(offset) })
}

// TruncateFullyAndStartAt empties a follower's log and restarts it at
// offset (the leader's log start is past this log's end).
func (p *Partition) TruncateFullyAndStartAt(offset int64) error {
	return p.truncate(func() error { return p.Log.TruncateFullyAndStartAt(offset) })
}

func (p *Partition) truncate(cut func() error) error {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return fmt.Errorf("partition %s: %w", p, errClosedPartition)
	}
	before := p.Log.LogEndOffset()
	if err := cut(); err != nil {
		return err
	}
	if p.Log.LogEndOffset() == before {
		return nil
	}
	producers, err := loadProducerState(p.Log, p.now().UnixMilli(), p.producerIDExpirationMs, p.logger)
	if err != nil {
		return err
	}
	p.producers.Store(producers)
	return nil
}

// LeaderID is the leader a follower follows (-1: none), as last told.
func (p *Partition) LeaderID() int32 {
	p.replicaMu.Lock()
	defer p.replicaMu.Unlock()
	return p.replica.leaderID
}

// errClosedPartition refuses follower writes to a partition no longer
// served here.
var errClosedPartition = errors.New("partition: closed")
