package share

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// StateStorage is the broker's __share_group_state log.
type StateStorage interface {
	// Append durably appends records (value nil = tombstone) to partition
	// p, as the group coordinator's appends: acks=-1, so what the
	// coordinator answered after a nil survives this node.
	Append(p int32, records []StateKV) error
	// Load calls fn for every record of partition p from its start to its
	// log end, in order.
	Load(p int32, fn func(key, value []byte) error) error
}

// StateKV is one record for StateStorage.
type StateKV struct {
	Key   []byte
	Value []byte
}

// StateCoordinator is the share coordinator of one broker: the durable
// state of share-partitions in the __share_group_state partitions this
// broker leads, each partition behind its own mutex. A change is answered
// once its record is appended; a partition that becomes led here is
// replayed before it answers (COORDINATOR_LOAD_IN_PROGRESS meanwhile), and
// one led elsewhere answers NOT_COORDINATOR.
//
// Lock order: StateCoordinator.mu is never held while taking a
// partition's mu.
type StateCoordinator struct {
	storage StateStorage
	log     *slog.Logger
	loaders sync.WaitGroup

	mu struct {
		sync.Mutex
		partitions map[int32]*statePartition
		closed     bool
	}
}

type statePartition struct {
	id        int32
	abandoned atomic.Bool
	mu        struct {
		sync.Mutex
		status partitionStatus
		// Invariant: states holds exactly the keys whose last record in
		// the partition is not a tombstone.
		states map[Key]PersistedState
	}
}

type partitionStatus uint8

const (
	partitionLoading partitionStatus = iota
	partitionActive
	partitionUnloaded
)

// NewStateCoordinator returns a coordinator leading no partition yet.
func NewStateCoordinator(storage StateStorage, logger *slog.Logger) *StateCoordinator {
	if logger == nil {
		logger = slog.Default()
	}
	c := &StateCoordinator{storage: storage, log: logger.With("component", "share-coordinator")}
	c.mu.partitions = make(map[int32]*statePartition)
	return c
}

// OnElected makes this node the leader of partition p: its records are
// replayed in the background.
func (c *StateCoordinator) OnElected(p int32) {
	c.mu.Lock()
	if c.mu.closed || c.mu.partitions[p] != nil {
		c.mu.Unlock()
		return
	}
	part := &statePartition{id: p}
	part.mu.status = partitionLoading
	c.mu.partitions[p] = part
	c.loaders.Add(1)
	c.mu.Unlock()
	go c.load(part)
}

