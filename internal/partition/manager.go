package partition

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// TopicConfigFunc resolves the effective configuration of a topic.
type TopicConfigFunc func(img *metadata.Image, topic string) *config.TopicConfig

// Manager hosts the partitions this node leads, creating, reconfiguring and
// deleting their logs as the metadata image changes.
type Manager struct {
	nodeID      int32
	logs        *log.Manager
	topicConfig TopicConfigFunc
	logger      *slog.Logger
	// reserved are topics whose logs the manager must leave alone (the
	// metadata log).
	reserved map[string]bool
	// producerIDExpirationMs is producer.id.expiration.ms for partitions
	// opened from now on.
	producerIDExpirationMs atomic.Int64

	// alterPartition sends leaders' ISR changes (manager_replica.go).
	alterPartition AlterPartitionFunc
	// isrChanges counts the ISR changes of every partition led here.
	isrChanges ISRChangeCounts

	mu struct {
		sync.RWMutex
		partitions map[log.TopicPartition]*Partition
		// followers are the partitions replicated here but led elsewhere.
		followers map[log.TopicPartition]*Partition
	}
}

// NewManager returns a manager over logs.
func NewManager(nodeID int32, logs *log.Manager, topicConfig TopicConfigFunc, reserved []string, logger *slog.Logger) *Manager {
	m := &Manager{nodeID: nodeID, logs: logs, topicConfig: topicConfig, logger: logger, reserved: map[string]bool{}}
	for _, r := range reserved {
		m.reserved[r] = true
	}
	m.mu.partitions = map[log.TopicPartition]*Partition{}
	m.producerIDExpirationMs.Store(defaultProducerIDExpirationMs)
	return m
}

// SetProducerIDExpirationMs sets producer.id.expiration.ms for the
// partitions opened from now on (ExpireProducers takes it per call).
func (m *Manager) SetProducerIDExpirationMs(ms int64) {
	if ms > 0 {
		m.producerIDExpirationMs.Store(ms)
	}
}

// ExpireProducers forgets, in every hosted partition, the producers idle for
// expirationMs with no open transaction (producer.id.expiration.ms, checked
// every producer.id.expiration.check.interval.ms).
func (m *Manager) ExpireProducers(nowMs, expirationMs int64) int {
	m.SetProducerIDExpirationMs(expirationMs)
	n := 0
	for _, p := range m.All() {
		n += p.ExpireProducers(nowMs, expirationMs)
	}
	return n
}

// WriteSnapshots writes every hosted partition's producer state as a
// snapshot at its log end, for a clean shutdown: call it after the last
// append and before the logs close.
func (m *Manager) WriteSnapshots() error {
	var errs []error
	for _, p := range m.All() {
		if err := p.WriteSnapshot(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Get returns the hosted partition, or nil.
func (m *Manager) Get(topic string, index int32) *Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.partitions[log.TopicPartition{Topic: topic, Partition: index}]
}

// All returns every hosted partition.
func (m *Manager) All() []*Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*Partition, 0, len(m.mu.partitions))
	for _, p := range m.mu.partitions {
		out = append(out, p)
	}
	return out
}

// Reconcile makes the hosted partitions match img: it opens or creates the
// logs of partitions this node leads, updates their configs and leader
// epochs, and deletes the logs of topics that no longer exist.
func (m *Manager) Reconcile(old, img *metadata.Image) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var firstErr error
	keep := map[log.TopicPartition]bool{}
	// handoffs are the producer states of the partitions this pass stops
	// leading, for the followers opened over their logs.
	handoffs := map[log.TopicPartition]*handoff{}
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		configChanged := m.configsChanged(old, img, name)
		var cfg *config.TopicConfig
		cfgResolved := false
		for _, pm := range t.Partitions {
			if pm == nil || pm.Leader != m.nodeID {
				continue
			}
			tp := log.TopicPartition{Topic: name, Partition: pm.Partition}
			keep[tp] = true
			p := m.mu.partitions[tp]
			if p != nil && p.TopicID != t.ID {
				// The topic was deleted and re-created with the same name.
				m.deleteLocked(tp, p)
				p = nil
			}
			if !cfgResolved {
				cfg = m.topicConfig(img, name)
				cfgResolved = true
			}
			if p == nil {
				from := m.retireFollowerLocked(tp)
				l := m.logs.Get(tp)
				if l == nil {
					var err error
					l, err = m.logs.Create(tp, t.ID, LogConfig(cfg))
					if err != nil {
						if firstErr == nil {
							firstErr = fmt.Errorf("partition: create %s-%d: %w", name, pm.Partition, err)
						}
						continue
					}
				} else {
					l.UpdateConfig(LogConfig(cfg))
				}
				var err error
				p, err = open(name, pm.Partition, t.ID, l, pm.LeaderEpoch, Options{
					ProducerIDExpirationMs: m.producerIDExpirationMs.Load(), Logger: m.logger, ISRChanges: &m.isrChanges,
				}, from)
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("partition: open %s-%d: %w", name, pm.Partition, err)
					}
					continue
				}
				p.config.Store(cfg)
				m.mu.partitions[tp] = p
				m.leaderStateLocked(p, pm)
				continue
			}
			if configChanged {
				p.Log.UpdateConfig(LogConfig(cfg))
				p.config.Store(cfg)
			}
			p.SetLeaderEpoch(pm.LeaderEpoch)
			m.leaderStateLocked(p, pm)
		}
	}
	for tp, p := range m.mu.partitions {
		if keep[tp] {
			continue
		}
		if isReplica(img, tp, p.TopicID, m.nodeID) {
			// Leadership moved (or the leader is being elected, as
			// while this broker is fenced): stop serving, keep the log.
			handoffs[tp] = m.unhostLocked(tp, p)
			continue
		}
		m.deleteLocked(tp, p)
	}
	if err := m.reconcileFollowersLocked(old, img, handoffs); err != nil && firstErr == nil {
		firstErr = err
	}
	// Logs on disk for topics that no longer exist (deleted while down),
	// or of partitions this node stopped being a replica of while down (a
	// reassignment moved them away: Kafka's stray replicas).
	for tp := range m.logs.All() {
		if !keep[tp] && !m.reserved[tp.Topic] && !assignedTo(img, tp, m.nodeID) {
			if err := m.logs.Delete(tp); err != nil {
				m.logger.Warn("delete stray log", "partition", tp, "err", err)
			}
		}
	}
	return firstErr
}

