package replication

import (
	"context"
	"time"

	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
)

// fetchState is one followed partition in a fetcher.
type fetchState struct {
	p     *partition.Partition
	epoch int32
	// truncated is set once the log may be fetched: it was matched to the
	// leader's for this epoch with OffsetForLeaderEpoch, or it holds a
	// leader epoch, which each fetch sends as last_fetched_epoch so that the
	// leader checks it (KIP-320, truncation on fetch). Until then the
	// partition is not fetched.
	truncated  bool
	delayUntil time.Time
}

// fetcher replicates the partitions one leader broker leads.
type fetcher struct {
	m      *Manager
	leader int32
	addr   string
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}

	mu struct {
		sync.Mutex
		parts map[log.TopicPartition]*fetchState
	}
}

func newFetcher(m *Manager, leader int32, addr string) *fetcher {
	f := &fetcher{m: m, leader: leader, addr: addr, wake: make(chan struct{}, 1)}
	f.ctx, f.cancel = context.WithCancel(m.ctx)
	f.mu.parts = map[log.TopicPartition]*fetchState{}
	return f
}

func (f *fetcher) stop() { f.cancel() }

// assign replaces the fetched partitions; a partition whose object or
// leader epoch changed starts again with truncation.
func (f *fetcher) assign(follows []partition.Follower) {
	f.mu.Lock()
	next := make(map[log.TopicPartition]*fetchState, len(follows))
	for _, fl := range follows {
		tp := log.TopicPartition{Topic: fl.Partition.Topic, Partition: fl.Partition.Index}
		if st := f.mu.parts[tp]; st != nil && st.p == fl.Partition && st.epoch == fl.LeaderEpoch {
			next[tp] = st
			continue
		}
		_, hasEpoch := fl.Partition.Log.LatestEpoch()
		next[tp] = &fetchState{p: fl.Partition, epoch: fl.LeaderEpoch, truncated: hasEpoch}
	}
	f.mu.parts = next
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// current returns the state of tp if it is still st.
func (f *fetcher) current(tp log.TopicPartition, st *fetchState) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.parts[tp] == st
}

func (f *fetcher) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.ctx.Done():
	case <-f.wake:
	case <-t.C:
	}
}

func (f *fetcher) backoff() time.Duration {
	return time.Duration(max(f.m.cfg.FetchBackoffMs, 1)) * time.Millisecond
}

func (f *fetcher) run() {
	logger := f.m.cfg.Logger.With("leader", f.leader)
	if f.addr == "" {
		logger.Warn("replica fetcher: leader has no endpoint")
		return
	}
	cl, err := newClient(f.addr, f.m.cfg.ClientOpts)
	if err != nil {
		logger.Warn("replica fetcher: client", "err", err)
		return
	}
	defer cl.Close()
	for f.ctx.Err() == nil {
		now := time.Now()
		var truncating, fetching []log.TopicPartition
		states := map[log.TopicPartition]*fetchState{}
		f.mu.Lock()
		for tp, st := range f.mu.parts {
			if now.Before(st.delayUntil) {
				continue
			}
			states[tp] = st
			if st.truncated {
				fetching = append(fetching, tp)
			} else {
				truncating = append(truncating, tp)
			}
		}
		f.mu.Unlock()
		if len(states) == 0 {
			f.sleep(100 * time.Millisecond)
			continue
		}
		if len(truncating) > 0 {
			if err := f.truncate(cl, truncating, states); err != nil {
				logger.Debug("replica fetcher: offset for leader epoch", "err", err)
				f.sleep(f.backoff())
				continue
			}
		}
		if len(fetching) > 0 {
			if err := f.fetch(cl, fetching, states); err != nil {
				logger.Debug("replica fetcher: fetch", "err", err)
				f.sleep(f.backoff())
			}
		}
	}
}

