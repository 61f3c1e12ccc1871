package partition

import (
	"fmt"

	"github.com/samsa-streaming/samsa/internal/log"
)

// RemoteAuxState is what a follower of a tiered partition takes from the
// remote tier when its fetch offset is below the leader's local log start
// (OFFSET_MOVED_TO_TIERED_STORAGE), Kafka's buildRemoteLogAuxState: the
// leader-epoch checkpoint and producer snapshot of the remote segment that
// ends just before the leader's local log start.
type RemoteAuxState struct {
	// LocalLogStartOffset is the leader's local log start, where this
	// replica's local log starts and fetching resumes.
	LocalLogStartOffset int64
	// LogStartOffset is the leader's log start offset, in the remote tier.
	LogStartOffset int64
	// LeaderEpochs is the remote segment's leader-epoch checkpoint, the
	// lineage up to its end.
	LeaderEpochs []log.EpochEntry
	// ProducerSnapshot is the remote segment's producer snapshot, taken
	// at LocalLogStartOffset; nil when it had none.
	ProducerSnapshot []byte
}

// RebuildFromRemote empties the log, starts it at the leader's local log
// start with the leader's log start offset, the remote leader epochs and
// producer snapshot, and reloads the producer state, so the replica fetches
// the leader's local tail next.
func (p *Partition) RebuildFromRemote(aux RemoteAuxState) error {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return fmt.Errorf("partition %s: %w", p, errClosedPartition)
	}
	if aux.LogStartOffset > aux.LocalLogStartOffset {
		return fmt.Errorf("partition %s: remote log start %d above the local start %d", p, aux.LogStartOffset, aux.LocalLogStartOffset)
	}
	if err := seedLog(p.Log, aux); err != nil {
		return fmt.Errorf("partition %s: %w", p, err)
	}
	producers, err := loadProducerState(p.Log, p.now().UnixMilli(), p.producerIDExpirationMs, p.logger)
	if err != nil {
		return err
	}
	p.producers.Store(producers)
	return nil
}

// SeedLogFromRemote starts a tiered log, before any partition opens it,
// where the remote tier ends, as RebuildFromRemote does for a follower: a
// broker restoring a cluster from its bucket seeds each log it hosts so,
// and the partition opened over it loads its producer state from the
// snapshot.
func SeedLogFromRemote(l *log.Log, aux RemoteAuxState) error {
	if aux.LogStartOffset > aux.LocalLogStartOffset {
		return fmt.Errorf("partition: remote log start %d above the local start %d", aux.LogStartOffset, aux.LocalLogStartOffset)
	}
	return seedLog(l, aux)
}

// seedLog empties l and starts it at aux.LocalLogStartOffset with the
// remote leader epochs, log start offset and producer snapshot.
func seedLog(l *log.Log, aux RemoteAuxState) error {
	if aux.ProducerSnapshot != nil {
		// Checked before the log is touched, so a bad object changes
		// nothing and the next attempt starts over.
		if _, err := decodeSnapshot(aux.ProducerSnapshot); err != nil {
			return fmt.Errorf("remote producer snapshot: %w", err)
		}
	}
	if err := l.TruncateFullyAndStartAt(aux.LocalLogStartOffset); err != nil {
		return err
	}
	for _, e := range aux.LeaderEpochs {
		if e.StartOffset >= aux.LocalLogStartOffset {
			break
		}
		if err := l.EpochCache().Assign(e.Epoch, e.StartOffset); err != nil {
			return err
		}
	}
	if err := l.EpochCache().Flush(); err != nil {
		return err
	}
	if err := l.ResetLogStartOffsetToRemote(aux.LogStartOffset); err != nil {
		return err
	}
	if aux.ProducerSnapshot != nil {
		if err := l.WriteProducerSnapshot(aux.LocalLogStartOffset, aux.ProducerSnapshot); err != nil {
			return err
		}
	}
	return nil
}
