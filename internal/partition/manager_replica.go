package partition

import (
	"fmt"
	"slices"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Followers: partitions this node is a replica of but does not lead. They
// live apart from the led partitions, so every handler that serves clients
// (Get) sees only leaders; the replica fetchers (package replication) read
// them through Followers, and consumer fetches that may read from a
// follower (KIP-392) through GetFollower. A partition changing role is
// closed under its old role (writing a producer snapshot at its log end)
// and opened again under the new one, so no writer of one role can touch it
// in the other; the new one starts from a copy of the old one's producer
// state, all its cached batches included (handoff.go).

// SetAlterPartition sets how leaders send ISR changes to the controller.
func (m *Manager) SetAlterPartition(fn AlterPartitionFunc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.alterPartition = fn
}

// Follower is a hosted follower partition and whom it follows.
type Follower struct {
	Partition   *Partition
	Leader      int32
	LeaderEpoch int32
}

// Followers returns every follower partition.
func (m *Manager) Followers() []Follower {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Follower, 0, len(m.mu.followers))
	for _, p := range m.mu.followers {
		out = append(out, Follower{Partition: p, Leader: p.LeaderID(), LeaderEpoch: p.LeaderEpoch()})
	}
	return out
}

// GetFollower returns the hosted follower partition, or nil.
func (m *Manager) GetFollower(topic string, index int32) *Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.followers[log.TopicPartition{Topic: topic, Partition: index}]
}

// ISRChanges are the ISR changes the partitions led here made so far.
func (m *Manager) ISRChanges() *ISRChangeCounts { return &m.isrChanges }

// MaybeShrinkISRs runs the ISR lag check on every led partition.
func (m *Manager) MaybeShrinkISRs(lagMaxMs int64) {
	for _, p := range m.All() {
		p.MaybeShrinkISR(lagMaxMs)
	}
}

// leaderStateLocked applies pm to a partition this node leads.
func (m *Manager) leaderStateLocked(p *Partition, pm *metadata.Partition) {
	err := p.UpdateReplicaState(LeaderState{NodeID: m.nodeID, Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch,
		PartitionEpoch: pm.PartitionEpoch, Replicas: pm.Replicas, ISR: pm.ISR, Alter: m.alterPartition})
	if err != nil {
		m.logger.Warn("becoming leader", "partition", p, "err", err)
	}
}

// retireFollowerLocked closes the follower of tp, if any, before the
// partition opens as leader, and returns its producer state for the leader
// (nil when there was no follower).
func (m *Manager) retireFollowerLocked(tp log.TopicPartition) *handoff {
	p := m.mu.followers[tp]
	if p == nil {
		return nil
	}
	delete(m.mu.followers, tp)
	from, err := p.close()
	if err != nil {
		m.logger.Warn("snapshot of follower partition", "partition", tp, "err", err)
	}
	p.Notify() // consumer fetches parked on the follower answer now
	return from
}

// reconcileFollowersLocked hosts as followers the partitions of img this
// node is a replica of but does not lead, and drops the rest; a follower
// whose topic or inherited broker configs changed since old takes the new
// configuration. A follower
// opened over the log of a partition this node just stopped leading takes
// over its producer state from handoffs.
func (m *Manager) reconcileFollowersLocked(old, img *metadata.Image, handoffs map[log.TopicPartition]*handoff) error {
	if m.mu.followers == nil {
		m.mu.followers = map[log.TopicPartition]*Partition{}
	}
	var firstErr error
	keep := map[log.TopicPartition]bool{}
	for _, name := range img.TopicNames() {
		if m.reserved[name] {
			continue
		}
		t := img.Topic(name)
		for _, pm := range t.Partitions {
			if pm == nil || pm.Leader == m.nodeID || !slices.Contains(pm.Replicas, m.nodeID) {
				continue
			}
			tp := log.TopicPartition{Topic: name, Partition: pm.Partition}
			if m.mu.partitions[tp] != nil {
				continue // still led here until the leader pass drops it
			}
			keep[tp] = true
			p := m.mu.followers[tp]
			if p != nil && p.TopicID != t.ID {
				delete(m.mu.followers, tp)
				p.retire()
				p.Notify()
				p = nil
			}
			if p == nil {
				var err error
				p, err = m.openFollowerLocked(img, name, t, pm, handoffs[tp])
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				m.mu.followers[tp] = p
			} else if m.configsChanged(old, img, name) {
				cfg := m.topicConfig(img, name)
				p.Log.UpdateConfig(LogConfig(cfg))
				p.config.Store(cfg)
			}
			if err := p.UpdateReplicaState(LeaderState{NodeID: m.nodeID, Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch,
				PartitionEpoch: pm.PartitionEpoch, Replicas: pm.Replicas, ISR: pm.ISR}); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	for tp, p := range m.mu.followers {
		if keep[tp] {
			continue
		}
		delete(m.mu.followers, tp)
		if _, err := p.close(); err != nil {
			m.logger.Warn("snapshot of follower partition", "partition", tp, "err", err)
		}
		p.Notify()
		if m.mu.partitions[tp] == nil && !isReplica(img, tp, p.TopicID, m.nodeID) {
			if err := m.logs.Delete(tp); err != nil {
				m.logger.Warn("delete log", "partition", tp, "err", err)
			}
		}
	}
	return firstErr
}

func (m *Manager) openFollowerLocked(img *metadata.Image, name string, t *metadata.Topic, pm *metadata.Partition, from *handoff) (*Partition, error) {
	tp := log.TopicPartition{Topic: name, Partition: pm.Partition}
	cfg := m.topicConfig(img, name)
	l := m.logs.Get(tp)
	if l == nil {
		var err error
		l, err = m.logs.Create(tp, t.ID, LogConfig(cfg))
		if err != nil {
			return nil, fmt.Errorf("partition: create follower %s-%d: %w", name, pm.Partition, err)
		}
	} else {
		l.UpdateConfig(LogConfig(cfg))
	}
	p, err := open(name, pm.Partition, t.ID, l, pm.LeaderEpoch, Options{
		ProducerIDExpirationMs: m.producerIDExpirationMs.Load(), Logger: m.logger,
	}, from)
	if err != nil {
		return nil, fmt.Errorf("partition: open follower %s-%d: %w", name, pm.Partition, err)
	}
	p.config.Store(cfg)
	return p, nil
}
