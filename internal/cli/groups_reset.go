package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// resetStrategy is how "groups reset-offsets" picks each new offset.
type resetStrategy struct {
	toEarliest bool
	toLatest   bool
	toOffset   int64
	toDatetime string
	shiftBy    int64

	// Parsed from the flags by resolve.
	kind       string // earliest, latest, offset, datetime or shift
	datetimeMs int64
}

func (s *resetStrategy) addFlags(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.BoolVar(&s.toEarliest, "to-earliest", false, "reset to each partition's log start offset")
	flags.BoolVar(&s.toLatest, "to-latest", false, "reset to each partition's log end offset")
	flags.Int64Var(&s.toOffset, "to-offset", 0, "reset to this offset (clamped to the partition's start and end)")
	flags.StringVar(&s.toDatetime, "to-datetime", "", "reset to the first record at or after this RFC3339 time")
	flags.Int64Var(&s.shiftBy, "shift-by", 0, "move each committed offset by this many (negative moves back)")
}

func (s *resetStrategy) resolve(cmd *cobra.Command) error {
	chosen := map[string]bool{
		"earliest": s.toEarliest,
		"latest":   s.toLatest,
		"offset":   cmd.Flags().Changed("to-offset"),
		"datetime": cmd.Flags().Changed("to-datetime"),
		"shift":    cmd.Flags().Changed("shift-by"),
	}
	s.kind = ""
	for kind, set := range chosen {
		if !set {
			continue
		}
		if s.kind != "" {
			return newUsageError(cmd.CommandPath(), "give only one of --to-earliest, --to-latest, --to-offset, --to-datetime and --shift-by")
		}
		s.kind = kind
	}
	switch s.kind {
	case "":
		return newUsageError(cmd.CommandPath(), "give one of --to-earliest, --to-latest, --to-offset, --to-datetime or --shift-by")
	case "offset":
		if s.toOffset < 0 {
			return newUsageError(cmd.CommandPath(), "--to-offset must be 0 or more, got %d", s.toOffset)
		}
	case "datetime":
		t, err := time.Parse(time.RFC3339Nano, s.toDatetime)
		if err != nil {
			return newUsageError(cmd.CommandPath(), "invalid --to-datetime %q: expected RFC3339 such as 2024-05-01T12:00:00Z", s.toDatetime)
		}
		s.datetimeMs = t.UnixMilli()
	}
	return nil
}

// topicSelection is the partitions given by --topic T or --topic T:0,1;
// a topic with no listed partitions means all of them.
type topicSelection map[string][]int32

func parseTopicSelection(specs []string) (topicSelection, error) {
	selection := make(topicSelection)
	for _, spec := range specs {
		topic, list, hasPartitions := strings.Cut(spec, ":")
		if topic == "" {
			return nil, fmt.Errorf("invalid --topic %q: expected TOPIC or TOPIC:PARTITION,PARTITION", spec)
		}
		if _, dup := selection[topic]; dup {
			return nil, fmt.Errorf("--topic %s given more than once", topic)
		}
		selection[topic] = nil
		if !hasPartitions {
			continue
		}
		for _, field := range strings.Split(list, ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(field), 10, 32)
			if err != nil || p < 0 {
				return nil, fmt.Errorf("invalid --topic %q: %q is not a partition number", spec, field)
			}
			selection[topic] = append(selection[topic], int32(p))
		}
	}
	return selection, nil
}

// offsetReset is one partition's planned move, the JSON and table row of
// "groups reset-offsets"; current_offset is -1 with no commit.
type offsetReset struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset int64  `json:"current_offset"`
	NewOffset     int64  `json:"new_offset"`
}

type resetPlan struct {
	Group      string        `json:"group"`
	Executed   bool          `json:"executed"`
	Partitions []offsetReset `json:"partitions"`
}

