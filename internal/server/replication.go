package server

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/quota"
	"github.com/samsa-streaming/samsa/internal/replication"
)

// setupReplication creates the replica fetchers and lets leaders send ISR
// changes to the active controller. Call before the partitions first
// reconcile.
func (n *Node) setupReplication() {
	cfg := n.cfg
	// Checked at start (checkClientSecurity).
	securityOpts, _ := n.clientOpts(cfg.InterBrokerListenerName)
	// Replication throttles (KIP-73): one quota for what this node sends as
	// a leader, one for what it fetches as a follower.
	windows := quota.Windows{Samples: cfg.ReplicationQuotaWindowNum(), WindowMs: int64(cfg.ReplicationQuotaWindowSizeSeconds()) * 1000}
	n.broker.LeaderReplicationQuota = quota.NewReplicationQuota(windows)
	n.replicas = replication.NewManager(replication.Config{
		FollowerQuota:         quota.NewReplicationQuota(windows),
		FollowerThrottledRate: func() int64 { return n.broker.Config().FollowerReplicationThrottledRate() },
		ListenerName:          cfg.InterBrokerListenerName,
		ClientOpts:            securityOpts,
		NodeID:                cfg.NodeID,
		FetchMaxBytes:         cfg.ReplicaFetchMaxBytes,
		FetchResponseMaxBytes: cfg.ReplicaFetchResponseMaxBytes,
		FetchWaitMaxMs:        cfg.ReplicaFetchWaitMaxMs,
		FetchMinBytes:         cfg.ReplicaFetchMinBytes,
		FetchBackoffMs:        cfg.ReplicaFetchBackoffMs,
		SocketTimeoutMs:       int32(configInt(cfg, "replica.socket.timeout.ms")),
		Logger:                n.logger.With("component", "replication"),
		RemoteAuxState:        n.remoteAuxState,
	}, n.partitions, n.controller.Image)
	n.partitions.SetAlterPartition(n.alterPartition)
}

// runISRChecks drops lagging followers from the ISRs this node leads every
// replica.lag.time.max.ms / 2, as Kafka's isr-expiration task does.
func (n *Node) runISRChecks(ctx context.Context) {
	lagMaxMs := max(n.cfg.ReplicaLagTimeMaxMs, 2)
	ticker := time.NewTicker(time.Duration(lagMaxMs/2) * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			n.partitions.MaybeShrinkISRs(lagMaxMs)
		}
	}
}

// alterPartition sends one ISR change to the active controller.
func (n *Node) alterPartition(ctx context.Context, r partition.AlterPartitionRequest) ([]int32, int32, error) {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID = n.cfg.NodeID
	req.BrokerEpoch = -1
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.Topic, rt.TopicID = r.Topic, r.TopicID
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = r.Partition, r.LeaderEpoch, r.PartitionEpoch
	rp.NewISR = r.NewISR
	for _, id := range r.NewISR {
		e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		e.BrokerID = id
		rp.NewEpochISR = append(rp.NewEpochISR, e)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := n.activeController.request(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	ar := resp.(*kmsg.AlterPartitionResponse)
	if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
		return nil, 0, err
	}
	if len(ar.Topics) != 1 || len(ar.Topics[0].Partitions) != 1 {
		return nil, 0, fmt.Errorf("alter partition: malformed response")
	}
	sp := ar.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		return nil, 0, err
	}
	return sp.ISR, sp.PartitionEpoch, nil
}
