package quorum

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// Raft settings that are not configuration.
const (
	// maxUncommittedEntriesBytes bounds what a leader accepts ahead of
	// commits; beyond it raft drops proposals (raft's MaxUncommittedEntriesSize).
	maxUncommittedEntriesBytes = 64 << 20
	// maxCommittedBytesPerReady bounds the committed entries applied per Ready.
	maxCommittedBytesPerReady = 16 << 20
	// snapshotRetryInterval spaces attempts after a snapshot failed or came
	// out too large.
	snapshotRetryInterval = 10 * time.Second
)

// runState belongs to the run goroutine (and to Start before it runs).
type runState struct {
	rn *raft.RawNode
	// applied is the index of the last entry applied to the state machine.
	// Invariant: applied <= raft's commit index.
	applied uint64
	// waiters are this node's proposals appended to the log and not yet
	// applied, by proposal id.
	waiters map[uint64]*proposal
	// oldestWaiterTerm is at most the smallest term among waiters.
	oldestWaiterTerm uint64
	// bytesSinceSnapshot counts entry bytes applied since the last snapshot.
	bytesSinceSnapshot int64
	lastSnapshot       time.Time
	// nextSnapshotAttempt delays a snapshot after one failed.
	nextSnapshotAttempt time.Time
	// voters and confState are the voter set and raft configuration as of
	// applied, for snapshots.
	voters    VoterSet
	confState *raftpb.ConfState
	// forceSnapshot asks for a snapshot at the next chance, whatever the
	// intervals (after the kraft.version upgrade).
	forceSnapshot bool
	// peersVersion is the storage voter-set change count the transport's
	// peers were last set from.
	peersVersion uint64
}

// initRun restores the state machine from the latest snapshot and creates
// the raft node.
func (q *Quorum) initRun() error {
	r := &q.run
	r.waiters = make(map[uint64]*proposal)
	r.lastSnapshot = time.Now()
	r.voters, r.confState = q.storage.base, q.storage.base.confState()
	if snap := q.storage.snapshot; !raft.IsEmptySnap(snap) {
		index := snap.GetMetadata().GetIndex()
		_, data, err := decodeSnapshotPayload(snap.GetData())
		if err != nil {
			return err
		}
		if err := q.sm.Restore(data, int64(index)-1); err != nil {
			return fmt.Errorf("quorum: restore state machine from snapshot at offset %d: %w", index-1, err)
		}
		r.applied = index
		q.tail.reset(int64(index))
	}
	rn, err := newRawNode(&raft.Config{
		ID:                        uint64(q.cfg.NodeID),
		ElectionTick:              q.cfg.ElectionTicks,
		HeartbeatTick:             q.cfg.HeartbeatTicks,
		Storage:                   q.storage,
		Applied:                   r.applied,
		MaxSizePerMsg:             maxMessageEntriesBytes,
		MaxCommittedSizePerReady:  maxCommittedBytesPerReady,
		MaxUncommittedEntriesSize: maxUncommittedEntriesBytes,
		MaxInflightMsgs:           maxInflightMessages,
		CheckQuorum:               true,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    raftLogger{q.logger},
	})
	if err != nil {
		return err
	}
	r.rn = rn
	if voters := q.storage.latest.Voters(); len(voters) == 1 && voters[0] == uint64(q.cfg.NodeID) {
		// A quorum of one need not wait out an election timeout.
		if err := rn.Campaign(); err != nil {
			return fmt.Errorf("quorum: campaign: %w", err)
		}
	}
	return nil
}

// newRawNode turns raft's panics on bad storage into an error.
func newRawNode(c *raft.Config) (rn *raft.RawNode, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("quorum: start raft: %v", p)
		}
	}()
	return raft.NewRawNode(c)
}

// runLoop is the run goroutine.
func (q *Quorum) runLoop() {
	ticker := time.NewTicker(time.Duration(q.cfg.TickMs) * time.Millisecond)
	defer ticker.Stop()
	err := q.loop(ticker.C)
	q.shutdown(err)
}