// truncate matches each partition's log to the leader's (KIP-101/279).
func (f *fetcher) truncate(cl *kgo.Client, tps []log.TopicPartition, states map[log.TopicPartition]*fetchState) error {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = f.m.cfg.NodeID
	topics := map[string]int{}
	for _, tp := range tps {
		st := states[tp]
		latest, ok := st.p.Log.LatestEpoch()
		if !ok {
			// Nothing to compare: keep what is committed.
			f.truncateTo(tp, st, st.p.HighWatermark(), true)
			continue
		}
		i, seen := topics[tp.Topic]
		if !seen {
			i = len(req.Topics)
			topics[tp.Topic] = i
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = tp.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tp.Partition, st.epoch, latest
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	if len(req.Topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.socketTimeout())
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			tp := log.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			st := states[tp]
			if st == nil || !f.current(tp, st) {
				continue
			}
			if rp.ErrorCode != 0 {
				f.delay(st)
				continue
			}
			switch {
			case rp.EndOffset < 0:
				f.truncateTo(tp, st, st.p.HighWatermark(), true)
			case rp.LeaderEpoch < 0:
				f.truncateTo(tp, st, min(rp.EndOffset, st.p.Log.LogEndOffset()), true)
			default:
				offset, complete := truncationOffset(st.p, rp.LeaderEpoch, rp.EndOffset)
				f.truncateTo(tp, st, offset, complete)
			}
		}
	}
	return nil
}

// truncationOffset is where a follower's log must be cut, given that the
// leader's epoch leaderEpoch ends at leaderEnd, the largest epoch at or
// below the one asked about (Kafka's getOffsetTruncationState). complete is
// false when this log does not know leaderEpoch: it is cut where its own
// largest epoch below ends, and the leader must be asked again.
func truncationOffset(p *partition.Partition, leaderEpoch int32, leaderEnd int64) (offset int64, complete bool) {
	leo := p.Log.LogEndOffset()
	epoch, end := p.Log.EndOffsetForEpoch(leaderEpoch)
	switch {
	case epoch < 0 || end < 0:
		return min(leaderEnd, leo), true
	case epoch != leaderEpoch:
		return min(end, leo), false
	}
	return min(leaderEnd, end, leo), true
}

func (f *fetcher) truncateTo(tp log.TopicPartition, st *fetchState, offset int64, done bool) {
	leo := st.p.Log.LogEndOffset()
	if offset < leo {
		f.m.cfg.Logger.Info("truncating follower log", "partition", tp, "from", leo, "to", offset, "leader.epoch", st.epoch)
		if err := st.p.TruncateTo(offset); err != nil {
			f.m.cfg.Logger.Warn("truncating follower log", "partition", tp, "err", err)
			f.delay(st)
			return
		}
	}
	f.mu.Lock()
	if f.mu.parts[tp] == st {
		st.truncated = done
	}
	f.mu.Unlock()
}

func (f *fetcher) delay(st *fetchState) {
	f.mu.Lock()
	st.delayUntil = time.Now().Add(f.backoff())
	f.mu.Unlock()
}

func (f *fetcher) socketTimeout() time.Duration {
	return time.Duration(max(f.m.cfg.SocketTimeoutMs, f.m.cfg.FetchWaitMaxMs+1000)) * time.Millisecond
}

