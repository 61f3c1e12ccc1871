package api

// The share-partition leader's persister: it reads and writes a
// share-partition's durable state through the share coordinator that owns
// it, the leader of __share_group_state partition
// abs(javaHash("group:topicId:partition")) % partitions, in process when
// that is this node and with InitializeShareGroupState /
// ReadShareGroupState / WriteShareGroupState otherwise, as Kafka's
// DefaultStatePersister does.

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/share"
)

// shareStateTopic returns __share_group_state, creating it on first use
// with the share.coordinator.state.topic.* configs, compacted as Kafka
// creates it.
func (b *Broker) shareStateTopic() (*metadata.Topic, int16) {
	cfg := b.Config()
	return b.internalTopic(controller.ShareGroupStateTopic, cfg.ShareCoordinatorStateTopicNumPartitions, cfg.ShareCoordinatorStateTopicReplicationFactor,
		int32(cfg.ShareCoordinatorStateTopicMinISR), map[string]*string{
			"cleanup.policy":   strptr("compact"),
			"compression.type": strptr("producer"),
			"segment.bytes":    strptr(strconv.Itoa(104857600)),
		})
}

// shareCoordinatorFor returns the __share_group_state partition of key and
// its leader.
func (b *Broker) shareCoordinatorFor(key share.Key) (partition, leader int32, code int16) {
	t, code := b.shareStateTopic()
	if code != 0 {
		return -1, -1, code
	}
	p := group.PartitionFor(key.CoordinatorKey(), int32(len(t.Partitions)))
	return p, t.Partitions[p].Leader, 0
}

// retryShareState runs a persister call of the share admin APIs (90-92)
// again while the share coordinator answers that it cannot yet (loading
// __share_group_state, moving, not elected), with Kafka's persister
// backoff (share.DefaultPersisterRetry), and returns the last answer.
// Those APIs run off the handler pool, so the wait holds no handler; a
// shutdown cuts it short.
func (b *Broker) retryShareState(attempt func() int16) int16 {
	return share.DefaultPersisterRetry().Do(attempt, b.shareRetryWait, rand.Float64)
}

// shareRetryWaitStepMs is how often a persister backoff checks for a
// shutdown.
const shareRetryWaitStepMs = 100

func (b *Broker) shareRetryWait(d time.Duration) bool {
	for d > 0 && !b.closing.Load() {
		step := min(d, shareRetryWaitStepMs*time.Millisecond)
		time.Sleep(step)
		d -= step
	}
	return !b.closing.Load()
}

// sharePersistTimeout bounds a persister call to another node.
func (b *Broker) sharePersistTimeout() time.Duration {
	return time.Duration(b.Config().RequestTimeoutMs) * time.Millisecond
}

// readShareState reads key's durable state; found is false when it was
// never initialized.
func (b *Broker) readShareState(key share.Key, leaderEpoch int32) (share.PersistedState, bool, int16) {
	p, leader, code := b.shareCoordinatorFor(key)
	if code != 0 {
		return share.PersistedState{}, false, code
	}
	if leader == b.NodeID && b.ShareStates != nil {
		return b.ShareStates.Read(p, key, leaderEpoch)
	}
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = key.Group
	rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch = key.Partition, leaderEpoch
	req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: key.TopicID, Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{rp}}}
	resp, err := b.sendShareState(leader, req)
	if err != nil {
		return share.PersistedState{}, false, kerr.CoordinatorNotAvailable.Code
	}
	r := resp.(*kmsg.ReadShareGroupStateResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return share.PersistedState{}, false, kerr.UnknownServerError.Code
	}
	got := r.Topics[0].Partitions[0]
	if got.ErrorCode != 0 {
		return share.PersistedState{}, false, got.ErrorCode
	}
	if got.StartOffset < 0 {
		return share.PersistedState{}, false, 0
	}
	s := share.PersistedState{StateEpoch: got.StateEpoch, LeaderEpoch: leaderEpoch, StartOffset: got.StartOffset}
	for _, sb := range got.StateBatches {
		s.Batches = append(s.Batches, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset, State: share.RecordState(sb.DeliveryState), DeliveryCount: sb.DeliveryCount})
	}
	return s, true, 0
}

