package server

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/partition"
)

// appendReplicated appends a batch a coordinator built to a partition it
// leads with acks=-1, as Kafka's coordinators write __consumer_offsets and
// __transaction_state: fewer in-sync replicas than min.insync.replicas
// refuses the batch before it is written (NOT_ENOUGH_REPLICAS), and once
// written the call returns only when every in-sync replica has it
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER or, after
// timeoutMs, REQUEST_TIMED_OUT otherwise). It returns the offset of the
// batch's last record. What a coordinator answers after this returned nil
// survives the loss of its node.
func appendReplicated(part *partition.Partition, batch []byte, timeoutMs int32) (int64, error) {
	if err := checkMinInsyncReplicas(part); err != nil {
		return 0, err
	}
	last, err := appendInternal(part, batch)
	if err != nil {
		return 0, err
	}
	if err := awaitReplicated(part, last, timeoutMs); err != nil {
		return 0, err
	}
	return last, nil
}

// checkMinInsyncReplicas refuses an acks=-1 append to part when its ISR is
// smaller than the topic's min.insync.replicas.
func checkMinInsyncReplicas(part *partition.Partition) error {
	if cfg := part.Config(); cfg != nil && part.InSyncReplicaCount() < int(cfg.MinInsyncReplicas) {
		return kerr.NotEnoughReplicas
	}
	return nil
}
