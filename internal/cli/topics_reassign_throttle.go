package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// The replication throttle keys kafka-reassign-partitions sets and clears.
const (
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
	leaderThrottledRate       = "leader.replication.throttled.rate"
	followerThrottledRate     = "follower.replication.throttled.rate"
	alterLogDirsThrottledRate = "replica.alter.log.dirs.io.max.bytes.per.second"
)

// setReassignmentThrottles throttles the move of topic's partitions to
// target as kafka-reassign-partitions --throttle does: leader-side on every
// current replica of a moving partition, follower-side on its new replicas,
// and the rate on every broker holding either.
func setReassignmentThrottles(ctx context.Context, admin *kadm.Client, topic string, partitions, target []int32, rate int64) error {
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe %q: %w", topic, err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		return fmt.Errorf("describe %q: %v", topic, d.Err)
	}
	var leaders, followers []string
	brokers := slices.Clone(target)
	for _, p := range partitions {
		current := d.Partitions[p].Replicas
		for _, r := range current {
			leaders = append(leaders, fmt.Sprintf("%d:%d", p, r))
		}
		for _, r := range target {
			if !slices.Contains(current, r) {
				followers = append(followers, fmt.Sprintf("%d:%d", p, r))
			}
		}
		brokers = append(brokers, current...)
	}
	slices.Sort(brokers)
	brokers = slices.Compact(brokers)
	set := func(name, value string) kadm.AlterConfig {
		return kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: &value}
	}
	if err := alterTopicConfigs(ctx, admin, topic, set(leaderThrottledReplicas, strings.Join(leaders, ",")),
		set(followerThrottledReplicas, strings.Join(followers, ","))); err != nil {
		return err
	}
	value := strconv.FormatInt(rate, 10)
	return alterBrokerConfigs(ctx, admin, brokers, set(leaderThrottledRate, value), set(followerThrottledRate, value))
}

// verifyReassignment removes the throttles of topic's moves once none is in
// progress, as kafka-reassign-partitions --verify does: the topic's
// throttled replica lists, and the throttle rates on every broker.
func verifyReassignment(cmd *cobra.Command, opts *globalOptions, topic string) error {
	admin, ctx, done, err := opts.adminSession(cmd.Context())
	if err != nil {
		return err
	}
	defer done()
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe %q: %w", topic, err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		return fmt.Errorf("describe %q: %v", topic, d.Err)
	}
	set := kadm.TopicsSet{}
	for _, p := range d.Partitions {
		set.Add(topic, p.Partition)
	}
	listed, err := admin.ListPartitionReassignments(ctx, set)
	if err != nil {
		return fmt.Errorf("list partition reassignments: %w", err)
	}
	out := cmd.OutOrStdout()
	if moving := listed.Sorted(); len(moving) > 0 {
		for _, r := range moving {
			fmt.Fprintf(out, "Reassignment of %s-%d is still in progress (adding %s).\n", r.Topic, r.Partition, orDash(joinInt32s(r.AddingReplicas)))
		}
		return nil
	}
	fmt.Fprintf(out, "No partition of %s is moving.\n", topic)
	del := func(name string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.DeleteConfig, Name: name} }
	if err := alterTopicConfigs(ctx, admin, topic, del(leaderThrottledReplicas), del(followerThrottledReplicas)); err != nil {
		return err
	}
	brokers, err := admin.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("list brokers: %w", err)
	}
	if err := alterBrokerConfigs(ctx, admin, brokers.NodeIDs(), del(leaderThrottledRate), del(followerThrottledRate), del(alterLogDirsThrottledRate)); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, "Throttles removed.")
	return err
}

func alterTopicConfigs(ctx context.Context, admin *kadm.Client, topic string, configs ...kadm.AlterConfig) error {
	responses, err := admin.AlterTopicConfigs(ctx, configs, topic)
	if err != nil {
		return fmt.Errorf("alter the configs of %q: %w", topic, err)
	}
	for _, r := range responses {
		if err := kafkaError(r.Err, r.ErrMessage); err != nil {
			return fmt.Errorf("alter the configs of %q: %w", topic, err)
		}
	}
	return nil
}

func alterBrokerConfigs(ctx context.Context, admin *kadm.Client, brokers []int32, configs ...kadm.AlterConfig) error {
	responses, err := admin.AlterBrokerConfigs(ctx, configs, brokers...)
	if err != nil {
		return fmt.Errorf("alter broker configs: %w", err)
	}
	for _, r := range responses {
		if err := kafkaError(r.Err, r.ErrMessage); err != nil {
			return fmt.Errorf("alter the configs of broker %s: %w", r.Name, err)
		}
	}
	return nil
}
