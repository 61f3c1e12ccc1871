package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/quorum"
)

// A broker-only node (process.roles=broker) is an observer of the metadata
// quorum, as in KRaft: it takes no part in the vote and follows the
// committed metadata log by long-polling a voter's controller listener with
// Fetch requests for __cluster_metadata-0, applying each entry to its local
// image. When it is further behind than the voter keeps entries in memory,
// it fetches a snapshot of the image first (FetchSnapshot). It keeps no copy
// of the log on disk: at start it catches up from the voters again.
//
// The voters it knows are controller.quorum.voters, or, with
// controller.quorum.bootstrap.servers, those servers until a DescribeQuorum
// (v2) names the voters and their controller listeners. It asks again every
// voterRefreshInterval and whenever the leader a fetch names is not one it
// knows, so it follows voters added and removed online (KIP-853).

const (
	// metadataFetchMaxWaitMs is how long one observer fetch may wait for new
	// entries (KRaft's fetch max wait).
	metadataFetchMaxWaitMs = 500
	// metadataFetchMaxBytes bounds one fetch response (KRaft's fetch max
	// bytes for the metadata log, 8 MiB).
	metadataFetchMaxBytes = 8 << 20
	// metadataSnapshotMaxBytes bounds one snapshot chunk (8 MiB).
	metadataSnapshotMaxBytes = 8 << 20
	// voterRefreshInterval spaces the DescribeQuorum requests that keep the
	// voters' endpoints current.
	voterRefreshInterval = 10 * time.Second
	// maxMetadataSnapshotBytes bounds a whole snapshot, as the quorum bounds
	// the snapshots it reads.
	maxMetadataSnapshotBytes = quorum.DefaultMaxSnapshotBytes
)

// metadataFollower follows the metadata log for a broker-only node.
type metadataFollower struct {
	nodeID int32
	// bootstrap are the configured addresses to fall back on: the voters of
	// controller.quorum.voters, or controller.quorum.bootstrap.servers with
	// made-up negative ids.
	bootstrap []config.QuorumVoter
	// lastRefresh is when DescribeQuorum last answered (run goroutine only).
	lastRefresh time.Time
	ctrl        *controller.Controller
	logger      *slog.Logger
	// securityOpts are the controller listener's client security options.
	securityOpts []kgo.Opt
	// requestTimeout is controller.quorum.request.timeout.ms; backoff is
	// controller.quorum.retry.backoff.ms.
	requestTimeout, backoff time.Duration

	clients map[int32]*kgo.Client // by voter id; run goroutine only
	// highWatermark is the end of the committed log as the last fetch told.
	highWatermark atomic.Int64

	mu struct {
		sync.Mutex
		leaderID int32
		epoch    int64
		// changed is closed and replaced when the leader changes.
		changed chan struct{}
		// voters are the voters as DescribeQuorum last named them, else
		// bootstrap.
		voters []config.QuorumVoter
	}
	cancel context.CancelFunc
	done   chan struct{}
}

func newMetadataFollower(cfg *config.Broker, ctrl *controller.Controller, logger *slog.Logger) (*metadataFollower, error) {
	bootstrap := cfg.ControllerQuorumVoters
	if len(bootstrap) == 0 {
		for i, server := range cfg.ControllerQuorumBootstrapServers {
			host, portText, err := net.SplitHostPort(server)
			port, _ := strconv.Atoi(portText)
			if err != nil || port <= 0 {
				return nil, fmt.Errorf("controller.quorum.bootstrap.servers: %q is not host:port", server)
			}
			bootstrap = append(bootstrap, config.QuorumVoter{NodeID: int32(-1 - i), Host: host, Port: port})
		}
	}
	if len(bootstrap) == 0 {
		return nil, fmt.Errorf("process.roles=%v: a broker-only node needs controller.quorum.voters or controller.quorum.bootstrap.servers to find the controllers", cfg.ProcessRoles)
	}
	f := &metadataFollower{
		nodeID: cfg.NodeID, bootstrap: bootstrap, ctrl: ctrl, logger: logger,
		requestTimeout: time.Duration(max(configInt(cfg, "controller.quorum.request.timeout.ms"), 1)) * time.Millisecond,
		backoff:        time.Duration(max(configInt(cfg, "controller.quorum.retry.backoff.ms"), 1)) * time.Millisecond,
		clients:        map[int32]*kgo.Client{},
		done:           make(chan struct{}),
	}
	var err error
	if f.securityOpts, err = clientOpts(cfg, controllerListenerName(cfg)); err != nil {
		return nil, err
	}
	f.mu.leaderID = -1
	f.mu.changed = make(chan struct{})
	f.mu.voters = bootstrap
	return f, nil
}

