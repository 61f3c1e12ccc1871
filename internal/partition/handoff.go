package partition

// Role changes. A partition changing role on this node is closed under its
// old role and opened again under the new one (manager_replica.go), and the
// new Partition takes over the old one's producer state from memory rather
// than from the snapshot the close wrote: the snapshot, in Kafka's format,
// holds only each producer's last batch, while memory holds the last
// producerBatchCacheSize. A follower promoted to leader must answer an
// idempotent producer's retry of any of its in-flight batches as a
// duplicate, as Kafka's does (its log and producer state outlive role
// changes), not with OUT_OF_ORDER_SEQUENCE_NUMBER.
//
// The new Partition gets a copy, so nothing that still holds the old one (a
// parked fetch, a produce that looked it up before the change) can touch
// the state the new role writes. The old Partition's roll hook is removed
// as it closes (retire), so the log runs one hook, the current Partition's,
// however many role changes it has seen.

import (
	"maps"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// handoff is what a closed Partition leaves for the next one over its log.
type handoff struct {
	topicID metadata.UUID
	log     *log.Log
	// producers is a copy of the producer state at close, up to the log
	// end offset then.
	producers *producerState
}

// producersFor returns the handed-off producer state if it is that of l
// under topicID and describes l up to its log end, else nil (the state is
// then rebuilt from the snapshot and the log). A nil handoff returns nil.
func (h *handoff) producersFor(topicID metadata.UUID, l *log.Log) *producerState {
	if h == nil || h.topicID != topicID || h.log != l {
		return nil
	}
	h.producers.mu.Lock()
	end := h.producers.mu.mapEndOffset
	h.producers.mu.Unlock()
	if end != l.LogEndOffset() {
		return nil
	}
	return h.producers
}

// clone copies the producer state: the producers with their cached
// batches, the open transactions, and the decided ones whose marker is not
// yet below the high watermark. KIP-890 verification guards are not
// copied: a guard belongs to a produce request on the old Partition, which
// that Partition now refuses.
func (s *producerState) clone() *producerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := newProducerState(s.mu.mapEndOffset)
	for pid, e := range s.mu.producers {
		stored := *e
		c.mu.producers[pid] = &stored
	}
	maps.Copy(c.mu.ongoing, s.mu.ongoing)
	c.mu.lastSnapOffset = s.mu.lastSnapOffset
	c.firstUnstable.Store(s.firstUnstable.Load())
	s.unreplicatedMu.Lock()
	if len(s.unreplicated) > 0 {
		c.unreplicated = maps.Clone(s.unreplicated)
		c.unreplicatedCount.Store(int32(len(c.unreplicated)))
	}
	s.unreplicatedMu.Unlock()
	c.mu.Lock()
	c.checkInvariantsLocked()
	c.mu.Unlock()
	return c
}
