package server

import (
	"context"
	"time"
)

// runLeaderRebalance gives leadership back to preferred replicas every
// leader.imbalance.check.interval.seconds while this node is the active
// controller and auto.leader.rebalance.enable is set; the controller decides
// which partitions move (leader.imbalance.per.broker.percentage).
func (n *Node) runLeaderRebalance(ctx context.Context) {
	if !n.cfg.AutoLeaderRebalanceEnable {
		return
	}
	interval := time.Duration(max(n.cfg.LeaderImbalanceCheckIntervalSeconds, 1)) * time.Second
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if leader, _ := n.metadata.Leader(); leader != n.cfg.NodeID {
				continue
			}
			moved, err := n.controller.BalanceLeaders(n.cfg.LeaderImbalancePerBrokerPercentage)
			if err != nil {
				n.logger.Debug("leader rebalance", "err", err)
				continue
			}
			if len(moved) > 0 {
				n.logger.Info("leader rebalance: leadership moved back to preferred replicas", "partitions", len(moved))
			}
		}
	}
}