// start follows the log in the background until stop.
func (f *metadataFollower) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go f.run(ctx)
}

func (f *metadataFollower) stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	<-f.done
}

// Leader is the active controller as the voters last told, -1 when unknown.
func (f *metadataFollower) Leader() (int32, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.leaderID, f.mu.epoch
}

// WaitForLeader waits until a leader is known.
func (f *metadataFollower) WaitForLeader(ctx context.Context) error {
	for {
		f.mu.Lock()
		leader, changed := f.mu.leaderID, f.mu.changed
		f.mu.Unlock()
		if leader >= 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *metadataFollower) setLeader(id int32, epoch int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if epoch < f.mu.epoch || (id == f.mu.leaderID && epoch == f.mu.epoch) {
		return
	}
	if id < 0 && epoch == f.mu.epoch {
		// A voter that lost track of a leader in the same epoch says nothing new.
		return
	}
	f.mu.leaderID, f.mu.epoch = id, epoch
	close(f.mu.changed)
	f.mu.changed = make(chan struct{})
}

func (f *metadataFollower) run(ctx context.Context) {
	defer close(f.done)
	defer func() {
		for _, cl := range f.clients {
			cl.Close()
		}
	}()
	next := 0 // the voter to try when no leader is known
	for ctx.Err() == nil {
		voter := f.target(&next)
		err := f.fetchOnce(ctx, voter)
		if err == nil {
			f.maybeRefreshVoters(ctx, voter)
			if leader, _ := f.Leader(); leader < 0 {
				// The voter answered but knows no leader: it may have
				// been removed from the quorum, and then it never learns
				// of one (or of new entries) again. Ask another.
				next++
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		f.logger.Debug("following the metadata log", "voter", voter.NodeID, "err", err)
		// Ask another voter next: this one may be down or partitioned away.
		next++
		f.forgetLeader(voter.NodeID)
		select {
		case <-ctx.Done():
		case <-time.After(f.backoff):
		}
	}
}

// target is the voter to fetch from: the leader when known, else the
// voters in turn.
func (f *metadataFollower) target(next *int) config.QuorumVoter {
	leader, _ := f.Leader()
	voters := f.voters()
	for _, v := range voters {
		if v.NodeID == leader {
			return v
		}
	}
	// The configured addresses come last, so a quorum whose voters all
	// changed is still found.
	all := append(voters, f.bootstrap...)
	return all[*next%len(all)]
}

// voters are the voters known now.
func (f *metadataFollower) voters() []config.QuorumVoter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mu.voters)
}

// controllerAddr is voter id's controller listener, or "".
func (f *metadataFollower) controllerAddr(id int32) string {
	for _, v := range f.voters() {
		if v.NodeID == id {
			return net.JoinHostPort(v.Host, strconv.Itoa(v.Port))
		}
	}
	return ""
}

// maybeRefreshVoters asks from (which just answered a fetch) for the voters
// when the leader is not a known one or the last answer is old.
func (f *metadataFollower) maybeRefreshVoters(ctx context.Context, from config.QuorumVoter) {
	leader, _ := f.Leader()
	if leader >= 0 && f.controllerAddr(leader) != "" && time.Since(f.lastRefresh) < voterRefreshInterval {
		return
	}
	cl, err := f.client(from)
	if err != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, f.requestTimeout)
	defer cancel()
	req := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = controller.MetadataTopic
	topic.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, topic)
	resp, err := cl.SeedBrokers()[0].Request(rctx, req)
	if err != nil {
		f.logger.Debug("describing the quorum", "voter", from.NodeID, "err", err)
		return
	}
	var voters []config.QuorumVoter
	for _, n := range resp.(*kmsg.DescribeQuorumResponse).Nodes {
		if len(n.Listeners) > 0 {
			voters = append(voters, config.QuorumVoter{NodeID: n.NodeID, Host: n.Listeners[0].Host, Port: int(n.Listeners[0].Port)})
		}
	}
	if len(voters) == 0 {
		return
	}
	f.lastRefresh = time.Now()
	f.mu.Lock()
	f.mu.voters = voters
	f.mu.Unlock()
}