// writeShareState persists key's state.
func (b *Broker) writeShareState(key share.Key, stateEpoch, leaderEpoch int32, startOffset int64, batches []share.StateBatch) int16 {
	p, leader, code := b.shareCoordinatorFor(key)
	if code != 0 {
		return code
	}
	if leader == b.NodeID && b.ShareStates != nil {
		return b.ShareStates.Write(p, key, stateEpoch, leaderEpoch, startOffset, batches)
	}
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.GroupID = key.Group
	rp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	rp.Partition, rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset, rp.DeliveryCompleteCount = key.Partition, stateEpoch, leaderEpoch, startOffset, -1
	for _, sb := range batches {
		rp.StateBatches = append(rp.StateBatches, kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset, DeliveryState: int8(sb.State), DeliveryCount: sb.DeliveryCount})
	}
	req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: key.TopicID, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{rp}}}
	resp, err := b.sendShareState(leader, req)
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	r := resp.(*kmsg.WriteShareGroupStateResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return kerr.UnknownServerError.Code
	}
	return r.Topics[0].Partitions[0].ErrorCode
}

func (b *Broker) sendShareState(leader int32, req kmsg.Request) (kmsg.Response, error) {
	if b.SendToBroker == nil || leader < 0 {
		return nil, kerr.CoordinatorNotAvailable
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.sharePersistTimeout())
	defer cancel()
	return b.SendToBroker(ctx, leader, req)
}

// persistSharePartition writes the changes of key's share-partition
// through its share coordinator (share.Manager.Persist: in order, without
// holding the share-partition's lock across the call).
func (b *Broker) persistSharePartition(key share.Key) int16 {
	return b.shares().partitions.Persist(key, func(w share.StateWrite) int16 {
		return b.writeShareState(key, w.StateEpoch, w.LeaderEpoch, w.StartOffset, w.Batches)
	}, func(sp *share.Partition, code int16) {
		switch code {
		case 0:
		case kerr.FencedStateEpoch.Code:
			// An admin reset the state: reload it on the next use.
			sp.SetLeaderEpoch(-2)
		default:
			b.Logger.Warn("failed to persist share-partition state", "group", key.Group, "partition", key.Partition, "err", kerr.ErrorForCode(code))
		}
	})
}

// initializeShareState resets key's durable state to start at startOffset
// at stateEpoch.
func (b *Broker) initializeShareState(key share.Key, stateEpoch int32, startOffset int64) int16 {
	p, leader, code := b.shareCoordinatorFor(key)
	if code != 0 {
		return code
	}
	if leader == b.NodeID && b.ShareStates != nil {
		return b.ShareStates.Initialize(p, key, stateEpoch, startOffset)
	}
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = key.Group
	rp := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	rp.Partition, rp.StateEpoch, rp.StartOffset = key.Partition, stateEpoch, startOffset
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: key.TopicID, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{rp}}}
	resp, err := b.sendShareState(leader, req)
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	r := resp.(*kmsg.InitializeShareGroupStateResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return kerr.UnknownServerError.Code
	}
	return r.Topics[0].Partitions[0].ErrorCode
}

// deleteShareState deletes key's durable state.
func (b *Broker) deleteShareState(key share.Key) int16 {
	p, leader, code := b.shareCoordinatorFor(key)
	if code != 0 {
		return code
	}
	if leader == b.NodeID && b.ShareStates != nil {
		return b.ShareStates.Delete(p, key)
	}
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = key.Group
	req.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: key.TopicID, Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: key.Partition}}}}
	resp, err := b.sendShareState(leader, req)
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	r := resp.(*kmsg.DeleteShareGroupStateResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return kerr.UnknownServerError.Code
	}
	return r.Topics[0].Partitions[0].ErrorCode
}
