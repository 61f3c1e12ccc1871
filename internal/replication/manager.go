// Package replication runs the follower side of partition replication
// (Kafka's ReplicaFetcherManager and ReplicaFetcherThread): for every
// broker that leads partitions this node follows, one fetcher goroutine
// (num.replica.fetchers = 1) that first truncates each newly followed
// partition to where its log agrees with the leader's (OffsetForLeaderEpoch,
// KIP-101/279) and then fetches from the leader's log end offset, appending
// the batches byte for byte.
//
// The leader side (follower log end offsets, the ISR, the high watermark)
// lives in package partition; the controller side (AlterPartition) in
// package controller.
package replication

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/quota"
)

// Config holds the replica fetcher settings, with Kafka's names.
type Config struct {
	NodeID int32
	// FetchMaxBytes is replica.fetch.max.bytes (per partition).
	FetchMaxBytes int32
	// FetchResponseMaxBytes is replica.fetch.response.max.bytes.
	FetchResponseMaxBytes int32
	// FetchWaitMaxMs is replica.fetch.wait.max.ms.
	FetchWaitMaxMs int32
	// FetchMinBytes is replica.fetch.min.bytes.
	FetchMinBytes int32
	// FetchBackoffMs is replica.fetch.backoff.ms.
	FetchBackoffMs int32
	// SocketTimeoutMs is replica.socket.timeout.ms.
	SocketTimeoutMs int32
	// ListenerName is inter.broker.listener.name: fetchers connect to the
	// leader's endpoint of that name.
	ListenerName string
	// ClientOpts are the security options of the inter-broker listener.
	ClientOpts []kgo.Opt
	// FollowerQuota throttles the partitions a topic's
	// follower.replication.throttled.replicas names on this broker while
	// they catch up (throttle.go); nil for none.
	FollowerQuota *quota.ReplicationQuota
	// FollowerThrottledRate is follower.replication.throttled.rate, read
	// at each fetch so a dynamic change applies at once.
	FollowerThrottledRate func() int64
	Logger                *slog.Logger
	// RemoteAuxState reads from the remote tier what a follower needs to
	// start its log at the leader's local log start (tiered storage);
	// nil when tiered storage is off (remote_aux.go).
	RemoteAuxState func(ctx context.Context, p *partition.Partition, localLogStartOffset, logStartOffset int64) (partition.RemoteAuxState, error)
}

// Manager keeps one fetcher per leader broker, matching the partition
// manager's followers.
type Manager struct {
	cfg        Config
	partitions *partition.Manager
	image      func() *metadata.Image
	ctx        context.Context
	cancel     context.CancelFunc

	mu struct {
		sync.Mutex
		fetchers map[int32]*fetcher
	}
}

// NewManager returns a fetcher manager; Apply starts fetchers.
func NewManager(cfg Config, partitions *partition.Manager, image func() *metadata.Image) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, partitions: partitions, image: image}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.mu.fetchers = map[int32]*fetcher{}
	return m
}

// Apply matches the fetchers to the partition manager's followers. It does
// not block: each fetcher picks its new assignment up between fetches.
func (m *Manager) Apply() {
	byLeader := map[int32][]partition.Follower{}
	for _, f := range m.partitions.Followers() {
		if f.Leader >= 0 && f.Leader != m.cfg.NodeID {
			byLeader[f.Leader] = append(byLeader[f.Leader], f)
		}
	}
	img := m.image()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx.Err() != nil {
		return
	}
	for id, fe := range m.mu.fetchers {
		if _, ok := byLeader[id]; !ok {
			fe.stop()
			delete(m.mu.fetchers, id)
		}
	}
	for id, follows := range byLeader {
		addr := brokerAddr(img, id, m.cfg.ListenerName)
		fe := m.mu.fetchers[id]
		if fe != nil && fe.addr != addr {
			fe.stop()
			fe = nil
		}
		if fe == nil {
			fe = newFetcher(m, id, addr)
			m.mu.fetchers[id] = fe
			go fe.run()
		}
		fe.assign(follows)
	}
}

// Shutdown stops every fetcher.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cancel()
	for id, fe := range m.mu.fetchers {
		fe.stop()
		delete(m.mu.fetchers, id)
	}
}

func brokerAddr(img *metadata.Image, id int32, listener string) string {
	b := img.Broker(id)
	if b == nil || len(b.Endpoints) == 0 {
		return ""
	}
	ep := b.Endpoints[0]
	for _, candidate := range b.Endpoints {
		if candidate.Name == listener {
			ep = candidate
		}
	}
	return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
}

func newClient(addr string, security []kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(0), kgo.RequestRetries(0)}, security...)...)
}
