package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/quorum"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// A controller configured with controller.quorum.bootstrap.servers and no
// controller.quorum.voters joins a quorum that runs already (KIP-853): it
// asks the bootstrap servers for the cluster id (DescribeCluster) and the
// voters with their endpoints (DescribeQuorum v2), starts as an observer
// that knows them, and waits for AddRaftVoter to add it. After that its own
// metadata log holds the voter set.

// quorumDiscoveryTimeout bounds the start of a joining controller that has
// no metadata log yet; one that has a log starts without the answer.
const (
	quorumDiscoveryTimeout      = 2 * time.Minute
	quorumDiscoveryRetryBackoff = 500 * time.Millisecond
	quorumDiscoveryRequestTime  = 5 * time.Second
)

// joinsDynamicQuorum reports whether the node is a controller that finds the
// quorum through controller.quorum.bootstrap.servers.
func joinsDynamicQuorum(cfg *config.Broker) bool {
	return cfg.IsController() && len(cfg.ControllerQuorumVoters) == 0 && len(cfg.ControllerQuorumBootstrapServers) > 0
}

// discoveredQuorum is what the bootstrap servers told.
type discoveredQuorum struct {
	clusterID string
	peers     []quorum.Member
}

// discoverQuorum asks the bootstrap servers until one answers. A node whose
// metadata log exists gives up after one round and starts from its log.
func discoverQuorum(cfg *config.Broker, fsys vfs.FS, logger *slog.Logger) (discoveredQuorum, error) {
	_, err := fsys.Stat(filepath.Join(cfg.MetadataLogDir, quorum.MetadataPartitionDir, "quorum-state"))
	haveLog := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return discoveredQuorum{}, fmt.Errorf("metadata log dir: %w", err)
	}
	opts, err := clientOpts(cfg, controllerListenerName(cfg))
	if err != nil {
		return discoveredQuorum{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), quorumDiscoveryTimeout)
	defer cancel()
	for {
		var d discoveredQuorum
		var last error
		for _, server := range cfg.ControllerQuorumBootstrapServers {
			if d, last = askBootstrapServer(ctx, server, opts); last == nil {
				return d, nil
			}
			logger.Info("controller.quorum.bootstrap.servers: no answer yet", "server", server, "err", last)
		}
		if haveLog {
			logger.Warn("no bootstrap server answered; starting from the local metadata log", "err", last)
			return discoveredQuorum{}, nil
		}
		select {
		case <-ctx.Done():
			return discoveredQuorum{}, fmt.Errorf("controller.quorum.bootstrap.servers %v: no answer within %v (last: %w)", cfg.ControllerQuorumBootstrapServers, quorumDiscoveryTimeout, last)
		case <-time.After(quorumDiscoveryRetryBackoff):
		}
	}
}

// askBootstrapServer reads the cluster id and the voters from one server.
func askBootstrapServer(ctx context.Context, server string, opts []kgo.Opt) (discoveredQuorum, error) {
	var d discoveredQuorum
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(server)}, opts...)...)
	if err != nil {
		return d, err
	}
	defer cl.Close()
	seed := cl.SeedBrokers()[0]
	rctx, cancel := context.WithTimeout(ctx, quorumDiscoveryRequestTime)
	defer cancel()
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.EndpointType = 2
	resp, err := seed.Request(rctx, dc)
	if err != nil {
		return d, err
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.DescribeClusterResponse).ErrorCode); err != nil {
		return d, fmt.Errorf("DescribeCluster: %w", err)
	}
	d.clusterID = resp.(*kmsg.DescribeClusterResponse).ClusterID
	dq := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = controller.MetadataTopic
	topic.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	dq.Topics = append(dq.Topics, topic)
	resp, err = seed.Request(rctx, dq)
	if err != nil {
		return d, err
	}
	qr := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(qr.ErrorCode); err != nil {
		return d, fmt.Errorf("DescribeQuorum: %w", err)
	}
	for _, n := range qr.Nodes {
		m := quorum.Member{ID: n.NodeID}
		for _, l := range n.Listeners {
			m.Endpoints = append(m.Endpoints, quorum.Endpoint{Name: l.Name, Host: l.Host, Port: l.Port})
		}
		if len(m.Endpoints) > 0 {
			d.peers = append(d.peers, m)
		}
	}
	if len(d.peers) == 0 {
		return d, fmt.Errorf("DescribeQuorum named no voter endpoints")
	}
	return d, nil
}

// controllerAddr is controller id's address on the controller listener:
// from the quorum's voter set on a controller, from the voters
// DescribeQuorum named on a broker-only node, else from
// controller.quorum.voters.
func (n *Node) controllerAddr(id int32) string {
	if n.follower != nil {
		if addr := n.follower.controllerAddr(id); addr != "" {
			return addr
		}
	}
	if n.quorum != nil {
		st := n.quorum.Status()
		for _, v := range append(st.Voters, st.Observers...) {
			if v.ID == id && len(v.Endpoints) > 0 {
				return v.Endpoints[0].Addr()
			}
		}
	}
	for _, v := range n.cfg.ControllerQuorumVoters {
		if v.NodeID == id {
			return net.JoinHostPort(v.Host, strconv.Itoa(v.Port))
		}
	}
	return ""
}

// quorumPeersRefreshInterval spaces the bootstrap servers' answers an
// observer asks for while it waits to be added.
const quorumPeersRefreshInterval = 2 * time.Second

// refreshQuorumPeers keeps a joining controller's peers current while it is
// not yet a member of the voter set: the leader that adds it may be a voter
// that joined after it started.
func (n *Node) refreshQuorumPeers(ctx context.Context) {
	opts, err := clientOpts(n.cfg, controllerListenerName(n.cfg))
	if err != nil {
		return
	}
	ticker := time.NewTicker(quorumPeersRefreshInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		st := n.quorum.Status()
		member := false
		for _, v := range append(st.Voters, st.Observers...) {
			member = member || v.ID == n.cfg.NodeID
		}
		if member {
			continue
		}
		for _, server := range n.cfg.ControllerQuorumBootstrapServers {
			if d, err := askBootstrapServer(ctx, server, opts); err == nil {
				n.quorum.SetPeers(d.peers)
				break
			}
		}
	}
}