// forgetLeader drops a leader that could not be reached, so the next fetch
// tries the other voters.
func (f *metadataFollower) forgetLeader(id int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.leaderID == id {
		f.mu.leaderID = -1
	}
}

func (f *metadataFollower) client(v config.QuorumVoter) (*kgo.Client, error) {
	if cl := f.clients[v.NodeID]; cl != nil {
		return cl, nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(net.JoinHostPort(v.Host, strconv.Itoa(int(v.Port))))}, f.securityOpts...)...)
	if err != nil {
		return nil, err
	}
	f.clients[v.NodeID] = cl
	return cl, nil
}

// fetchOnce fetches from voter once and applies what it answered.
func (f *metadataFollower) fetchOnce(ctx context.Context, v config.QuorumVoter) error {
	cl, err := f.client(v)
	if err != nil {
		return err
	}
	offset := f.ctrl.Image().Offset + 1
	req := kmsg.NewPtrFetchRequest()
	// An observer names itself, as KRaft's do (ReplicaState from v15).
	req.ReplicaID = f.nodeID
	req.ReplicaState.ID, req.ReplicaState.Epoch = f.nodeID, -1
	req.MaxWaitMillis, req.MaxBytes = metadataFetchMaxWaitMs, metadataFetchMaxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = controller.MetadataTopic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = 0, offset, metadataFetchMaxBytes
	rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	rctx, cancel := context.WithTimeout(ctx, f.requestTimeout+metadataFetchMaxWaitMs*time.Millisecond)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(rctx, req)
	if err != nil {
		return err
	}
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return fmt.Errorf("metadata fetch answered %d topics", len(fr.Topics))
	}
	p := fr.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return err
	}
	f.setLeader(p.CurrentLeader.LeaderID, int64(p.CurrentLeader.LeaderEpoch))
	f.highWatermark.Store(p.HighWatermark)
	if p.SnapshotID.EndOffset >= 0 {
		return f.fetchSnapshot(rctx, cl, p.SnapshotID.EndOffset, p.SnapshotID.Epoch)
	}
	return quorum.DecodeEntryBatches(p.RecordBatches, func(offset int64, values [][]byte) error {
		return f.ctrl.ApplyCommitted(offset, values)
	})
}

// fetchSnapshot downloads the snapshot named by endOffset and epoch and
// restores the image from it.
func (f *metadataFollower) fetchSnapshot(ctx context.Context, cl *kgo.Client, endOffset int64, epoch int32) error {
	var data []byte
	for {
		req := kmsg.NewPtrFetchSnapshotRequest()
		req.ReplicaID, req.MaxBytes = f.nodeID, metadataSnapshotMaxBytes
		rt := kmsg.NewFetchSnapshotRequestTopic()
		rt.Topic = controller.MetadataTopic
		rp := kmsg.NewFetchSnapshotRequestTopicPartition()
		rp.CurrentLeaderEpoch = -1
		rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch, rp.Position = endOffset, epoch, int64(len(data))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			return err
		}
		sr := resp.(*kmsg.FetchSnapshotResponse)
		if err := kerr.ErrorForCode(sr.ErrorCode); err != nil {
			return err
		}
		if len(sr.Topics) != 1 || len(sr.Topics[0].Partitions) != 1 {
			return fmt.Errorf("metadata snapshot fetch answered %d topics", len(sr.Topics))
		}
		p := sr.Topics[0].Partitions[0]
		switch err := kerr.ErrorForCode(p.ErrorCode); {
		case err != nil:
			return err
		case p.Position != int64(len(data)) || p.Size > maxMetadataSnapshotBytes || p.Size < p.Position+int64(len(p.Bytes)):
			return fmt.Errorf("metadata snapshot chunk at %d of %d bytes, size %d, expected position %d", p.Position, len(p.Bytes), p.Size, len(data))
		case len(p.Bytes) == 0 && int64(len(data)) < p.Size:
			return errors.New("metadata snapshot chunk is empty")
		}
		data = append(data, p.Bytes...)
		if int64(len(data)) == p.Size {
			break
		}
	}
	if err := f.ctrl.Restore(data, endOffset-1); err != nil {
		return fmt.Errorf("restore the metadata snapshot at offset %d: %w", endOffset-1, err)
	}
	f.logger.Info("restored metadata from a controller's snapshot", "end_offset", endOffset)
	return nil
}