// fetch reads from the leader's log end of each partition and appends.
func (f *fetcher) fetch(cl *kgo.Client, tps []log.TopicPartition, states map[log.TopicPartition]*fetchState) error {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.m.cfg.NodeID
	req.ReplicaState.ID = f.m.cfg.NodeID
	req.MaxWaitMillis = f.m.cfg.FetchWaitMaxMs
	req.MinBytes = f.m.cfg.FetchMinBytes
	req.MaxBytes = f.m.cfg.FetchResponseMaxBytes
	req.SessionID, req.SessionEpoch = 0, -1
	topics := map[string]int{}
	fetchOffsets := map[log.TopicPartition]int64{}
	throttled := f.throttledPartitions(tps, states)
	for _, tp := range tps {
		st := states[tp]
		if throttled[tp] && f.followerHeld() {
			continue
		}
		i, seen := topics[tp.Topic]
		if !seen {
			i = len(req.Topics)
			topics[tp.Topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = tp.Topic, st.p.TopicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.CurrentLeaderEpoch = st.epoch
		rp.FetchOffset = st.p.Log.LogEndOffset()
		if e, ok := st.p.Log.LatestEpoch(); ok {
			rp.LastFetchedEpoch = e
		}
		rp.LogStartOffset = st.p.Log.LogStartOffset()
		rp.PartitionMaxBytes = f.m.cfg.FetchMaxBytes
		fetchOffsets[tp] = rp.FetchOffset
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	if len(req.Topics) == 0 {
		// Every partition is held back by the replication throttle: wait
		// until the quota lets them go, at most replica.fetch.backoff.ms.
		f.sleep(f.throttleWait())
		return nil
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.socketTimeout())
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return err
	}
	if resp.ErrorCode != 0 {
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	var throttledBytes int64 // fetched for throttled partitions
	byID := map[[16]byte]string{}
	for _, tp := range tps {
		byID[states[tp].p.TopicID] = tp.Topic
	}
	for _, rt := range resp.Topics {
		name := rt.Topic
		if resp.Version >= 13 {
			name = byID[rt.TopicID]
		}
		for _, rp := range rt.Partitions {
			tp := log.TopicPartition{Topic: name, Partition: rp.Partition}
			if throttled[tp] {
				throttledBytes += int64(len(rp.RecordBatches))
			}
			st := states[tp]
			if st == nil || !f.current(tp, st) || st.p.Log.LogEndOffset() != fetchOffsets[tp] {
				continue
			}
			f.handlePartition(cl, tp, st, &rp)
		}
	}
	if throttledBytes > 0 {
		f.m.cfg.FollowerQuota.Record(throttledBytes, time.Now().UnixMilli())
	}
	return nil
}

func (f *fetcher) handlePartition(cl *kgo.Client, tp log.TopicPartition, st *fetchState, rp *kmsg.FetchResponseTopicPartition) {
	switch rp.ErrorCode {
	case kerr.OffsetMovedToTieredStorage.Code:
		f.buildRemoteAuxState(cl, tp, st, rp.LogStartOffset)
	case 0:
		if d := rp.DivergingEpoch; d.Epoch >= 0 && d.EndOffset >= 0 {
			f.truncateOnFetch(tp, st, d.Epoch, d.EndOffset)
			return
		}
		if err := st.p.AppendAsFollower(rp.RecordBatches, rp.HighWatermark); err != nil {
			f.m.cfg.Logger.Warn("follower append", "partition", tp, "err", err)
			f.delay(st)
			return
		}
		if err := st.p.FollowLeaderLogStart(rp.LogStartOffset); err != nil {
			f.m.cfg.Logger.Warn("follower log start", "partition", tp, "leader.log.start", rp.LogStartOffset, "err", err)
		}
	case kerr.OffsetOutOfRange.Code:
		leo := st.p.Log.LogEndOffset()
		if rp.LogStartOffset > leo {
			f.m.cfg.Logger.Info("follower behind the leader's log start", "partition", tp, "log.end", leo, "leader.log.start", rp.LogStartOffset)
			if err := st.p.TruncateFullyAndStartAt(rp.LogStartOffset); err != nil {
				f.m.cfg.Logger.Warn("follower restart log", "partition", tp, "err", err)
				f.delay(st)
			}
			return
		}
		f.mu.Lock()
		st.truncated = false
		f.mu.Unlock()
	default:
		f.delay(st)
	}
}

// truncateOnFetch cuts the log where the leader said it diverged (a
// DivergingEpoch in the fetch response, KIP-320), bounded by this log's own
// epoch history, and keeps fetching: the next fetch carries the new last
// epoch, which the leader checks again. The cut runs even at the log end,
// dropping an epoch entry that holds no batch.
func (f *fetcher) truncateOnFetch(tp log.TopicPartition, st *fetchState, leaderEpoch int32, leaderEnd int64) {
	offset, _ := truncationOffset(st.p, leaderEpoch, leaderEnd)
	leo := st.p.Log.LogEndOffset()
	f.m.cfg.Logger.Info("truncating follower log on a diverging epoch", "partition", tp, "from", leo, "to", offset,
		"diverging.epoch", leaderEpoch, "diverging.end.offset", leaderEnd, "leader.epoch", st.epoch)
	if err := st.p.TruncateTo(offset); err != nil {
		f.m.cfg.Logger.Warn("truncating follower log", "partition", tp, "err", err)
		f.delay(st)
	}
}