func newGroupsResetOffsetsCommand(opts *globalOptions) *cobra.Command {
	var (
		strategy   resetStrategy
		topicSpecs []string
		allTopics  bool
		dryRun     bool
		execute    bool
	)
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP",
		Short: "Move a consumer group's committed offsets",
		Long: `Plan new committed offsets for a group and, with --execute, commit them.
Without --execute (or with --dry-run) the plan is only printed. The group
must have no active members; stop its consumers first.

Offsets are clamped to each partition's log start and end.`,
		Example: `  samsa groups reset-offsets billing --topic orders --to-earliest
  samsa groups reset-offsets billing --topic orders --to-earliest --execute
  samsa groups reset-offsets billing --topic orders:0,1 --to-offset 1000 --execute
  samsa groups reset-offsets billing --all-topics --to-datetime 2024-05-01T00:00:00Z --execute
  samsa groups reset-offsets billing --topic orders --shift-by -100 --execute`,
		Args:              argsNamed("GROUP"),
		ValidArgsFunction: completeGroupNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			if err := strategy.resolve(cmd); err != nil {
				return err
			}
			if dryRun && execute {
				return newUsageError(cmd.CommandPath(), "--dry-run and --execute cannot be combined")
			}
			if (len(topicSpecs) == 0) == !allTopics {
				return newUsageError(cmd.CommandPath(), "give --topic (repeatable) or --all-topics")
			}
			selection, err := parseTopicSelection(topicSpecs)
			if err != nil {
				return usageError{err: err, commandPath: cmd.CommandPath()}
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()

			plan, err := planOffsetReset(ctx, admin, group, selection, &strategy)
			if err != nil {
				return fmt.Errorf("reset offsets of group %q: %w", group, err)
			}
			if execute {
				if err := commitResetPlan(ctx, admin, plan); err != nil {
					return fmt.Errorf("reset offsets of group %q: %w", group, err)
				}
				plan.Executed = true
			}
			return printResetPlan(cmd, opts, plan)
		},
	}
	strategy.addFlags(cmd)
	flags := cmd.Flags()
	flags.StringArrayVar(&topicSpecs, "topic", nil, "topic to reset, optionally with partitions (orders:0,1), repeatable")
	flags.BoolVar(&allTopics, "all-topics", false, "reset every topic the group has committed offsets for")
	flags.BoolVar(&dryRun, "dry-run", false, "only print the plan (the default)")
	flags.BoolVar(&execute, "execute", false, "commit the planned offsets")
	_ = cmd.RegisterFlagCompletionFunc("topic", completeTopicNames(opts))
	return cmd
}

func planOffsetReset(ctx context.Context, admin *kadm.Client, group string, selection topicSelection, strategy *resetStrategy) (resetPlan, error) {
	plan := resetPlan{Group: group, Partitions: []offsetReset{}}
	state, err := groupState(ctx, admin, group)
	if err != nil {
		return plan, fmt.Errorf("describe group: %w", err)
	}
	if state != "Empty" && state != "Dead" {
		return plan, withHint(fmt.Errorf("group is %s; offsets can only be reset while it has no members", state),
			"stop the group's consumers, then retry")
	}
	committed, err := admin.FetchOffsets(ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return plan, fmt.Errorf("fetch committed offsets: %w", err)
	}

	partitions, err := selectedPartitions(ctx, admin, selection, committed)
	if err != nil {
		return plan, err
	}
	if len(partitions) == 0 {
		return plan, nil
	}
	topics := partitions.Topics()
	starts, err := admin.ListStartOffsets(ctx, topics...)
	if err != nil {
		return plan, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := admin.ListEndOffsets(ctx, topics...)
	if err != nil {
		return plan, fmt.Errorf("list end offsets: %w", err)
	}
	var atTime kadm.ListedOffsets
	if strategy.kind == "datetime" {
		if atTime, err = admin.ListOffsetsAfterMilli(ctx, strategy.datetimeMs, topics...); err != nil {
			return plan, fmt.Errorf("list offsets by time: %w", err)
		}
	}

	var planErr error
	partitions.Sorted().Each(func(topic string, partition int32) {
		if planErr != nil {
			return
		}
		start, startErr := listedOffset(starts, topic, partition)
		end, endErr := listedOffset(ends, topic, partition)
		if err := errors.Join(startErr, endErr); err != nil {
			planErr = err
			return
		}
		current := int64(-1)
		if c, ok := committed.Lookup(topic, partition); ok && c.Err == nil {
			current = c.At
		}
		var target int64
		switch strategy.kind {
		case "earliest":
			target = start
		case "latest":
			target = end
		case "offset":
			target = strategy.toOffset
		case "shift":
			if current < 0 {
				planErr = fmt.Errorf("%s partition %d has no committed offset to shift", topic, partition)
				return
			}
			target = current + strategy.shiftBy
		case "datetime":
			target, err = listedOffset(atTime, topic, partition)
			if err != nil {
				planErr = err
				return
			}
			if target < 0 { // no record at or after the time
				target = end
			}
		}
		target = max(start, min(target, end))
		plan.Partitions = append(plan.Partitions, offsetReset{Topic: topic, Partition: partition, CurrentOffset: current, NewOffset: target})
	})
	return plan, planErr
}

// selectedPartitions resolves --topic flags against the cluster, or with
// --all-topics (an empty selection) returns the committed partitions.
func selectedPartitions(ctx context.Context, admin *kadm.Client, selection topicSelection, committed kadm.OffsetResponses) (kadm.TopicsSet, error) {
	set := make(kadm.TopicsSet)
	if len(selection) == 0 {
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				set.Add(o.Topic, o.Partition)
			}
		})
		return set, nil
	}
	topics := make([]string, 0, len(selection))
	for topic := range selection {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	metadata, err := admin.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("look up topics: %w", err)
	}
	for _, topic := range topics {
		detail := metadata.Topics[topic]
		if detail.Err != nil {
			return nil, fmt.Errorf("topic %q: %w", topic, detail.Err)
		}
		wanted := selection[topic]
		if len(wanted) == 0 {
			wanted = detail.Partitions.Numbers()
		}
		for _, p := range wanted {
			if _, ok := detail.Partitions[p]; !ok {
				return nil, withHint(fmt.Errorf("topic %q has no partition %d", topic, p),
					"see 'samsa topics describe %s'", topic)
			}
			set.Add(topic, p)
		}
	}
	return set, nil
}