// assignedTo reports whether node is a replica of tp in img, whatever the
// topic's id.
func assignedTo(img *metadata.Image, tp log.TopicPartition, node int32) bool {
	t := img.Topic(tp.Topic)
	return t != nil && isReplica(img, tp, t.ID, node)
}

// isReplica reports whether node is still a replica of tp in img, under
// the same topic id.
func isReplica(img *metadata.Image, tp log.TopicPartition, topicID metadata.UUID, node int32) bool {
	t := img.Topic(tp.Topic)
	if t == nil || t.ID != topicID || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) || t.Partitions[tp.Partition] == nil {
		return false
	}
	return slices.Contains(t.Partitions[tp.Partition].Replicas, node)
}

// unhostLocked stops serving a partition whose log stays: its producer
// state is snapshotted, so a later start reloads it without a replay, and
// handed off for the follower this node may host over the log now.
func (m *Manager) unhostLocked(tp log.TopicPartition, p *Partition) *handoff {
	delete(m.mu.partitions, tp)
	from, err := p.close()
	if err != nil {
		m.logger.Warn("snapshot of unhosted partition", "partition", tp, "err", err)
	}
	p.Notify()
	return from
}

func (m *Manager) deleteLocked(tp log.TopicPartition, p *Partition) {
	delete(m.mu.partitions, tp)
	p.retire()
	p.Notify()
	if err := m.logs.Delete(tp); err != nil {
		m.logger.Warn("delete log", "partition", tp, "err", err)
	}
}

// configsChanged reports whether topic's effective configuration may differ
// between old and img: its own overrides changed, or the dynamic broker
// configs it inherits (this node's, or the cluster-wide defaults).
func (m *Manager) configsChanged(old, img *metadata.Image, topic string) bool {
	if old == nil {
		return true
	}
	node := strconv.Itoa(int(m.nodeID))
	return !sameConfigs(old.Configs(metadata.ResourceTopic, topic), img.Configs(metadata.ResourceTopic, topic)) ||
		!sameConfigs(old.Configs(metadata.ResourceBroker, node), img.Configs(metadata.ResourceBroker, node)) ||
		!sameConfigs(old.Configs(metadata.ResourceBroker, ""), img.Configs(metadata.ResourceBroker, ""))
}

func sameConfigs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// LogConfig maps a topic's configuration to its log's settings.
func LogConfig(tc *config.TopicConfig) log.Config {
	return log.Config{
		SegmentBytes:       int64(tc.SegmentBytes),
		SegmentMs:          tc.SegmentMs,
		SegmentJitterMs:    tc.SegmentJitterMs,
		SegmentIndexBytes:  tc.SegmentIndexBytes,
		IndexIntervalBytes: tc.IndexIntervalBytes,
		FlushMessages:      tc.FlushMessages,
		FlushMs:            tc.FlushMs,
		RetentionMs:        tc.RetentionMs,
		RetentionBytes:     tc.RetentionBytes,
		FileDeleteDelayMs:  tc.FileDeleteDelayMs,
		Preallocate:        tc.Preallocate,
		RetentionDelete:    tc.Delete(),
		Compaction: log.CompactionConfig{Enabled: tc.Compact(), MinCleanableDirtyRatio: tc.MinCleanableDirtyRatio,
			DeleteRetentionMs: tc.DeleteRetentionMs, MinCompactionLagMs: tc.MinCompactionLagMs, MaxCompactionLagMs: tc.MaxCompactionLagMs},
	}
}
