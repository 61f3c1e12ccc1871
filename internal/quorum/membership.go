package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// Dynamic membership (KIP-853) on etcd raft's configuration changes, one
// member at a time as Kafka changes voters:
//
//	AddVoter     1. the new node joins as a raft learner: the leader
//	                replicates to it (a snapshot first) but it does not vote;
//	                (taken after the change, so it names the learner);
//	             2. once its log matches the leader's commit index it is
//	                promoted to voter;
//	RemoveVoter  the voter (or a learner left by a failed AddVoter) leaves;
//	             a leader that removes itself steps down once that commits;
//	UpdateVoter  a member's endpoints change;
//	SetKRaftVersion  kraft.version 0 -> 1: the static voters, with their
//	             endpoints, are written to the log as the first voter set.
//
// Each change is one EntryConfChangeV2 carrying the whole resulting voter
// set (voters.go). Only one change is in flight at a time: a change is
// refused while the leader has not yet applied an entry of its own epoch,
// or while the latest change in its log is not applied.

// Errors of the membership operations, each one of Kafka's error codes.
var (
	// ErrChangePending: a voter change is not committed yet, or the leader
	// has not committed in its epoch (Kafka's REQUEST_TIMED_OUT).
	ErrChangePending = errors.New("quorum: a voter change is pending")
	// ErrUnsupportedVersion: kraft.version is 0, voters are static
	// (UNSUPPORTED_VERSION).
	ErrUnsupportedVersion = errors.New("quorum: kraft.version 0 does not support voter changes")
	// ErrDuplicateVoter: the node is a voter already (DUPLICATE_VOTER).
	ErrDuplicateVoter = errors.New("quorum: already a voter")
	// ErrVoterNotFound: no such voter, or its directory id differs
	// (VOTER_NOT_FOUND).
	ErrVoterNotFound = errors.New("quorum: voter not found")
	// ErrNotCaughtUp: the new voter did not catch up with the leader in
	// time (REQUEST_TIMED_OUT).
	ErrNotCaughtUp = errors.New("quorum: the new voter has not caught up")
	// ErrInvalidChange: the change cannot be made (INVALID_REQUEST), such as
	// removing the last voter or adding one without an endpoint.
	ErrInvalidChange = errors.New("quorum: invalid voter change")
)

// changeKind is one kind of membership change.
type changeKind int

const (
	changeAddLearner changeKind = iota + 1
	changePromote
	changeRemove
	changeUpdate
	changeKRaftVersion
)

// memberChange is a membership change waiting for the raft loop.
type memberChange struct {
	kind         changeKind
	member       Member
	kraftVersion int16
}

// catchUpPollInterval spaces the checks of a learner's progress.
const catchUpPollInterval = 20 * time.Millisecond

// AddVoter adds m as a voter: as a learner first, promoted once caught up.
// A learner left by an earlier attempt is promoted. ctx bounds the whole
// operation (Kafka's REQUEST_TIMED_OUT when it ends).
func (q *Quorum) AddVoter(ctx context.Context, m Member) error {
	if m.ID <= 0 || len(m.Endpoints) == 0 {
		return fmt.Errorf("%w: voter %d needs an id and an endpoint", ErrInvalidChange, m.ID)
	}
	st := q.Status()
	if _, learner := findStatus(st.Observers, m.ID); !learner {
		m.Learner = true
		if _, err := q.change(ctx, memberChange{kind: changeAddLearner, member: m}); err != nil {
			return err
		}
	}
	for {
		st := q.Status()
		if st.LeaderID != q.cfg.NodeID {
			return q.notLeaderError()
		}
		if o, ok := findStatus(st.Observers, m.ID); ok && o.LogEndOffset >= st.HighWatermark {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNotCaughtUp, ctx.Err())
		case <-q.done:
			return q.stoppedError()
		case <-time.After(catchUpPollInterval):
		}
	}
	m.Learner = false
	_, err := q.change(ctx, memberChange{kind: changePromote, member: m})
	return err
}

// RemoveVoter removes voter (or learner) id, whose directory id must be
// directoryID (zero for the voters of controller.quorum.voters).
func (q *Quorum) RemoveVoter(ctx context.Context, id int32, directoryID [16]byte) error {
	_, err := q.change(ctx, memberChange{kind: changeRemove, member: Member{ID: id, DirectoryID: directoryID}})
	return err
}

