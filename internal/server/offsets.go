package server

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
)

// offsetsStorage is the group coordinator's view of __consumer_offsets:
// appends go through the partition like any produce, so they get offsets,
// leader epochs and the high watermark the same way, and with acks=-1 as
// Kafka's group coordinator writes them (appendReplicated): an append
// returns once every in-sync replica has the records, so a commit or a
// rebalance the coordinator answered survives its node (bounded by
// request.timeout.ms).
type offsetsStorage struct {
	partitions *partition.Manager
	timeoutMs  int32
}

func (s offsetsStorage) partition(p int32) (*partition.Partition, error) {
	part := s.partitions.Get(controller.ConsumerOffsetsTopic, p)
	if part == nil {
		return nil, kerr.NotLeaderForPartition
	}
	return part, nil
}

// Append implements group.Storage.
func (s offsetsStorage) Append(p int32, kvs []group.KV) (int64, error) {
	part, err := s.partition(p)
	if err != nil {
		return 0, err
	}
	recs := make([]record.Record, len(kvs))
	for i, kv := range kvs {
		recs[i] = record.Record{Key: kv.Key, Value: kv.Value}
	}
	batch, err := buildBatch(recs)
	if err != nil {
		return 0, err
	}
	return appendReplicated(part, batch, s.timeoutMs)
}

// Load implements group.Storage.
func (s offsetsStorage) Load(p int32, fn func(offset int64, key, value []byte) error) error {
	part, err := s.partition(p)
	if err != nil {
		return err
	}
	// To the log end, as txnStateStorage.Load explains.
	return replayLog(part.Log, part.Log.LogEndOffset(), func(offset int64, r record.Record) error {
		return fn(offset, r.Key, r.Value)
	})
}

// coordinatorElections tells the group coordinator which __consumer_offsets
// partitions this node leads as the metadata image changes.
type coordinatorElections struct {
	nodeID int32
	groups *group.Coordinator

	mu  sync.Mutex
	led map[int32]bool
}

func (e *coordinatorElections) apply(img *metadata.Image) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := map[int32]bool{}
	if t := img.Topic(controller.ConsumerOffsetsTopic); t != nil {
		for _, p := range t.Partitions {
			if p.Leader == e.nodeID {
				now[p.Partition] = true
			}
		}
	}
	for p := range e.led {
		if !now[p] {
			e.groups.OnResigned(p)
		}
	}
	for p := range now {
		if !e.led[p] {
			e.groups.OnElected(p)
		}
	}
	e.led = now
}

// topicResolver maps topic ids for OffsetCommit/OffsetFetch v10.
type topicResolver struct{ controller *controller.Controller }

func (r topicResolver) TopicName(id [16]byte) (string, bool) {
	if t := r.controller.Image().TopicByID(metadata.UUID(id)); t != nil {
		return t.Name, true
	}
	return "", false
}

func (r topicResolver) TopicID(name string) ([16]byte, bool) {
	if t := r.controller.Image().Topic(name); t != nil {
		return t.ID, true
	}
	return [16]byte{}, false
}