// loop feeds raft its inputs and handles what it produces until Stop or a
// failure. A panic inside raft becomes a failure: the process survives.
func (q *Quorum) loop(tick <-chan time.Time) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("quorum: raft loop panicked: %v", p)
		}
	}()
	for {
		if err := q.handleReadies(); err != nil {
			return err
		}
		select {
		case <-q.stopping:
			return nil
		case <-tick:
			q.run.rn.Tick()
			q.expireWaiters()
		case m := <-q.received:
			q.step(m)
		case p := <-q.proposals:
			q.propose(p)
		case r := <-q.reports:
			q.handleReport(r)
		case reply := <-q.statusRequests:
			reply <- q.status()
		case peers := <-q.peerUpdates:
			q.cfg.Peers = peers
			q.run.peersVersion = 0 // refresh the transport's peers
		}
		// Take what else is waiting, so one Ready (one fsync) covers it.
		for range maxEventsPerReady {
			if !q.pollInput() {
				break
			}
		}
	}
}

// pollInput handles one waiting message, proposal or report; it returns
// false when none was waiting.
func (q *Quorum) pollInput() bool {
	select {
	case m := <-q.received:
		q.step(m)
	case p := <-q.proposals:
		q.propose(p)
	case r := <-q.reports:
		q.handleReport(r)
	default:
		return false
	}
	return true
}

// step hands a received message to raft. Errors are for messages raft does
// not want (stale, from unknown peers): nothing to do.
func (q *Quorum) step(m *raftpb.Message) {
	if err := q.run.rn.Step(m); err != nil {
		q.logger.Debug("quorum message ignored", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
	}
}

// handleReport tells raft what the transport could not deliver.
func (q *Quorum) handleReport(r report) {
	switch {
	case !r.snapshot:
		q.run.rn.ReportUnreachable(r.to)
	case r.failed:
		q.run.rn.ReportSnapshot(r.to, raft.SnapshotFailure)
	default:
		q.run.rn.ReportSnapshot(r.to, raft.SnapshotFinish)
	}
}

// handleReadies handles every Ready raft has, then publishes the leader and
// takes a snapshot if one is due.
func (q *Quorum) handleReadies() error {
	rn := q.run.rn
	for rn.HasReady() {
		rd := rn.Ready()
		dropped, err := q.handleReady(rd)
		if err != nil {
			return err
		}
		rn.Advance(rd)
		reported := map[uint64]bool{}
		for _, m := range dropped {
			if !reported[m.GetTo()] {
				q.handleReport(report{to: m.GetTo()})
				reported[m.GetTo()] = true
			}
			if m.GetType() == raftpb.MsgSnap {
				q.handleReport(report{to: m.GetTo(), snapshot: true, failed: true})
			}
		}
	}
	q.publish(rn.BasicStatus())
	if q.run.peersVersion != q.storage.changes {
		q.run.peersVersion = q.storage.changes
		q.transport.setPeers(q.peerMembers())
	}
	return q.maybeSnapshot()
}

// handleReady persists, then sends, then applies, as raft requires without
// asynchronous storage writes. It returns the messages the transport
// dropped.
func (q *Quorum) handleReady(rd raft.Ready) (dropped []*raftpb.Message, err error) {
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := q.storage.applySnapshot(rd.Snapshot); err != nil {
			return nil, err
		}
		if err := q.restore(rd.Snapshot); err != nil {
			return nil, err
		}
	}
	if err := q.storage.append(rd.Entries); err != nil {
		return nil, err
	}
	if err := q.storage.setHardState(rd.HardState); err != nil {
		return nil, err
	}
	dropped = q.transport.send(rd.Messages)
	for _, e := range rd.CommittedEntries {
		if err := q.apply(e); err != nil {
			return nil, err
		}
	}
	return dropped, nil
}

