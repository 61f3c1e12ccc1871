package api

// Helpers of the share coordinator's APIs (83-87), which share-partition
// leaders send to the leader of the __share_group_state partition owning
// each share-partition.

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/share"
)

// shareStatePartition returns the __share_group_state partition owning key
// on this node's view, or the error to answer: NOT_COORDINATOR when the
// topic does not exist yet or this node has no share coordinator.
func (b *Broker) shareStatePartition(key share.Key) (int32, int16) {
	t := b.Image().Topic(controller.ShareGroupStateTopic)
	if t == nil || len(t.Partitions) == 0 || b.ShareStates == nil {
		return -1, kerr.NotCoordinator.Code
	}
	return group.PartitionFor(key.CoordinatorKey(), int32(len(t.Partitions))), 0
}

// authorizeShareState answers whether the caller may use the share
// coordinator's APIs: CLUSTER_ACTION, as brokers do.
func (b *Broker) authorizeShareState(c *call) bool {
	return b.authorizeCluster(c, opClusterAction)
}
