package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/quorum"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// quorumJournal is the controller's journal on the Raft metadata quorum:
// an Append commits one entry on a majority of the voters and returns once
// this node has applied it.
type quorumJournal struct {
	q *quorum.Quorum
	// timeout bounds a write whose context has no earlier deadline: the
	// controller's own writes (registrations, fencing, ISR changes). Admin
	// requests bring their timeout_ms as the context's deadline.
	timeout time.Duration
	// caughtUpEpoch is the leader epoch in which this node last committed a
	// barrier entry as leader.
	caughtUpEpoch atomic.Int64
}

// CatchUp implements controller.Journal: once per leader epoch, the leader
// commits a NoOpRecord, which it applies only after every earlier entry.
func (j *quorumJournal) CatchUp(ctx context.Context) error {
	if j.q == nil {
		return fmt.Errorf("%w: a broker-only node has no quorum", controller.ErrNotActive)
	}
	leader, epoch := j.q.Leader()
	if leader < 0 {
		return fmt.Errorf("%w: no quorum leader", controller.ErrNotActive)
	}
	if j.caughtUpEpoch.Load() == epoch {
		return nil
	}
	noop, err := metadata.Encode(nil, &metadata.NoOpRecord{})
	if err != nil {
		return err
	}
	if _, err := j.Append(ctx, [][]byte{noop}); err != nil {
		return err
	}
	j.caughtUpEpoch.Store(epoch)
	return nil
}

// Append implements controller.Journal.
func (j *quorumJournal) Append(ctx context.Context, values [][]byte) (int64, error) {
	if j.q == nil {
		return 0, fmt.Errorf("%w: a broker-only node has no quorum", controller.ErrNotActive)
	}
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	offset, err := j.q.Propose(ctx, values)
	if errors.Is(err, quorum.ErrNotLeader) {
		return 0, fmt.Errorf("%w: %v", controller.ErrNotActive, err)
	}
	return offset, err
}

// controllerStateMachine feeds committed metadata entries to the controller.
type controllerStateMachine struct{ c *controller.Controller }

func (sm controllerStateMachine) Apply(offset int64, values [][]byte) error {
	return sm.c.ApplyCommitted(offset, values)
}

func (sm controllerStateMachine) Snapshot() ([]byte, error) {
	b, _, err := sm.c.Snapshot()
	return b, err
}

func (sm controllerStateMachine) Restore(snapshot []byte, offset int64) error {
	return sm.c.Restore(snapshot, offset)
}

// quorumConfig derives this node's quorum membership. With no
// controller.quorum.voters the node is a quorum of one on a private
// loopback port: the zero-config single node.
// A controller that joins through controller.quorum.bootstrap.servers has
// no voters and knows the discovered ones as peers.
func quorumConfig(cfg *config.Broker, fs vfs.FS, logger *slog.Logger, discovered discoveredQuorum) (quorum.Config, error) {
	qc := quorum.Config{
		NodeID:           cfg.NodeID,
		Dir:              cfg.MetadataLogDir,
		FS:               fs,
		RequestTimeoutMs: int(configInt(cfg, "controller.quorum.request.timeout.ms")),
		RetryBackoffMs:   int(configInt(cfg, "controller.quorum.retry.backoff.ms")),
		Logger:           logger,
		// The quorum keeps this many bytes of entries in memory for
		// observers too (package quorum, tail.go).
		SnapshotIntervalBytes: cfg.MetadataLogMaxRecordBytesBetweenSnapshots,
		SnapshotIntervalMs:    cfg.MetadataLogMaxSnapshotIntervalMs,
		ListenerName:          controllerListenerName(cfg),
		Peers:                 discovered.peers,
	}
	if qc.SnapshotIntervalMs == 0 {
		qc.SnapshotIntervalMs = -1 // Kafka's 0: no time-based snapshots
	}
	// Raft ticks: an election timeout of controller.quorum.election.timeout.ms
	// spread over ten ticks.
	if ms := configInt(cfg, "controller.quorum.election.timeout.ms"); ms > 0 {
		qc.TickMs = max(int(ms/10), 1)
		qc.ElectionTicks = 10
		qc.HeartbeatTicks = 1
	}
	if len(cfg.ControllerQuorumVoters) == 0 && !joinsDynamicQuorum(cfg) {
		qc.Voters = []quorum.Voter{{ID: cfg.NodeID, Addr: "127.0.0.1:0"}}
		qc.ListenAddr = "127.0.0.1:0"
		return qc, nil
	}
	dialTLS, err := clientTLS(cfg, controllerListenerName(cfg))
	if err != nil {
		return quorum.Config{}, err
	}
	qc.DialTLS = dialTLS
	for _, v := range cfg.ControllerQuorumVoters {
		qc.Voters = append(qc.Voters, quorum.Voter{ID: v.NodeID, Addr: net.JoinHostPort(v.Host, strconv.Itoa(v.Port))})
	}
	for _, l := range cfg.Listeners {
		if isControllerListener(cfg, l.Name) {
			qc.ListenAddr = net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
		}
	}
	if qc.ListenAddr == "" {
		return qc, fmt.Errorf("controller.listener.names %v names no listener in listeners", cfg.ControllerListenerNames)
	}
	return qc, nil
}