// restore replaces the state machine with a snapshot from the leader.
func (q *Quorum) restore(snap *raftpb.Snapshot) error {
	index, term := snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm()
	_, data, err := decodeSnapshotPayload(snap.GetData())
	if err != nil {
		return err
	}
	if err := q.sm.Restore(data, int64(index)-1); err != nil {
		return fmt.Errorf("quorum: restore state machine from snapshot at offset %d: %w", index-1, err)
	}
	q.logger.Info("restored state from the leader's snapshot", "end_offset", index, "epoch", term)
	r := &q.run
	r.applied, r.bytesSinceSnapshot, r.lastSnapshot = index, 0, time.Now()
	r.voters, r.confState = q.storage.base, q.storage.base.confState()
	q.tail.reset(int64(index))
	// Proposals from terms up to the snapshot's may be inside it or lost.
	for id, p := range r.waiters {
		if p.term <= term {
			p.finish(-1, fmt.Errorf("%w: state was replaced by a snapshot up to offset %d", ErrCommitUnknown, index-1))
			delete(r.waiters, id)
		}
	}
	return nil
}

// apply applies one committed entry and completes its proposal.
func (q *Quorum) apply(e *raftpb.Entry) error {
	r := &q.run
	index := e.GetIndex()
	if index <= r.applied {
		return nil
	}
	if invariants && index != r.applied+1 {
		panic(fmt.Sprintf("quorum: applying index %d after %d", index, r.applied))
	}
	q.failLostProposals(e.GetTerm())
	offset := int64(index - 1)
	switch {
	case e.GetType() == raftpb.EntryConfChangeV2:
		if err := q.applyConfChange(e); err != nil {
			return err
		}
	case e.GetType() != raftpb.EntryNormal:
		return fmt.Errorf("%w: committed entry at offset %d has type %s", ErrCorrupt, offset, e.GetType())
	case len(e.GetData()) > 0:
		id, values, err := decodeProposal(e.GetData())
		if err != nil {
			return fmt.Errorf("committed entry at offset %d: %w", offset, err)
		}
		if err := q.sm.Apply(offset, values); err != nil {
			return fmt.Errorf("quorum: state machine failed to apply offset %d: %w", offset, err)
		}
		if p := r.waiters[id]; p != nil && p.term == e.GetTerm() {
			p.finish(offset, nil)
			delete(r.waiters, id)
		}
		r.bytesSinceSnapshot += int64(len(e.GetData()))
	}
	r.applied = index
	return q.tail.add(e, time.Now().UnixMilli())
}

// failLostProposals fails the proposals of terms before term: an entry of a
// later term committed, so theirs, not yet applied, never will be (log terms
// never decrease).
func (q *Quorum) failLostProposals(term uint64) {
	r := &q.run
	if len(r.waiters) == 0 || term <= r.oldestWaiterTerm {
		return
	}
	oldest := uint64(math.MaxUint64)
	for id, p := range r.waiters {
		if p.term < term {
			p.finish(-1, fmt.Errorf("%w: leadership moved to epoch %d before the proposal from epoch %d committed", ErrNotLeader, term, p.term))
			delete(r.waiters, id)
			continue
		}
		oldest = min(oldest, p.term)
	}
	r.oldestWaiterTerm = oldest
}

// propose appends a proposal to the leader's log.
func (q *Quorum) propose(p *proposal) {
	if p.ctx.Err() != nil {
		return // the caller gave up before it reached raft
	}
	if p.change != nil {
		q.proposeChange(p)
		return
	}
	r := &q.run
	bs := r.rn.BasicStatus()
	if bs.RaftState != raft.StateLeader {
		p.finish(-1, q.notLeaderError())
		return
	}
	if err := r.rn.Propose(p.data); err != nil {
		p.finish(-1, fmt.Errorf("quorum: proposal dropped (leadership transfer, or too much uncommitted): %w", err))
		return
	}
	p.term = bs.HardState.GetTerm()
	if len(r.waiters) == 0 || p.term < r.oldestWaiterTerm {
		r.oldestWaiterTerm = p.term
	}
	r.waiters[p.id] = p
}

// expireWaiters forgets proposals whose callers gave up.
func (q *Quorum) expireWaiters() {
	for id, p := range q.run.waiters {
		if p.ctx.Err() != nil {
			delete(q.run.waiters, id)
		}
	}
}