// UpdateVoter replaces the endpoints of voter m.ID, whose directory id must
// be m.DirectoryID.
func (q *Quorum) UpdateVoter(ctx context.Context, m Member) error {
	if len(m.Endpoints) == 0 {
		return fmt.Errorf("%w: voter %d needs an endpoint", ErrInvalidChange, m.ID)
	}
	_, err := q.change(ctx, memberChange{kind: changeUpdate, member: m})
	return err
}

// SetKRaftVersion finalizes kraft.version (only upgrades: Kafka cannot
// downgrade it). At the upgrade to 1 the voter set with its endpoints is
// written to the log; from then on the log, not controller.quorum.voters,
// holds the voters.
func (q *Quorum) SetKRaftVersion(ctx context.Context, version int16) error {
	if version < 0 || version > maxKRaftVersion {
		return fmt.Errorf("%w: kraft.version %d is not supported (0-%d)", ErrInvalidChange, version, maxKRaftVersion)
	}
	_, err := q.change(ctx, memberChange{kind: changeKRaftVersion, kraftVersion: version})
	return err
}

// KRaftVersion is the kraft.version of the latest voter set.
func (q *Quorum) KRaftVersion() int16 { return q.Status().KRaftVersion }

// change proposes a membership change and waits for it to be applied.
func (q *Quorum) change(ctx context.Context, ch memberChange) (int64, error) {
	return q.submit(ctx, func(uint64) *proposal { return &proposal{change: &ch} })
}

func findStatus(list []VoterStatus, id int32) (VoterStatus, bool) {
	for _, v := range list {
		if v.ID == id {
			return v, true
		}
	}
	return VoterStatus{}, false
}

// proposeChange validates a membership change against the leader's state
// and appends it (raft loop only).
func (q *Quorum) proposeChange(p *proposal) {
	r := &q.run
	bs := r.rn.BasicStatus()
	if bs.RaftState != raft.StateLeader {
		p.finish(-1, q.notLeaderError())
		return
	}
	term := bs.HardState.GetTerm()
	if appliedTerm, err := q.storage.Term(r.applied); err != nil || appliedTerm != term {
		p.finish(-1, fmt.Errorf("%w: the leader has not yet committed an entry in epoch %d", ErrChangePending, term))
		return
	}
	if li := q.storage.latestIndex; li > r.applied {
		p.finish(-1, fmt.Errorf("%w: the voter change at offset %d is not committed", ErrChangePending, li-1))
		return
	}
	latest := q.storage.latest
	ch := p.change
	if ch.kind != changeKRaftVersion && latest.KRaftVersion < 1 {
		p.finish(-1, fmt.Errorf("%w: the kraft.version feature is %d", ErrUnsupportedVersion, latest.KRaftVersion))
		return
	}
	next, typ, target, err := q.nextVoterSet(latest, ch, bs)
	if err != nil {
		p.finish(-1, err)
		return
	}
	if typ == noChange {
		p.finish(int64(q.storage.latestIndex)-1, nil)
		return
	}
	_, cc, err := encodeConfChange(p.id, typ, target, next)
	if err == nil {
		err = r.rn.ProposeConfChange(cc)
	}
	if err != nil {
		p.finish(-1, fmt.Errorf("quorum: voter change dropped: %w", err))
		return
	}
	p.term = term
	if len(r.waiters) == 0 || p.term < r.oldestWaiterTerm {
		r.oldestWaiterTerm = p.term
	}
	r.waiters[p.id] = p
}

// noChange is nextVoterSet's answer for a change already made.
const noChange raftpb.ConfChangeType = -1

