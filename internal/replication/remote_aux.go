package replication

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
)

// buildRemoteAuxState handles OFFSET_MOVED_TO_TIERED_STORAGE, Kafka's
// TierStateMachine: the follower's fetch offset lies below the leader's
// local log start, so the records it lacks are in the remote tier only. It
// asks the leader for its earliest local offset (ListOffsets -4), takes
// the leader-epoch checkpoint and producer snapshot of the remote segment
// ending just before it, starts its log there with the leader's log start
// offset, and fetches the leader's local tail from then on. A failure is
// retried after replica.fetch.backoff.ms.
func (f *fetcher) buildRemoteAuxState(cl *kgo.Client, tp log.TopicPartition, st *fetchState, leaderLogStartOffset int64) {
	if f.m.cfg.RemoteAuxState == nil {
		f.m.cfg.Logger.Warn("leader moved the fetch offset to tiered storage, but tiered storage is off here", "partition", tp)
		f.delay(st)
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.socketTimeout())
	defer cancel()
	localStart, err := f.leaderLocalLogStart(ctx, cl, tp, st)
	if err == nil && localStart < leaderLogStartOffset {
		err = fmt.Errorf("leader local log start %d below its log start %d", localStart, leaderLogStartOffset)
	}
	if err == nil {
		state, auxErr := f.m.cfg.RemoteAuxState(ctx, st.p, localStart, leaderLogStartOffset)
		if auxErr == nil {
			auxErr = st.p.RebuildFromRemote(state)
		}
		err = auxErr
	}
	if err != nil {
		f.m.cfg.Logger.Warn("building the follower's state from the remote tier failed; retrying", "partition", tp, "err", err)
		f.delay(st)
		return
	}
	f.m.cfg.Logger.Info("follower log rebuilt from the remote tier", "partition", tp,
		"local.log.start", localStart, "log.start", leaderLogStartOffset)
	f.mu.Lock()
	st.truncated = true
	f.mu.Unlock()
}

// leaderLocalLogStart asks the leader for its earliest local offset.
func (f *fetcher) leaderLocalLogStart(ctx context.Context, cl *kgo.Client, tp log.TopicPartition, st *fetchState) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = f.m.cfg.NodeID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = tp.Partition, -4, st.epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return 0, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("ListOffsets answered %d topics", len(resp.Topics))
	}
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != 0 {
		return 0, kerr.ErrorForCode(sp.ErrorCode)
	}
	return sp.Offset, nil
}