// clusterIDFromVoters names a multi-node cluster the same on every node when
// cluster.id is not set: a hash of the voter set.
func clusterIDFromVoters(cfg *config.Broker) string {
	h := sha256.New()
	for _, v := range cfg.ControllerQuorumVoters {
		fmt.Fprintf(h, "%d@%s:%d,", v.NodeID, v.Host, v.Port)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// metadataView is how a node follows the metadata quorum: as a voter
// (*quorum.Quorum) or, on a broker-only node, as an observer
// (*metadataFollower).
type metadataView interface {
	// Leader is the active controller and its epoch; -1 when unknown.
	Leader() (id int32, epoch int64)
	WaitForLeader(ctx context.Context) error
}

// activeController reaches the active controller (the quorum leader) on
// its controller listener, the address controller.quorum.voters gives it,
// with a franz-go client, for requests this node must not decide itself:
// registration, heartbeats, ISR changes, forwarded admin requests.
type activeController struct {
	n *Node

	mu     sync.Mutex
	addr   string
	client *kgo.Client
}

// request sends req to the active controller and returns its response.
func (a *activeController) request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	leader, _ := a.n.metadata.Leader()
	if leader < 0 {
		return nil, fmt.Errorf("no active controller")
	}
	addr := a.n.controllerAddr(leader)
	if addr == "" {
		return nil, fmt.Errorf("active controller %d has no known controller listener", leader)
	}
	a.mu.Lock()
	if a.addr != addr {
		if a.client != nil {
			a.client.Close()
		}
		securityOpts, err := a.n.clientOpts(controllerListenerName(a.n.cfg))
		if err != nil {
			a.mu.Unlock()
			return nil, err
		}
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, securityOpts...)...)
		if err != nil {
			a.mu.Unlock()
			return nil, err
		}
		a.addr, a.client = addr, cl
	}
	cl := a.client
	a.mu.Unlock()
	return cl.SeedBrokers()[0].Request(ctx, req)
}

func (a *activeController) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil {
		a.client.Close()
		a.client = nil
	}
}