func listedOffset(listed kadm.ListedOffsets, topic string, partition int32) (int64, error) {
	o, ok := listed.Lookup(topic, partition)
	if !ok {
		return 0, fmt.Errorf("no offsets listed for %s partition %d", topic, partition)
	}
	if o.Err != nil {
		return 0, fmt.Errorf("list offsets for %s partition %d: %w", topic, partition, o.Err)
	}
	return o.Offset, nil
}

func commitResetPlan(ctx context.Context, admin *kadm.Client, plan resetPlan) error {
	if len(plan.Partitions) == 0 {
		return nil
	}
	offsets := make(kadm.Offsets)
	for _, r := range plan.Partitions {
		offsets.Add(kadm.Offset{Topic: r.Topic, Partition: r.Partition, At: r.NewOffset, LeaderEpoch: -1})
	}
	responses, err := admin.CommitOffsets(ctx, plan.Group, offsets)
	if err != nil {
		return fmt.Errorf("commit offsets: %w", err)
	}
	if err := responses.Error(); err != nil {
		return fmt.Errorf("commit offsets: %w", err)
	}
	return nil
}

func printResetPlan(cmd *cobra.Command, opts *globalOptions, plan resetPlan) error {
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		return writeJSON(out, plan)
	}
	t := newTable(out, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET")
	for _, r := range plan.Partitions {
		t.row(plan.Group, r.Topic, r.Partition, offsetOrDash(r.CurrentOffset), r.NewOffset)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if plan.Executed {
		_, err := fmt.Fprintf(out, "Committed new offsets for %s of group %q.\n", countOf(len(plan.Partitions), "partition"), plan.Group)
		return err
	}
	_, err := fmt.Fprintln(cmd.ErrOrStderr(), "Dry run: nothing was committed; add --execute to commit these offsets.")
	return err
}

// groupState returns a group's state; offsets may be reset only when it has
// no members (Empty), or does not exist yet (reported as Dead).
func groupState(ctx context.Context, admin *kadm.Client, group string) (state string, err error) {
	described, err := admin.DescribeGroups(ctx, group)
	if err != nil {
		return "", err
	}
	d, ok := described[group]
	if !ok {
		return "", fmt.Errorf("group %q missing from the response", group)
	}
	if errors.Is(d.Err, kerr.GroupIDNotFound) {
		return "Dead", nil
	}
	if d.Err != nil {
		return "", kafkaError(d.Err, d.ErrMessage)
	}
	return d.State, nil
}
