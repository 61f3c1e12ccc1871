package server

import (
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/api"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/share"
)

// shareGroupConfig is the group coordinator's share-group configuration:
// the group.share.* keys, and the broker's share-partitions told when a
// member leaves (its records are released at once) or a group is deleted.
func shareGroupConfig(cfg *config.Broker, broker *api.Broker) group.ShareGroupConfig {
	out := group.DefaultShareGroupConfig()
	out.Enabled = cfg.Share.Enable
	out.SessionTimeoutMs = cfg.Share.SessionTimeoutMs
	out.HeartbeatIntervalMs = cfg.Share.HeartbeatIntervalMs
	out.MaxSize = cfg.Share.MaxSize
	out.OnMemberLeft = broker.ReleaseShareMember
	out.OnDeleted = broker.ForgetShareGroup
	return out
}

// shareStateStorage is the share coordinator's view of
// __share_group_state: appends with acks=-1 through the partition, loads
// to the log end, as offsetsStorage does for __consumer_offsets.
type shareStateStorage struct {
	partitions *partition.Manager
	timeoutMs  int32
}

func (s shareStateStorage) partition(p int32) (*partition.Partition, error) {
	part := s.partitions.Get(controller.ShareGroupStateTopic, p)
	if part == nil {
		return nil, kerr.NotLeaderForPartition
	}
	return part, nil
}

// Append implements share.StateStorage.
func (s shareStateStorage) Append(p int32, kvs []share.StateKV) error {
	part, err := s.partition(p)
	if err != nil {
		return err
	}
	recs := make([]record.Record, len(kvs))
	for i, kv := range kvs {
		recs[i] = record.Record{Key: kv.Key, Value: kv.Value}
	}
	batch, err := buildBatch(recs)
	if err != nil {
		return err
	}
	_, err = appendReplicated(part, batch, s.timeoutMs)
	return err
}

// Load implements share.StateStorage.
func (s shareStateStorage) Load(p int32, fn func(key, value []byte) error) error {
	part, err := s.partition(p)
	if err != nil {
		return err
	}
	return replayLog(part.Log, part.Log.LogEndOffset(), func(_ int64, r record.Record) error {
		return fn(r.Key, r.Value)
	})
}

// shareElections tells the share coordinator which __share_group_state
// partitions this node leads as the metadata image changes.
type shareElections struct {
	nodeID      int32
	coordinator *share.StateCoordinator

	mu  sync.Mutex
	led map[int32]int32 // partition -> leader epoch
}

func (e *shareElections) apply(img *metadata.Image) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := map[int32]int32{}
	if t := img.Topic(controller.ShareGroupStateTopic); t != nil {
		for _, p := range t.Partitions {
			if p != nil && p.Leader == e.nodeID {
				now[p.Partition] = p.LeaderEpoch
			}
		}
	}
	for p, epoch := range e.led {
		if newEpoch, ok := now[p]; !ok || newEpoch != epoch {
			e.coordinator.OnResigned(p)
		}
	}
	for p, epoch := range now {
		if old, ok := e.led[p]; !ok || old != epoch {
			e.coordinator.OnElected(p)
		}
	}
	e.led = now
}

// setupShareCoordinator makes the share coordinator and hands it to the
// API handlers.
func (n *Node) setupShareCoordinator(logger *slog.Logger) {
	coordinator := share.NewStateCoordinator(shareStateStorage{partitions: n.partitions, timeoutMs: n.cfg.RequestTimeoutMs}, logger)
	n.shareElections = &shareElections{nodeID: n.cfg.NodeID, coordinator: coordinator}
	n.broker.ShareStates = coordinator
}