// register puts this node's registration into the metadata image: directly
// when it leads the quorum, else through the active controller. It retries
// until it succeeds or ctx ends.
func (n *Node) register(ctx context.Context, clusterID string) error {
	reg := n.registration()
	for {
		err := n.registerOnce(ctx, clusterID, reg)
		if err == nil {
			return nil
		}
		n.logger.Debug("broker registration", "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (n *Node) registerOnce(ctx context.Context, clusterID string, reg metadata.RegisterBrokerRecord) error {
	if err := n.metadata.WaitForLeader(ctx); err != nil {
		return err
	}
	if leader, _ := n.metadata.Leader(); leader == n.cfg.NodeID {
		return n.controller.Bootstrap(clusterID, reg)
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID = reg.BrokerID
	req.ClusterID = clusterID
	for _, ep := range reg.Endpoints {
		l := kmsg.NewBrokerRegistrationRequestListener()
		l.Name, l.Host, l.Port = ep.Name, ep.Host, uint16(ep.Port)
		req.Listeners = append(req.Listeners, l)
	}
	req.Rack = reg.Rack
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := n.activeController.request(rctx, req)
	if err != nil {
		return err
	}
	rr := resp.(*kmsg.BrokerRegistrationResponse)
	if err := kerr.ErrorForCode(rr.ErrorCode); err != nil {
		return fmt.Errorf("broker registration: %w", err)
	}
	// The answer carries the registration's offset: once this node has
	// applied it, it has applied everything committed before it.
	for n.controller.Image().Offset < rr.BrokerEpoch {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// bootstrapPollInterval is how often a controller that has not yet seen
// the cluster id in its image checks whether it leads the quorum.
const bootstrapPollInterval = 50 * time.Millisecond

// runClusterBootstrap writes the cluster id and the bootstrap records
// (SCRAM users, cluster configs) once this controller leads a quorum whose
// metadata log has none, as Kafka's first active controller writes the
// bootstrap metadata: a cluster of dedicated controllers then answers
// DescribeCluster and DescribeUserScramCredentials before any broker
// registers. It returns once the image has a cluster id or ctx ends.
func (n *Node) runClusterBootstrap(ctx context.Context, clusterID string) {
	ticker := time.NewTicker(bootstrapPollInterval)
	defer ticker.Stop()
	for n.controller.Image().ClusterID == "" {
		if leader, _ := n.metadata.Leader(); leader == n.cfg.NodeID {
			if err := n.controller.BootstrapCluster(clusterID); err != nil {
				n.logger.Debug("bootstrapping the metadata log", "err", err)
			}
		}
		if n.controller.Image().ClusterID != "" {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// configInt reads an integer key of the effective configuration (0 when
// unset).
func configInt(cfg *config.Broker, key string) int64 {
	v, _ := cfg.Get(key)
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// runLiveness heartbeats this broker to the active controller every
// broker.heartbeat.interval.ms and, while this node is the active
// controller, fences brokers silent for broker.session.timeout.ms.
func (n *Node) runLiveness(ctx context.Context) {
	interval := time.Duration(max(configInt(n.cfg, "broker.heartbeat.interval.ms"), 1)) * time.Millisecond
	session := time.Duration(max(configInt(n.cfg, "broker.session.timeout.ms"), 1)) * time.Millisecond
	check := min(interval, time.Second)
	ticker := time.NewTicker(check)
	defer ticker.Stop()
	var lastBeat time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			if n.cfg.IsBroker() && now.Sub(lastBeat) >= interval {
				lastBeat = now
				if err := n.heartbeat(ctx, now); err != nil {
					n.logger.Debug("broker heartbeat", "err", err)
				}
			}
			if leader, _ := n.metadata.Leader(); leader == n.cfg.NodeID {
				if err := n.controller.FenceStale(now, session); err != nil {
					n.logger.Debug("fencing stale brokers", "err", err)
				}
			}
		}
	}
}

func (n *Node) heartbeat(ctx context.Context, now time.Time) error {
	if leader, _ := n.metadata.Leader(); leader == n.cfg.NodeID {
		return n.controller.Heartbeat(n.cfg.NodeID, now)
	}
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID = n.cfg.NodeID
	req.CurrentMetadataOffset = n.controller.Image().Offset
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := n.activeController.request(rctx, req)
	if err != nil {
		return err
	}
	code := resp.(*kmsg.BrokerHeartbeatResponse).ErrorCode
	if code == kerr.BrokerIDNotRegistered.Code {
		// The controller lost this broker (a snapshot older than the
		// registration, say): register again.
		return n.registerOnce(ctx, n.controller.Image().ClusterID, n.registration())
	}
	return kerr.ErrorForCode(code)
}

// controlledShutdown hands this node's leaderships to other in-sync
// replicas before it stops, when other brokers are alive to take them.
func (n *Node) controlledShutdown(ctx context.Context) error {
	img := n.controller.Image()
	others := 0
	for _, b := range img.Brokers() {
		if b.ID != n.cfg.NodeID && !b.Fenced {
			others++
		}
	}
	if others == 0 {
		return nil
	}
	if leader, _ := n.metadata.Leader(); leader == n.cfg.NodeID {
		// The controller's write waits for the quorum (up to the journal's
		// timeout); a quorum that is gone must not hold the shutdown past
		// ctx. The write ends when the quorum stops.
		done := make(chan error, 1)
		go func() { done <- n.controller.ControlledShutdown(n.cfg.NodeID) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("controlled shutdown on the active controller: %w", ctx.Err())
		}
	}
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID = n.cfg.NodeID
	req.WantShutdown = true
	resp, err := n.activeController.request(ctx, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.BrokerHeartbeatResponse).ErrorCode)
}
