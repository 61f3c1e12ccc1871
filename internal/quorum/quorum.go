package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// StateMachine is what the quorum replicates: the controller's metadata
// image. All three methods are called from the quorum's goroutine, never at
// once. Propose callers wait for that goroutine to apply their entry, so
// these methods must never wait for a lock a Propose caller may hold.
type StateMachine interface {
	// Apply is called for committed entries in order, exactly once per entry
	// per process lifetime: after a restart the entries after the last
	// snapshot are applied again (after Restore). offset is the entry's
	// offset in the metadata log; values are what one Propose gave, and the
	// state machine may keep them. An error stops the quorum (see Err).
	Apply(offset int64, values [][]byte) error
	// Snapshot returns the state after the last applied entry.
	Snapshot() ([]byte, error)
	// Restore replaces the state with a snapshot holding every entry up to
	// and including offset (the last offset applied to make it). It is
	// called at Start when a snapshot exists and whenever the leader sends
	// one. An error stops the quorum.
	Restore(snapshot []byte, offset int64) error
}

// Status describes the quorum for DescribeQuorum, as this node sees it.
type Status struct {
	NodeID int32
	// LeaderID is the leader, -1 when unknown; Epoch is the current raft term.
	LeaderID int32
	Epoch    int64
	// HighWatermark is the end offset of the committed entries.
	HighWatermark int64
	// LogStartOffset is the end offset of the latest snapshot; LogEndOffset
	// the end of this node's log.
	LogStartOffset, LogEndOffset int64
	// Voters is every voter of the latest voter set, by id; Observers the
	// learners being caught up to become voters.
	Voters, Observers []VoterStatus
	// KRaftVersion is the latest voter set's kraft.version.
	KRaftVersion int16
}

// VoterStatus is one voter's replication state.
type VoterStatus struct {
	ID          int32
	DirectoryID [16]byte
	Endpoints   []Endpoint
	// LogEndOffset is how far the voter's log matches the leader's; -1 when
	// unknown (only the leader tracks the other voters).
	LogEndOffset int64
	// LastContact is when this node last received a message from the voter
	// (now for itself); zero for never.
	LastContact time.Time
}

// Quorum is one controller's member of the Raft quorum. Its methods are safe
// for concurrent use.
type Quorum struct {
	cfg       Config
	logger    *slog.Logger
	sm        StateMachine
	storage   *storage
	transport *transport
	// tail is the latest applied entries, for observers (tail.go).
	tail *committedTail
	addr net.Addr

	proposals      chan *proposal
	received       chan *raftpb.Message
	reports        chan report
	statusRequests chan chan Status
	// peerUpdates carries new Config.Peers (SetPeers).
	peerUpdates chan []Member
	stopping    chan struct{}
	stopOnce    sync.Once
	done        chan struct{} // closed when the run goroutine has exited
	proposalIDs atomic.Uint64

	// run is the state owned by the run goroutine.
	run runState

	mu struct {
		sync.Mutex
		leaderID int32
		term     uint64
		isLeader bool
		// changed is closed and replaced whenever leaderID or term changes.
		changed chan struct{}
		// failure is why the quorum stopped by itself; nil after Stop.
		failure error
		// closeErr is what closing the transport and storage returned.
		closeErr error
	}
}

// Start opens the quorum's storage under cfg.Dir, restores sm from the latest
// snapshot, starts listening and joins the quorum. Committed entries after the
// snapshot are applied again in the background, in order, before any new one.
func Start(cfg Config, sm StateMachine) (q *Quorum, err error) {
	if cfg.Listener != nil {
		// Start owns the listener, also when it fails.
		defer func() {
			if err != nil {
				cfg.Listener.Close()
			}
		}()
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := openStorage(cfg)
	if err != nil {
		return nil, err
	}
	q = &Quorum{
		cfg: cfg, logger: cfg.Logger.With("node", cfg.NodeID), sm: sm, storage: st,
		proposals:      make(chan *proposal, maxPendingProposals),
		received:       make(chan *raftpb.Message, maxReceiveQueueMessages),
		reports:        make(chan report, maxReceiveQueueMessages),
		statusRequests: make(chan chan Status),
		peerUpdates:    make(chan []Member, 1),
		stopping:       make(chan struct{}),
		done:           make(chan struct{}),
		tail:           newCommittedTail(int(min(cfg.SnapshotIntervalBytes, math.MaxInt32))),
	}
	q.mu.leaderID = -1
	q.mu.changed = make(chan struct{})
	if err := q.initRun(); err != nil {
		return nil, errors.Join(err, st.close())
	}
	listener := cfg.Listener
	if listener == nil {
		if listener, err = net.Listen("tcp", cfg.ListenAddr); err != nil {
			return nil, errors.Join(fmt.Errorf("quorum: listen on %s: %w", cfg.ListenAddr, err), st.close())
		}
	}
	q.addr = listener.Addr()
	q.transport = newTransport(cfg, listener, q.deliver, q.reports)
	q.transport.setPeers(q.peerMembers())
	q.run.peersVersion = st.changes
	go q.runLoop()
	return q, nil
}

// Addr is the address the quorum listens on.
func (q *Quorum) Addr() net.Addr { return q.addr }

// Propose replicates values as one entry and returns its offset once it is
// committed and applied here. Only the leader accepts proposals: elsewhere it
// returns ErrNotLeader (see Leader). A proposal still pending when ctx ends
// may yet commit.
func (q *Quorum) Propose(ctx context.Context, values [][]byte) (firstOffset int64, err error) {
	if len(values) == 0 {
		return -1, errors.New("quorum: nothing to propose")
	}
	if n := proposalBytes(values); n > q.cfg.MaxProposalBytes {
		return -1, fmt.Errorf("%w: %d bytes, at most %d", ErrProposalTooLarge, n, q.cfg.MaxProposalBytes)
	}
	return q.submit(ctx, func(id uint64) *proposal {
		return &proposal{data: encodeProposal(id, values)}
	})
}

// submit hands the proposal build makes, given its id, to the driver and
// waits until it is applied here; only the leader takes proposals. Propose
// and the membership changes (membership.go) share it.
func (q *Quorum) submit(ctx context.Context, build func(id uint64) *proposal) (int64, error) {
	if !q.isLeader() {
		select {
		case <-q.done:
			return -1, q.stoppedError()
		default:
			return -1, q.notLeaderError()
		}
	}
	id := q.proposalIDs.Add(1)
	p := build(id)
	p.ctx, p.id, p.result = ctx, id, make(chan proposalResult, 1)
	select {
	case q.proposals <- p:
	case <-ctx.Done():
		return -1, ctx.Err()
	case <-q.done:
		return -1, q.stoppedError()
	}
	select {
	case r := <-p.result:
		return r.offset, r.err
	case <-ctx.Done():
		return -1, ctx.Err()
	case <-q.done:
		select {
		case r := <-p.result:
			return r.offset, r.err
		default:
			return -1, q.stoppedError()
		}
	}
}

// Leader returns the leader's id (-1 when unknown) and the current epoch
// (raft term).
func (q *Quorum) Leader() (id int32, epoch int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.leaderID, int64(q.mu.term)
}

func (q *Quorum) isLeader() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.isLeader
}

