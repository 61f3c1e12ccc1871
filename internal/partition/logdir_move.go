package partition

// Moving a hosted replica to another log dir of this broker
// (AlterReplicaLogDirs), as Kafka's ReplicaAlterLogDirsThread does:
//
//  1. AlterLogDir creates an empty future log in the destination dir,
//     starting at the current log's start offset (package log, future.go).
//  2. StepMoves, called by a driver goroutine, copies batches from the
//     current log to the future log, byte for byte with their offsets and
//     leader epochs, at most replica.fetch.max.bytes per partition per
//     step, with the aborted-transaction index entries of the copied
//     markers. A current log truncated meanwhile (a follower matching a new
//     leader) truncates the future log where their epochs diverge.
//  3. Once the future log has caught up, the swap holds off appends to the
//     partition, copies the last batches, and has the log manager rename
//     the future dir into place and schedule the old one for deletion. The
//     partition is then opened again over the moved log, taking over the
//     producer state from memory (handoff.go), under the same role, epoch
//     and ISR. A request that held the old Partition gets
//     NOT_LEADER_OR_FOLLOWER and retries, as on a role change.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
)

// ErrReplicaNotAvailable: this broker hosts no replica of the partition
// (REPLICA_NOT_AVAILABLE upstream, which AlterReplicaLogDirs keeps for
// compatibility where other APIs say NOT_LEADER_OR_FOLLOWER).
var ErrReplicaNotAvailable = errors.New("partition: no replica hosted here")

// LogDirMove is a replica move in progress, for DescribeLogDirs.
type LogDirMove struct {
	Topic     string
	Partition int32
	// FutureDir is the log dir the replica is moving to.
	FutureDir string
	// FutureSize is the bytes copied so far.
	FutureSize int64
	// OffsetLag is how far the future log's end is behind the current's.
	OffsetLag int64
}

// hostedLocked returns tp's partition, led or followed here, or nil.
func (m *Manager) hostedLocked(tp log.TopicPartition) *Partition {
	if p := m.mu.partitions[tp]; p != nil {
		return p
	}
	return m.mu.followers[tp]
}

// AlterLogDir starts moving the replica of topic-index hosted here to the
// log dir path (an absolute path, as DescribeLogDirs lists them). A move to
// the dir the replica is in cancels any move in progress. Errors:
// log.ErrLogDirNotFound, log.ErrLogDirOffline, ErrReplicaNotAvailable.
func (m *Manager) AlterLogDir(topic string, index int32, path string) error {
	dir, err := m.logs.ResolveDir(path)
	if err != nil {
		return err
	}
	if !m.logs.DirOnline(dir) {
		return fmt.Errorf("%w: %s", log.ErrLogDirOffline, path)
	}
	tp := log.TopicPartition{Topic: topic, Partition: index}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.hostedLocked(tp)
	if p == nil || m.reserved[topic] {
		// Kafka remembers the dir for a replica created later here; so does
		// the log manager, once, for this partition's next log.
		if !m.reserved[topic] {
			m.logs.SetPreferredDir(tp, dir)
		}
		return fmt.Errorf("%w: %s", ErrReplicaNotAvailable, tp)
	}
	if m.logs.LogDir(tp) == dir {
		m.logs.AbandonFuture(tp)
		return nil
	}
	if _, err := m.logs.CreateFuture(tp, p.TopicID, dir, p.Log.LogStartOffset()); err != nil {
		return err
	}
	return nil
}

// LogDirMoves lists the moves in progress.
func (m *Manager) LogDirMoves() []LogDirMove {
	var out []LogDirMove
	for tp, future := range m.logs.Futures() {
		_, dir := m.logs.Future(tp)
		lag := int64(0)
		if current := m.logs.Get(tp); current != nil {
			lag = max(current.LogEndOffset()-future.LogEndOffset(), 0)
		}
		out = append(out, LogDirMove{Topic: tp.Topic, Partition: tp.Partition, FutureDir: dir, FutureSize: future.Size(), OffsetLag: lag})
	}
	return out
}

