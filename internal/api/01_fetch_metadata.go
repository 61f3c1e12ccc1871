package api

// Fetch (key 1) on the controller listener, version 12: observers (brokers
// that are not voters) follow the metadata log __cluster_metadata-0, as
// KRaft's observers do.
//
// Behavior:
//   - Only __cluster_metadata partition 0; any other partition answers
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - Only entries this voter has committed and applied are served, so an
//     observer never reads an entry that could be truncated and never needs
//     to diverge: HighWatermark is the end of the applied entries.
//   - The records are the log's entry batches (see package quorum), at
//     most the partition's max bytes but at least one whole entry.
//   - An offset older than the entries this voter keeps in memory answers
//     with SnapshotID: the observer fetches that snapshot with FetchSnapshot
//     (59_fetch_snapshot.go) and continues after it.
//   - With nothing new the request waits up to MaxWaitMillis (bounded by
//     replica.fetch.wait.max.ms's default, 500 ms, times four) for the next
//     applied entry.
//   - CurrentLeader carries this voter's view of the quorum leader, so the
//     observer knows the active controller.
//   - The fetching replica id (ReplicaID, or ReplicaState.ID) is recorded
//     with its fetch offset, fetch time and when it was last caught up, and
//     shown as an observer by DescribeQuorum (at most 1024 observers, the
//     longest silent forgotten first).

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/quorum"
)

// maxMetadataFetchWaitMs bounds how long an observer's fetch may wait.
const maxMetadataFetchWaitMs = 2000

// maxObservers bounds the observers remembered for DescribeQuorum.
const maxObservers = 1024

func init() { registerController(1, 12, 12, handleMetadataFetch) }

func handleMetadataFetch(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.FetchRequest)
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	offset, ok := metadataFetchOffset(req)
	if !ok || b.Quorum == nil {
		c.reply(metadataFetchResponse(req, nil, quorum.Committed{}, nil))
		return
	}
	replica := req.ReplicaID
	if replica < 0 {
		replica = req.ReplicaState.ID
	}
	maxBytes := int(max(req.MaxBytes, 1))
	committed, err := b.Quorum.ReadCommitted(offset, maxBytes)
	b.observers.fetched(replica, offset, offset >= committed.End, b.Now())
	wait := time.Duration(min(max(req.MaxWaitMillis, 0), maxMetadataFetchWaitMs)) * time.Millisecond
	if err != nil || len(committed.Batches) > 0 || wait == 0 || b.closing.Load() {
		c.reply(b.metadataFetchAnswer(req, committed, err))
		return
	}
	// Nothing new: park until the next entry is applied or the wait ends.
	op := &metadataFetchOp{expired: make(chan struct{})}
	b.parked.Store(op, struct{}{})
	go func() {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-committed.Applied:
		case <-timer.C:
		case <-op.expired:
		}
		b.parked.Delete(op)
		committed, err := b.Quorum.ReadCommitted(offset, maxBytes)
		c.reply(b.metadataFetchAnswer(req, committed, err))
	}()
}

// metadataFetchAnswer answers what ReadCommitted returned: the entries, or
// the snapshot to fetch first.
func (b *Broker) metadataFetchAnswer(req *kmsg.FetchRequest, committed quorum.Committed, err error) *kmsg.FetchResponse {
	var snap *metadataSnapshot
	if errors.Is(err, quorum.ErrOffsetBeforeTail) {
		_, epoch := b.Quorum.Leader()
		if snap, err = b.snapshots.latest(b.Controller, int32(epoch)); err != nil {
			b.Logger.Warn("metadata snapshot for an observer", "err", err)
		}
	}
	return metadataFetchResponse(req, b, committed, snap)
}

// metadataFetchOp is a parked observer fetch, expired at shutdown.
type metadataFetchOp struct {
	once    sync.Once
	expired chan struct{}
}

func (op *metadataFetchOp) expire() { op.once.Do(func() { close(op.expired) }) }

// metadataFetchOffset finds the one partition an observer fetches.
func metadataFetchOffset(req *kmsg.FetchRequest) (int64, bool) {
	if len(req.Topics) != 1 || req.Topics[0].Topic != controller.MetadataTopic || len(req.Topics[0].Partitions) != 1 {
		return 0, false
	}
	p := req.Topics[0].Partitions[0]
	return p.FetchOffset, p.Partition == 0 && p.FetchOffset >= 0
}

// metadataFetchResponse answers every partition of req: the metadata
// partition from committed (or with snap, when the offset needs a snapshot
// first) when b is set, UNKNOWN_TOPIC_OR_PARTITION otherwise.
func metadataFetchResponse(req *kmsg.FetchRequest, b *Broker, committed quorum.Committed, snap *metadataSnapshot) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	for _, rt := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if b != nil && rt.Topic == controller.MetadataTopic && rp.Partition == 0 {
				sp.ErrorCode = 0
				sp.HighWatermark, sp.LastStableOffset = committed.End, committed.End
				sp.LogStartOffset = 0
				leader, epoch := b.Quorum.Leader()
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = leader, int32(epoch)
				sp.RecordBatches = committed.Batches
				if snap != nil {
					sp.SnapshotID.EndOffset, sp.SnapshotID.Epoch = snap.endOffset, snap.epoch
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// observerTracker remembers the observers that fetched from this voter.
type observerTracker struct {
	mu struct {
		sync.Mutex
		byID map[int32]observerState
	}
}

type observerState struct {
	fetchOffset           int64
	lastFetch, lastCaught time.Time
}

// fetched records a fetch from offset; caughtUp says the offset was the
// end of the applied entries.
func (o *observerTracker) fetched(id int32, offset int64, caughtUp bool, now time.Time) {
	if id < 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mu.byID == nil {
		o.mu.byID = map[int32]observerState{}
	}
	if _, known := o.mu.byID[id]; !known && len(o.mu.byID) >= maxObservers {
		oldest := id
		for other, st := range o.mu.byID {
			if oldest == id || st.lastFetch.Before(o.mu.byID[oldest].lastFetch) {
				oldest = other
			}
		}
		delete(o.mu.byID, oldest)
	}
	st := observerState{fetchOffset: offset, lastFetch: now, lastCaught: o.mu.byID[id].lastCaught}
	if caughtUp {
		st.lastCaught = now
	}
	o.mu.byID[id] = st
}

// list returns the observers by id.
func (o *observerTracker) list() []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(o.mu.byID))
	for id, st := range o.mu.byID {
		rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		rs.ReplicaID, rs.LogEndOffset = id, st.fetchOffset
		rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = st.lastFetch.UnixMilli(), -1
		if !st.lastCaught.IsZero() {
			rs.LastCaughtUpTimestamp = st.lastCaught.UnixMilli()
		}
		out = append(out, rs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ReplicaID < out[j].ReplicaID })
	return out
}