// WaitForLeader returns once a leader is known.
func (q *Quorum) WaitForLeader(ctx context.Context) error {
	for {
		q.mu.Lock()
		id, changed := q.mu.leaderID, q.mu.changed
		q.mu.Unlock()
		if id >= 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-q.done:
			return q.stoppedError()
		}
	}
}

// Status describes the quorum as this node sees it; only the leader knows
// the other voters' log end offsets.
func (q *Quorum) Status() Status {
	reply := make(chan Status, 1)
	select {
	case q.statusRequests <- reply:
		return <-reply
	case <-q.done:
		id, epoch := q.Leader()
		return Status{NodeID: q.cfg.NodeID, LeaderID: id, Epoch: epoch, HighWatermark: -1, LogStartOffset: -1, LogEndOffset: -1}
	}
}

// SetPeers replaces Config.Peers: an observer that learns the voters anew
// (from controller.quorum.bootstrap.servers) while it waits to be added.
// The log's voter set still wins for the members it names.
func (q *Quorum) SetPeers(peers []Member) {
	select {
	case <-q.peerUpdates: // drop an update not yet taken
	default:
	}
	select {
	case q.peerUpdates <- peers:
	default:
	}
}

// Err is why the quorum stopped by itself (a failed disk, a failing state
// machine), or nil.
func (q *Quorum) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.failure
}

// Done is closed when the quorum has stopped, by Stop or by itself.
func (q *Quorum) Done() <-chan struct{} { return q.done }

// Stop leaves the quorum, fails pending proposals with ErrStopped, and closes
// the listener, connections and storage. It returns why the quorum had
// stopped by itself, if it had, and any error closing.
func (q *Quorum) Stop() error {
	q.stopOnce.Do(func() { close(q.stopping) })
	<-q.done
	q.mu.Lock()
	defer q.mu.Unlock()
	return errors.Join(q.mu.failure, q.mu.closeErr)
}

// deliver hands a received message to the raft loop, dropping it when the
// loop is behind (raft retries).
func (q *Quorum) deliver(m *raftpb.Message) bool {
	select {
	case q.received <- m:
		return true
	default:
		return false
	}
}

func (q *Quorum) notLeaderError() error {
	id, epoch := q.Leader()
	if id < 0 {
		return fmt.Errorf("%w: no leader known (epoch %d)", ErrNotLeader, epoch)
	}
	return fmt.Errorf("%w: the leader is node %d (epoch %d)", ErrNotLeader, id, epoch)
}

func (q *Quorum) stoppedError() error {
	if err := q.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return ErrStopped
}

// publish records the leader and term raft reports, for Leader and
// WaitForLeader.
func (q *Quorum) publish(bs raft.BasicStatus) {
	leaderID := int32(-1)
	if bs.Lead != raft.None {
		leaderID = int32(bs.Lead)
	}
	term, isLeader := bs.HardState.GetTerm(), bs.RaftState == raft.StateLeader
	q.mu.Lock()
	if leaderID == q.mu.leaderID && term == q.mu.term && isLeader == q.mu.isLeader {
		q.mu.Unlock()
		return
	}
	leaderChanged := leaderID != q.mu.leaderID
	q.mu.leaderID, q.mu.term, q.mu.isLeader = leaderID, term, isLeader
	close(q.mu.changed)
	q.mu.changed = make(chan struct{})
	q.mu.Unlock()
	if leaderChanged {
		q.logger.Info("quorum leader changed", "leader", leaderID, "epoch", term, "self", isLeader)
	}
}

// proposal is one Propose call waiting for its entry.
type proposal struct {
	ctx  context.Context
	id   uint64
	data []byte
	// change, when set, is a membership change instead of data.
	change *memberChange
	// term is the leader term the entry was appended in.
	term   uint64
	result chan proposalResult // buffered: finish never blocks
}

type proposalResult struct {
	offset int64
	err    error
}

func (p *proposal) finish(offset int64, err error) {
	select {
	case p.result <- proposalResult{offset, err}:
	default:
	}
}