// StepMoves copies up to maxBytes into each future log from its current
// log and swaps those that caught up. pending reports moves still copying;
// swapped reports followers reopened over a moved log, whose replica
// fetchers must be given the new Partition.
func (m *Manager) StepMoves(maxBytes int32) (pending, swapped bool) {
	maxBytes = max(maxBytes, 1)
	for tp, future := range m.logs.Futures() {
		m.mu.RLock()
		p := m.hostedLocked(tp)
		m.mu.RUnlock()
		if p == nil {
			continue // hosted again (or the future deleted) by a later Reconcile
		}
		caughtUp, err := copyToFuture(p.Log, future, maxBytes)
		if errors.Is(err, log.ErrClosed) {
			continue // the move was cancelled or the partition deleted meanwhile
		}
		if err != nil {
			m.logger.Error("copying to the future log; abandoning the move", "partition", tp, "err", err)
			m.logs.AbandonFutureLog(tp, future)
			continue
		}
		if !caughtUp {
			pending = true
			continue
		}
		follower, err := m.swapFuture(tp, future, maxBytes)
		if err != nil {
			m.logger.Error("replacing the log with its future log", "partition", tp, "err", err)
			pending = true
			continue
		}
		swapped = swapped || follower
	}
	return pending, swapped
}

// swapFuture finishes the move of tp (see the file comment); follower
// reports a follower partition reopened.
func (m *Manager) swapFuture(tp log.TopicPartition, future *log.Log, maxBytes int32) (follower bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.hostedLocked(tp)
	if f, _ := m.logs.Future(tp); p == nil || f != future {
		return false, nil // reconciled or abandoned meanwhile
	}
	follower = m.mu.followers[tp] == p
	from, err := p.closeMoved(func() (*log.Log, error) {
		for {
			caughtUp, err := copyToFuture(p.Log, future, maxBytes)
			if err != nil {
				return nil, err
			}
			if caughtUp {
				break
			}
		}
		if err := copyEpochs(p.Log, future); err != nil {
			return nil, err
		}
		return m.logs.ReplaceCurrentWithFuture(tp)
	})
	if err != nil {
		return false, err
	}
	delete(m.mu.partitions, tp)
	delete(m.mu.followers, tp)
	p.Notify()
	opts := Options{ProducerIDExpirationMs: m.producerIDExpirationMs.Load(), Logger: m.logger}
	if !follower {
		opts.ISRChanges = &m.isrChanges
	}
	moved, err := open(p.Topic, p.Index, p.TopicID, from.log, p.LeaderEpoch(), opts, from)
	if err != nil {
		// The next Reconcile opens it again over the moved log.
		return false, fmt.Errorf("reopening %s over the moved log: %w", tp, err)
	}
	moved.config.Store(p.Config())
	moved.adoptReplicaState(p)
	if follower {
		m.mu.followers[tp] = moved
	} else {
		m.mu.partitions[tp] = moved
	}
	if err := moved.WriteSnapshot(); err != nil {
		m.logger.Warn("producer snapshot after a log dir move", "partition", tp, "err", err)
	}
	m.logger.Info("replica moved to another log dir", "partition", tp, "dir", m.logs.LogDir(tp), "log_end_offset", moved.Log.LogEndOffset())
	return follower, nil
}

// closeMoved stops the partition's use of its log once swap, run with
// appends held off, has replaced the log; it returns the producer state for
// the Partition opened over the new log. A failed swap leaves the
// partition serving.
func (p *Partition) closeMoved(swap func() (*log.Log, error)) (*handoff, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return nil, fmt.Errorf("partition %s: %w", p, errClosedPartition)
	}
	l, err := swap()
	if err != nil {
		return nil, err
	}
	p.retire()
	return &handoff{topicID: p.TopicID, log: l, producers: p.state().clone()}, nil
}

// adoptReplicaState takes over the replication state of the Partition old
// that served the same replica before a log dir move: the ISR, the
// followers' fetch positions and the leader epoch's start offset. An ISR
// change old had in flight is dropped; its answer goes to old, and the
// metadata image brings the outcome here (UpdateReplicaState).
func (p *Partition) adoptReplicaState(old *Partition) {
	old.replicaMu.Lock()
	rs := old.replica
	epoch := old.replicaEpoch
	followers := make(map[int32]*followerState, len(rs.followers))
	for id, f := range rs.followers {
		stored := *f
		followers[id] = &stored
	}
	old.replicaMu.Unlock()
	rs.followers = followers
	rs.replicas, rs.isr, rs.pendingISR = slices.Clone(rs.replicas), slices.Clone(rs.isr), nil
	p.replicaMu.Lock()
	p.replica, p.replicaEpoch = rs, epoch
	p.replicaMu.Unlock()
}

