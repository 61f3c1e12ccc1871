package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// reassignedPartition is one JSON result of "topics reassign".
type reassignedPartition struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"` // null when cancelled
	Cancelled bool    `json:"cancelled"`
}

func newTopicsReassignCommand(opts *globalOptions) *cobra.Command {
	var (
		partitions       []int
		replicasFlag     string
		cancel           bool
		keepReplicaCount bool
		throttle         int64
		verify           bool
	)
	cmd := &cobra.Command{
		Use:   "reassign TOPIC",
		Short: "Move partitions to other brokers, or cancel a move",
		Long: `Start an online partition reassignment (AlterPartitionReassignments, KIP-455):
the partitions replicate to the new brokers while they keep serving, and once
every new replica is in sync they drop the old ones, moving leadership if the
leader is removed. The command returns once the move has started; follow it
with 'samsa topics reassignments'. --cancel reverts a move in progress.

--throttle limits the move's replication to that many bytes a second, as
kafka-reassign-partitions --throttle does: the topic's
leader.replication.throttled.replicas names the partitions' current replicas,
follower.replication.throttled.replicas the new ones, and every broker of the
move gets leader.replication.throttled.rate and
follower.replication.throttled.rate. Replicas in sync are never throttled.
--verify, once no partition of the topic is moving any more, removes those
topic configs and the rates on every broker (kafka-reassign-partitions
--verify); while a move is in progress it says so and changes nothing.`,
		Example: `  samsa topics reassign orders --partition 0 --replicas 2,3,4
  samsa topics reassign orders --partition 0 --partition 1 --replicas 4,5,6 --disallow-replication-factor-change
  samsa topics reassign orders --partition 0 --replicas 2,3,4 --throttle 5000000
  samsa topics reassign orders --verify
  samsa topics reassign orders --partition 0 --cancel`,
		Args:              argsNamed("TOPIC"),
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			if verify {
				if len(partitions) > 0 || replicasFlag != "" || cancel || throttle != 0 {
					return newUsageError(cmd.CommandPath(), "--verify takes the topic alone")
				}
				return verifyReassignment(cmd, opts, topic)
			}
			if throttle < 0 || throttle > 0 && cancel {
				return newUsageError(cmd.CommandPath(), "--throttle takes a positive rate in bytes a second, and not with --cancel")
			}
			if len(partitions) == 0 {
				return newUsageError(cmd.CommandPath(), "give the partitions to move with --partition")
			}
			if cancel == (replicasFlag != "") {
				return newUsageError(cmd.CommandPath(), "give exactly one of --replicas and --cancel")
			}
			var replicas []int32
			if !cancel {
				var err error
				if replicas, err = parseBrokerList(replicasFlag); err != nil {
					return newUsageError(cmd.CommandPath(), "--replicas: %v", err)
				}
			}
			var req kadm.AlterPartitionAssignmentsReq
			sorted := make([]int32, 0, len(partitions))
			for _, p := range partitions {
				if p < 0 {
					return newUsageError(cmd.CommandPath(), "--partition must not be negative, got %d", p)
				}
				req.Assign(topic, int32(p), replicas)
				sorted = append(sorted, int32(p))
			}
			sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			if keepReplicaCount {
				ctx = kadm.ForbidAlterRf(ctx)
			}
			if throttle > 0 {
				if err := setReassignmentThrottles(ctx, admin, topic, sorted, replicas, throttle); err != nil {
					return err
				}
			}
			responses, err := admin.AlterPartitionAssignments(ctx, req)
			if err != nil {
				return fmt.Errorf("reassign %q: %w", topic, err)
			}
			var results []reassignedPartition
			for _, p := range sorted {
				r, ok := responses[topic][p]
				if !ok {
					return fmt.Errorf("reassign %s-%d: no answer from the broker", topic, p)
				}
				if err := kafkaError(r.Err, r.ErrMessage); err != nil {
					return fmt.Errorf("reassign %s-%d: %w", topic, p, err)
				}
				results = append(results, reassignedPartition{Topic: topic, Partition: p, Replicas: replicas, Cancelled: cancel})
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, results)
			}
			for _, r := range results {
				if r.Cancelled {
					fmt.Fprintf(out, "Cancelled the reassignment of %s-%d.\n", r.Topic, r.Partition)
				} else {
					fmt.Fprintf(out, "Reassigning %s-%d to replicas %s.\n", r.Topic, r.Partition, joinInt32s(r.Replicas))
				}
			}
			return nil
		},
	}
	flags := cmd.Flags()
	flags.IntSliceVar(&partitions, "partition", nil, "partition to move, repeatable or comma-separated")
	flags.StringVar(&replicasFlag, "replicas", "", "the new replicas as broker ids, preferred leader first: 2,3,4")
	flags.BoolVar(&cancel, "cancel", false, "cancel the reassignment in progress instead")
	flags.BoolVar(&keepReplicaCount, "disallow-replication-factor-change", false, "refuse a target with another number of replicas")
	flags.Int64Var(&throttle, "throttle", 0, "limit the move's replication to this many bytes a second")
	flags.BoolVar(&verify, "verify", false, "once the topic's moves are done, remove their throttles")
	return cmd
}

// parseBrokerList parses "2,3,4" into broker ids.
func parseBrokerList(s string) ([]int32, error) {
	var ids []int32
	for _, part := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(part), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not a broker id", part)
		}
		ids = append(ids, int32(id))
	}
	return ids, nil
}

// ongoingReassignment is one row of "topics reassignments".
type ongoingReassignment struct {
	Topic            string  `json:"topic"`
	Partition        int32   `json:"partition"`
	Replicas         []int32 `json:"replicas"`
	AddingReplicas   []int32 `json:"adding_replicas"`
	RemovingReplicas []int32 `json:"removing_replicas"`
}

func newTopicsReassignmentsCommand(opts *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reassignments [TOPIC...]",
		Short: "List partition reassignments in progress",
		Example: `  samsa topics reassignments
  samsa topics reassignments orders -o json`,
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			details, err := admin.ListTopics(ctx, args...)
			if err != nil {
				return fmt.Errorf("list topics: %w", err)
			}
			set := kadm.TopicsSet{}
			for _, d := range details.Sorted() {
				if d.Err != nil {
					return fmt.Errorf("topic %q: %w", d.Topic, d.Err)
				}
				for _, p := range d.Partitions {
					set.Add(d.Topic, p.Partition)
				}
			}
			listed, err := admin.ListPartitionReassignments(ctx, set)
			if err != nil {
				return fmt.Errorf("list partition reassignments: %w", err)
			}
			rows := []ongoingReassignment{}
			for _, r := range listed.Sorted() {
				rows = append(rows, ongoingReassignment{Topic: r.Topic, Partition: r.Partition,
					Replicas: nonNil(r.Replicas), AddingReplicas: nonNil(r.AddingReplicas), RemovingReplicas: nonNil(r.RemovingReplicas)})
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, rows)
			}
			if len(rows) == 0 {
				_, err := fmt.Fprintln(out, "No partition reassignments in progress.")
				return err
			}
			t := newTable(out, "TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING")
			for _, r := range rows {
				t.row(r.Topic, r.Partition, joinInt32s(r.Replicas), orDash(joinInt32s(r.AddingReplicas)), orDash(joinInt32s(r.RemovingReplicas)))
			}
			return t.flush()
		},
	}
	return cmd
}