// nextVoterSet returns the voter set ch makes of latest, the raft change
// that makes it and the member changed; typ noChange when nothing changes.
func (q *Quorum) nextVoterSet(latest VoterSet, ch *memberChange, bs raft.BasicStatus) (next VoterSet, typ raftpb.ConfChangeType, target int32, err error) {
	m := ch.member
	current, present := latest.Member(m.ID)
	// Kafka matches a voter by id and directory id; the voters of
	// controller.quorum.voters have none (zero).
	dirMatches := present && current.DirectoryID == m.DirectoryID
	switch ch.kind {
	case changeAddLearner:
		if q.storage.base.KRaftVersion < 1 {
			// A new node must start from a snapshot that holds the voter
			// set (applyConfChange): wait for the one the upgrade takes.
			return next, 0, 0, fmt.Errorf("%w: waiting for a snapshot after the kraft.version upgrade", ErrChangePending)
		}
		if present && !current.Learner {
			return next, 0, 0, fmt.Errorf("%w: node %d is already a voter of %v", ErrDuplicateVoter, m.ID, latest.Voters())
		}
		m.Learner = true
		return latest.with(m), raftpb.ConfChangeAddLearnerNode, m.ID, nil
	case changePromote:
		switch {
		case !present:
			return next, 0, 0, fmt.Errorf("%w: node %d is no longer being added", ErrVoterNotFound, m.ID)
		case !current.Learner:
			return next, 0, 0, fmt.Errorf("%w: node %d is already a voter of %v", ErrDuplicateVoter, m.ID, latest.Voters())
		}
		var match uint64
		q.run.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
			if id == uint64(m.ID) {
				match = pr.Match
			}
		})
		if match < bs.HardState.GetCommit() {
			return next, 0, 0, fmt.Errorf("%w: node %d has offset %d, the high watermark is %d", ErrNotCaughtUp, m.ID, match, bs.HardState.GetCommit())
		}
		m.Learner = false
		return latest.with(m), raftpb.ConfChangeAddNode, m.ID, nil
	case changeRemove:
		if !present || !dirMatches {
			return next, 0, 0, fmt.Errorf("%w: node %d with directory id %x is not in the voter set %v", ErrVoterNotFound, m.ID, m.DirectoryID, latest.Voters())
		}
		next = latest.without(m.ID)
		if len(next.Voters()) == 0 {
			return next, 0, 0, fmt.Errorf("%w: node %d is the last voter", ErrInvalidChange, m.ID)
		}
		return next, raftpb.ConfChangeRemoveNode, m.ID, nil
	case changeUpdate:
		if !present || current.Learner || !dirMatches {
			return next, 0, 0, fmt.Errorf("%w: node %d with directory id %x is not a voter of %v", ErrVoterNotFound, m.ID, m.DirectoryID, latest.Voters())
		}
		return latest.with(m), raftpb.ConfChangeUpdateNode, m.ID, nil
	case changeKRaftVersion:
		if ch.kraftVersion <= latest.KRaftVersion {
			if ch.kraftVersion < latest.KRaftVersion {
				return next, 0, 0, fmt.Errorf("%w: kraft.version cannot be downgraded from %d to %d", ErrInvalidChange, latest.KRaftVersion, ch.kraftVersion)
			}
			return next, noChange, 0, nil
		}
		for _, v := range latest.Members {
			if len(v.Endpoints) == 0 {
				return next, 0, 0, fmt.Errorf("%w: voter %d has no known endpoint", ErrInvalidChange, v.ID)
			}
		}
		next = latest.clone()
		next.KRaftVersion = ch.kraftVersion
		return next, raftpb.ConfChangeUpdateNode, q.cfg.NodeID, nil
	}
	return next, 0, 0, fmt.Errorf("%w: unknown change", ErrInvalidChange)
}

// applyConfChange applies a committed configuration change entry.
func (q *Quorum) applyConfChange(e *raftpb.Entry) error {
	r := &q.run
	offset := int64(e.GetIndex() - 1)
	cc, id, set, err := decodeConfChangeEntry(e.GetData())
	if err != nil {
		return fmt.Errorf("committed entry at offset %d: %w", offset, err)
	}
	r.confState = r.rn.ApplyConfChange(cc)
	if r.voters.KRaftVersion == 0 && set.KRaftVersion > 0 {
		// Nodes that join later must start from a snapshot holding this
		// voter set, not replay the log below it (whose voters were
		// controller.quorum.voters): snapshot now.
		r.forceSnapshot = true
	}
	if cc.GetChanges()[0].GetType() == raftpb.ConfChangeAddLearnerNode {
		// etcd raft installs only a snapshot whose configuration names the
		// node: the learner's first snapshot must be taken after this.
		r.forceSnapshot = true
	}
	r.voters = set.fillEndpoints(q.storage.static)
	q.logger.Info("voter set changed", "offset", offset, "voters", r.confState.GetVoters(), "learners", r.confState.GetLearners(), "kraft_version", set.KRaftVersion)
	if p := r.waiters[id]; p != nil && p.term == e.GetTerm() {
		p.finish(offset, nil)
		delete(r.waiters, id)
	}
	return nil
}