// copyToFuture copies the next batches (at most maxBytes, but at least one)
// from src to dst and reports whether dst has caught up with src's end.
// The caller is the only writer of dst.
func copyToFuture(src, dst *log.Log, maxBytes int32) (caughtUp bool, err error) {
	if err := matchFuture(src, dst); err != nil {
		return false, err
	}
	from, end := dst.LogEndOffset(), src.LogEndOffset()
	if from >= end {
		return true, nil
	}
	data, _, err := src.ReadBytes(from, maxBytes, end, true)
	if errors.Is(err, log.ErrOffsetOutOfRange) || errors.Is(err, log.ErrClosed) {
		return false, nil // retention or a truncation moved; next step
	}
	if err != nil {
		return false, err
	}
	data, first, last := wholeBatches(data)
	if len(data) == 0 {
		return false, nil
	}
	if first < from {
		if from != dst.LogStartOffset() || dst.Size() > 0 {
			return false, fmt.Errorf("batch at %d straddles the future log's end %d", first, from)
		}
		// The current log starts inside this batch (DeleteRecords): so
		// does the future log, once the swap gives it that start offset.
		if err := dst.TruncateFullyAndStartAt(first); err != nil {
			return false, err
		}
	}
	if err := dst.AppendAsFollower(data); err != nil {
		return false, err
	}
	aborted, err := src.CollectAbortedTxns(first, last+1)
	if err != nil {
		return false, err
	}
	for _, e := range aborted {
		if e.LastOffset < first || e.LastOffset > last {
			continue
		}
		if ok, err := dst.HasAbortedTxn(e.ProducerID, e.LastOffset); err != nil || ok {
			if err != nil {
				return false, err
			}
			continue
		}
		if err := dst.AppendAbortedTxn(e); err != nil {
			return false, err
		}
	}
	return dst.LogEndOffset() >= src.LogEndOffset(), nil
}

// matchFuture cuts dst back to what it shares with src: a follower's
// current log may have been truncated to match a new leader since the
// batches were copied. Their leader epochs tell where they diverge, as
// OffsetsForLeaderEpoch tells a follower.
func matchFuture(src, dst *log.Log) error {
	cut := dst.LogEndOffset()
	if epoch, ok := dst.LatestEpoch(); ok {
		if srcEpoch, end := src.EndOffsetForEpoch(epoch); srcEpoch >= 0 && end >= 0 && end < cut {
			cut = end
		} else if srcEpoch < 0 {
			cut = min(cut, src.LogStartOffset())
		}
	}
	cut = min(cut, src.LogEndOffset())
	if start := src.LogStartOffset(); cut < start || dst.LogStartOffset() > src.LogEndOffset() {
		// Nothing in common: start over at the current log's start.
		if err := dst.TruncateFullyAndStartAt(start); err != nil {
			return err
		}
		return dst.TruncateAbortedTxns(start)
	}
	if cut >= dst.LogEndOffset() {
		return nil
	}
	if err := dst.TruncateTo(cut); err != nil {
		return err
	}
	return dst.TruncateAbortedTxns(dst.LogEndOffset())
}

// copyEpochs gives dst the leader epochs of src that start at or past its
// log start and that no copied batch carried (a leader that wrote nothing
// in its epoch).
func copyEpochs(src, dst *log.Log) error {
	start := dst.LogStartOffset()
	for _, e := range src.EpochCache().Entries() {
		if e.StartOffset < start {
			continue
		}
		if latest, ok := dst.LatestEpoch(); ok && e.Epoch <= latest {
			continue
		}
		if err := dst.EpochCache().Assign(e.Epoch, e.StartOffset); err != nil {
			return err
		}
	}
	return nil
}

// wholeBatches trims data to its whole batches and returns the first
// batch's base offset and the last batch's last offset.
func wholeBatches(data []byte) (whole []byte, first, last int64) {
	n := 0
	for rest := data; len(rest) > 0; {
		h, err := record.ParseHeader(rest)
		if err != nil || h.Size() > len(rest) {
			break
		}
		if n == 0 {
			first = h.BaseOffset
		}
		last = h.LastOffset()
		n += h.Size()
		rest = rest[h.Size():]
	}
	return data[:n], first, last
}

// LogDirOnline reports whether the configured log dir path (absolute, as
// DescribeLogDirs lists it) can take logs.
func (m *Manager) LogDirOnline(path string) bool {
	dir, err := m.logs.ResolveDir(path)
	return err == nil && m.logs.DirOnline(dir)
}

// LogDirReplica is one replica's current log, for DescribeLogDirs.
type LogDirReplica struct {
	Topic     string
	Partition int32
	// Dir is the log dir holding the log.
	Dir  string
	Size int64
}

// LogDirReplicas lists the current logs of every replica on this broker,
// led or followed (the metadata log, which the quorum keeps, left out).
func (m *Manager) LogDirReplicas() []LogDirReplica {
	var out []LogDirReplica
	for tp, l := range m.logs.All() {
		if m.reserved[tp.Topic] {
			continue
		}
		out = append(out, LogDirReplica{Topic: tp.Topic, Partition: tp.Partition, Dir: m.logs.LogDir(tp), Size: l.Size()})
	}
	return out
}