// maybeSnapshot takes a snapshot when enough was applied since the last, or
// the last is old, and compacts the log up to it.
func (q *Quorum) maybeSnapshot() error {
	r := &q.run
	if r.applied <= q.storage.snapshot.GetMetadata().GetIndex() {
		return nil
	}
	now := time.Now()
	if now.Before(r.nextSnapshotAttempt) {
		return nil
	}
	timeDue := q.cfg.SnapshotIntervalMs > 0 && now.Sub(r.lastSnapshot) >= time.Duration(q.cfg.SnapshotIntervalMs)*time.Millisecond
	if r.bytesSinceSnapshot < q.cfg.SnapshotIntervalBytes && !timeDue && !r.forceSnapshot {
		return nil
	}
	data, err := q.sm.Snapshot()
	if err == nil && len(data) > q.cfg.MaxSnapshotBytes {
		err = fmt.Errorf("%d bytes, more than the %d allowed", len(data), q.cfg.MaxSnapshotBytes)
	}
	if err != nil {
		q.logger.Warn("cannot take a metadata snapshot; the log keeps growing", "err", err)
		r.nextSnapshotAttempt = now.Add(snapshotRetryInterval)
		return nil
	}
	if err := q.storage.createSnapshot(r.applied, r.voters, data); err != nil {
		return err
	}
	r.forceSnapshot = false
	q.logger.Debug("took a metadata snapshot", "end_offset", r.applied, "bytes", len(data))
	r.bytesSinceSnapshot, r.lastSnapshot = 0, now
	return nil
}

// status builds Status inside the run goroutine.
func (q *Quorum) status() Status {
	bs := q.run.rn.BasicStatus()
	st := Status{
		NodeID:         q.cfg.NodeID,
		LeaderID:       -1,
		Epoch:          int64(bs.HardState.GetTerm()),
		HighWatermark:  int64(bs.HardState.GetCommit()),
		LogStartOffset: int64(q.storage.entries[0].GetIndex()),
		LogEndOffset:   int64(q.storage.lastIndex()),
	}
	if bs.Lead != raft.None {
		st.LeaderID = int32(bs.Lead)
	}
	match := map[uint64]uint64{}
	if bs.RaftState == raft.StateLeader {
		q.run.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
			match[id] = pr.Match
		})
	}
	now := time.Now()
	latest := q.storage.latest
	st.KRaftVersion = latest.KRaftVersion
	for _, m := range latest.Members {
		v := VoterStatus{ID: m.ID, DirectoryID: m.DirectoryID, Endpoints: m.Endpoints, LogEndOffset: -1, LastContact: q.transport.lastContact(uint64(m.ID))}
		if match, ok := match[uint64(m.ID)]; ok {
			v.LogEndOffset = int64(match)
		}
		if m.ID == q.cfg.NodeID {
			v.LogEndOffset, v.LastContact = st.LogEndOffset, now
		}
		if m.Learner {
			st.Observers = append(st.Observers, v)
		} else {
			st.Voters = append(st.Voters, v)
		}
	}
	return st
}

// peerMembers are the nodes the transport talks to: the latest voter set,
// with the configured voters and peers it does not name (raft loop only,
// or Start).
func (q *Quorum) peerMembers() []Member {
	byID := map[int32]Member{}
	for _, m := range q.cfg.Peers {
		byID[m.ID] = m
	}
	for _, m := range q.storage.static.Members {
		byID[m.ID] = m
	}
	for _, m := range q.storage.latest.Members {
		if len(m.Endpoints) > 0 {
			byID[m.ID] = m
		}
	}
	delete(byID, q.cfg.NodeID)
	out := make([]Member, 0, len(byID))
	for _, m := range byID {
		out = append(out, m)
	}
	return out
}

// shutdown ends the run goroutine: it fails what is pending and closes the
// transport and storage.
func (q *Quorum) shutdown(failure error) {
	if failure != nil {
		q.logger.Error("metadata quorum stopped after a failure", "err", failure)
	}
	q.mu.Lock()
	q.mu.failure = failure
	q.mu.Unlock()
	stopped := q.stoppedError()
	for _, p := range q.run.waiters {
		p.finish(-1, stopped)
	}
	q.run.waiters = nil
	closeErr := errors.Join(q.transport.close(), q.storage.close())
	q.mu.Lock()
	q.mu.closeErr = closeErr
	q.mu.leaderID, q.mu.isLeader = -1, false
	close(q.mu.changed)
	q.mu.changed = make(chan struct{})
	q.mu.Unlock()
	close(q.done)
}
