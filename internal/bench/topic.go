package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicReadyTimeout bounds the creation of a topic and the wait for its
// partitions to have leaders; creating 10,000 partitions on a busy machine
// takes minutes.
const topicReadyTimeout = 5 * time.Minute

// TopicSpec is a topic a benchmark writes to.
type TopicSpec struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           map[string]*string
}

// EnsureTopic creates the topic if it does not exist and waits until every
// partition has a leader. It reports whether it created the topic and the
// partition count the topic has.
func EnsureTopic(ctx context.Context, brokers []string, clientOpts []kgo.Opt, spec TopicSpec) (created bool, partitions int32, err error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, clientOpts...)...)
	if err != nil {
		return false, 0, fmt.Errorf("bench: create admin client: %w", err)
	}
	defer cl.Close()
	admin := kadm.NewClient(cl)
	admin.SetTimeoutMillis(int32(topicReadyTimeout.Milliseconds()))
	replication := spec.ReplicationFactor
	if replication == 0 {
		replication = -1 // the broker's default.replication.factor
	}
	_, err = admin.CreateTopic(ctx, spec.Partitions, replication, spec.Configs, spec.Name)
	switch {
	case err == nil:
		created = true
	case errors.Is(err, kerr.TopicAlreadyExists):
	default:
		return false, 0, fmt.Errorf("bench: create topic %q: %w", spec.Name, err)
	}
	deadline := time.Now().Add(topicReadyTimeout)
	for {
		layout, err := topicPartitions(ctx, cl, spec.Name)
		ready := err == nil && len(layout.partitions) > 0
		for _, p := range layout.partitions {
			ready = ready && p.leader >= 0
		}
		if ready {
			return created, int32(len(layout.partitions)), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = errors.New("partitions have no leader")
			}
			return created, 0, fmt.Errorf("bench: topic %q not ready after %s: %w", spec.Name, topicReadyTimeout, err)
		}
		sleepContext(ctx, 50*time.Millisecond)
	}
}