func (c *StateCoordinator) load(p *statePartition) {
	defer c.loaders.Done()
	states := make(map[Key]PersistedState)
	records := 0
	err := c.storage.Load(p.id, func(key, value []byte) error {
		if p.abandoned.Load() {
			return errLoadAbandoned
		}
		r, err := DecodeStateRecord(key, value)
		if err != nil {
			return err
		}
		records++
		applyStateRecord(states, r)
		return nil
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.status != partitionLoading {
		return
	}
	if err != nil {
		p.mu.status = partitionUnloaded
		c.log.Error("failed to load __share_group_state partition", "partition", p.id, "err", err)
		c.mu.Lock()
		if c.mu.partitions[p.id] == p {
			delete(c.mu.partitions, p.id)
		}
		c.mu.Unlock()
		return
	}
	p.mu.states, p.mu.status = states, partitionActive
	c.log.Info("loaded __share_group_state partition", "partition", p.id, "records", records, "share_partitions", len(states))
}

var errLoadAbandoned = errors.New("share: partition load abandoned")

// applyStateRecord applies one record read back from the log.
func applyStateRecord(states map[Key]PersistedState, r StateRecord) {
	switch {
	case r.Tombstone:
		delete(states, r.Key)
	case r.Update:
		s, ok := states[r.Key]
		if !ok {
			return // an update without its snapshot: nothing to apply it to
		}
		if r.State.StartOffset >= 0 {
			s.StartOffset = r.State.StartOffset
		}
		s.LeaderEpoch = r.State.LeaderEpoch
		s.Batches = MergeBatches(s.Batches, r.State.Batches, s.StartOffset)
		states[r.Key] = s
	default:
		states[r.Key] = r.State
	}
}

// OnResigned gives up partition p.
func (c *StateCoordinator) OnResigned(p int32) {
	c.mu.Lock()
	part := c.mu.partitions[p]
	delete(c.mu.partitions, p)
	c.mu.Unlock()
	if part == nil {
		return
	}
	part.abandoned.Store(true)
	part.mu.Lock()
	part.mu.status, part.mu.states = partitionUnloaded, nil
	part.mu.Unlock()
}

// Close resigns every partition and waits for loads to stop.
func (c *StateCoordinator) Close() {
	c.mu.Lock()
	c.mu.closed = true
	var ids []int32
	for id := range c.mu.partitions {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.OnResigned(id)
	}
	c.loaders.Wait()
}

// run runs fn on partition p's states with its mutex held, or returns the
// error to answer.
func (c *StateCoordinator) run(p int32, fn func(part *statePartition) int16) int16 {
	c.mu.Lock()
	closed, part := c.mu.closed, c.mu.partitions[p]
	c.mu.Unlock()
	switch {
	case closed:
		return kerr.CoordinatorNotAvailable.Code
	case part == nil:
		return kerr.NotCoordinator.Code
	}
	part.mu.Lock()
	defer part.mu.Unlock()
	switch part.mu.status {
	case partitionLoading:
		return kerr.CoordinatorLoadInProgress.Code
	case partitionUnloaded:
		return kerr.NotCoordinator.Code
	}
	return fn(part)
}

// appendLocked writes a snapshot (or tombstone) of key and applies it.
func (c *StateCoordinator) appendLocked(part *statePartition, key Key, s PersistedState, tombstone bool) int16 {
	k, v := EncodeSnapshot(key, s, tombstone)
	if err := c.storage.Append(part.id, []StateKV{{Key: k, Value: v}}); err != nil {
		c.log.Warn("failed to append share state", "partition", part.id, "err", fmt.Errorf("share: appending to __share_group_state-%d: %w", part.id, err))
		return appendErrorCode(err)
	}
	if tombstone {
		delete(part.mu.states, key)
	} else {
		part.mu.states[key] = s
	}
	return 0
}

// appendErrorCode is the error a failed coordinator write answers, as the
// group coordinator's: retriable COORDINATOR_NOT_AVAILABLE or
// NOT_COORDINATOR.
func appendErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) && (ke == kerr.NotLeaderForPartition || ke == kerr.KafkaStorageError) {
		return kerr.NotCoordinator.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// Initialize sets a share-partition's state to start at startOffset with
// nothing in flight, at stateEpoch (InitializeShareGroupState).
// FENCED_STATE_EPOCH when the state has a newer epoch.
func (c *StateCoordinator) Initialize(p int32, key Key, stateEpoch int32, startOffset int64) int16 {
	return c.run(p, func(part *statePartition) int16 {
		old, ok := part.mu.states[key]
		if ok && stateEpoch < old.StateEpoch {
			return kerr.FencedStateEpoch.Code
		}
		s := PersistedState{SnapshotEpoch: old.SnapshotEpoch + 1, StateEpoch: stateEpoch, LeaderEpoch: old.LeaderEpoch, StartOffset: startOffset}
		return c.appendLocked(part, key, s, false)
	})
}

// Read returns a share-partition's state (ReadShareGroupState); found is
// false for one never initialized. A leaderEpoch >= 0 older than the
// state's answers FENCED_LEADER_EPOCH; a newer one is recorded.
func (c *StateCoordinator) Read(p int32, key Key, leaderEpoch int32) (s PersistedState, found bool, code int16) {
	code = c.run(p, func(part *statePartition) int16 {
		s, found = part.mu.states[key]
		if !found || leaderEpoch < 0 {
			return 0
		}
		if leaderEpoch < s.LeaderEpoch {
			return kerr.FencedLeaderEpoch.Code
		}
		if leaderEpoch > s.LeaderEpoch {
			s.LeaderEpoch = leaderEpoch
			s.SnapshotEpoch++
			return c.appendLocked(part, key, s, false)
		}
		return 0
	})
	return s, found, code
}

// Write merges a write into a share-partition's state
// (WriteShareGroupState): the start offset (unless -1) and the batches
// given replace what they cover. FENCED_STATE_EPOCH or FENCED_LEADER_EPOCH
// when the state has newer epochs.
func (c *StateCoordinator) Write(p int32, key Key, stateEpoch, leaderEpoch int32, startOffset int64, batches []StateBatch) int16 {
	return c.run(p, func(part *statePartition) int16 {
		s, ok := part.mu.states[key]
		switch {
		case ok && stateEpoch < s.StateEpoch:
			return kerr.FencedStateEpoch.Code
		case ok && leaderEpoch >= 0 && leaderEpoch < s.LeaderEpoch:
			return kerr.FencedLeaderEpoch.Code
		}
		if !ok {
			s = PersistedState{StartOffset: startOffset}
		}
		s.StateEpoch = stateEpoch
		if leaderEpoch >= 0 {
			s.LeaderEpoch = leaderEpoch
		}
		if startOffset >= 0 {
			s.StartOffset = startOffset
		}
		s.Batches = MergeBatches(s.Batches, batches, s.StartOffset)
		s.SnapshotEpoch++
		return c.appendLocked(part, key, s, false)
	})
}

// Delete removes a share-partition's state (DeleteShareGroupState).
func (c *StateCoordinator) Delete(p int32, key Key) int16 {
	return c.run(p, func(part *statePartition) int16 {
		if _, ok := part.mu.states[key]; !ok {
			return 0
		}
		return c.appendLocked(part, key, PersistedState{}, true)
	})
}

// Keys returns the share-partitions with state in partition p that match.
func (c *StateCoordinator) Keys(p int32, match func(Key) bool) []Key {
	var out []Key
	c.run(p, func(part *statePartition) int16 {
		for k := range part.mu.states {
			if match(k) {
				out = append(out, k)
			}
		}
		return 0
	})
	return out
}
