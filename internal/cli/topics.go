package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func newTopicsCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("topics", "List, create, describe, alter and delete topics",
		`  samsa topics list
  samsa topics create orders --partitions 6 --replication-factor 3 --config retention.ms=86400000
  samsa topics describe orders
  samsa topics alter orders --partitions 12
  samsa topics reassign orders --partition 0 --replicas 2,3,4
  samsa topics reassignments
  samsa topics delete orders`)
	cmd.AddCommand(
		newTopicsListCommand(opts),
		newTopicsCreateCommand(opts),
		newTopicsDescribeCommand(opts),
		newTopicsAlterCommand(opts),
		newTopicsReassignCommand(opts),
		newTopicsReassignmentsCommand(opts),
		newTopicsDeleteCommand(opts),
	)
	return cmd
}

// topicSummary is one row of "topics list".
type topicSummary struct {
	Topic             string `json:"topic"`
	ID                string `json:"id"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Internal          bool   `json:"internal"`
}

func newTopicsListCommand(opts *globalOptions) *cobra.Command {
	var includeInternal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Example: `  samsa topics list
  samsa topics list --internal -o json`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			list := admin.ListTopics
			if includeInternal {
				list = admin.ListTopicsWithInternal
			}
			details, err := list(ctx)
			if err != nil {
				return fmt.Errorf("list topics: %w", err)
			}
			summaries := make([]topicSummary, 0, len(details))
			for _, d := range details.Sorted() {
				if d.Err != nil {
					return fmt.Errorf("list topics: topic %q: %w", d.Topic, d.Err)
				}
				summaries = append(summaries, topicSummary{
					Topic:             d.Topic,
					ID:                kafkaUUID(d.ID),
					Partitions:        len(d.Partitions),
					ReplicationFactor: d.Partitions.NumReplicas(),
					Internal:          d.IsInternal,
				})
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, summaries)
			}
			t := newTable(out, "TOPIC", "PARTITIONS", "REPLICATION-FACTOR")
			for _, s := range summaries {
				t.row(s.Topic, s.Partitions, s.ReplicationFactor)
			}
			return t.flush()
		},
	}
	cmd.Flags().BoolVar(&includeInternal, "internal", false, "include internal topics such as __consumer_offsets")
	return cmd
}

// createdTopic is the JSON result of "topics create".
type createdTopic struct {
	Topic             string `json:"topic"`
	ID                string `json:"id"`
	Partitions        int32  `json:"partitions"`
	ReplicationFactor int16  `json:"replication_factor"`
	Created           bool   `json:"created"`
}

func newTopicsCreateCommand(opts *globalOptions) *cobra.Command {
	var (
		partitions        int32
		replicationFactor int16
		configFlags       []string
		ifNotExists       bool
	)
	cmd := &cobra.Command{
		Use:   "create TOPIC",
		Short: "Create a topic",
		Long: `Create a topic. Without --partitions or --replication-factor the broker's
num.partitions and default.replication.factor apply.`,
		Example: `  samsa topics create orders
  samsa topics create orders --partitions 6 --replication-factor 3
  samsa topics create audit --config retention.ms=604800000 --config cleanup.policy=compact`,
		Args: argsNamed("TOPIC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			if cmd.Flags().Changed("partitions") && partitions < 1 {
				return newUsageError(cmd.CommandPath(), "--partitions must be at least 1, got %d", partitions)
			}
			if cmd.Flags().Changed("replication-factor") && replicationFactor < 1 {
				return newUsageError(cmd.CommandPath(), "--replication-factor must be at least 1, got %d", replicationFactor)
			}
			configs, err := parseConfigs("--config", configFlags)
			if err != nil {
				return usageError{err: err, commandPath: cmd.CommandPath()}
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			response, err := admin.CreateTopic(ctx, partitions, replicationFactor, configs, topic)
			result := createdTopic{Topic: topic, Created: err == nil}
			switch {
			case err == nil:
			case ifNotExists && errors.Is(err, kerr.TopicAlreadyExists):
			default:
				return fmt.Errorf("create topic %q: %w", topic, kafkaError(err, response.ErrMessage))
			}
			result.ID = kafkaUUID(response.ID)
			result.Partitions = response.NumPartitions
			result.ReplicationFactor = response.ReplicationFactor
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, result)
			}
			if !result.Created {
				_, err = fmt.Fprintf(out, "Topic %q already exists.\n", topic)
				return err
			}
			_, err = fmt.Fprintf(out, "Created topic %q with %s and replication factor %d.\n",
				topic, countOf(int(result.Partitions), "partition"), result.ReplicationFactor)
			return err
		},
	}
	flags := cmd.Flags()
	flags.Int32Var(&partitions, "partitions", -1, "number of partitions (default: the broker's num.partitions)")
	flags.Int16Var(&replicationFactor, "replication-factor", -1, "replicas per partition (default: the broker's default.replication.factor)")
	flags.StringArrayVar(&configFlags, "config", nil, "topic config key=value, repeatable")
	flags.BoolVar(&ifNotExists, "if-not-exists", false, "succeed if the topic already exists")
	return cmd
}

func newTopicsAlterCommand(opts *globalOptions) *cobra.Command {
	var (
		partitions    int
		setFlags      []string
		deleteConfigs []string
	)
	cmd := &cobra.Command{
		Use:   "alter TOPIC",
		Short: "Add partitions to a topic or change its configs",
		Long: `Add partitions to a topic (--partitions is the new total, which can only
grow) or change its configs with IncrementalAlterConfigs.`,
		Example: `  samsa topics alter orders --partitions 12
  samsa topics alter orders --config retention.ms=3600000 --delete-config cleanup.policy`,
		Args:              argsNamed("TOPIC"),
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			alterPartitions := cmd.Flags().Changed("partitions")
			if !alterPartitions && len(setFlags) == 0 && len(deleteConfigs) == 0 {
				return newUsageError(cmd.CommandPath(), "nothing to alter: give --partitions, --config or --delete-config")
			}
			if alterPartitions && partitions < 1 {
				return newUsageError(cmd.CommandPath(), "--partitions must be at least 1, got %d", partitions)
			}
			alters, err := configAlterations(setFlags, deleteConfigs, "--config", "--delete-config")
			if err != nil {
				return usageError{err: err, commandPath: cmd.CommandPath()}
			}
			admin, ctx, closeAdmin, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer closeAdmin()

			var done []string
			if alterPartitions {
				responses, err := admin.UpdatePartitions(ctx, partitions, topic)
				if err != nil {
					return fmt.Errorf("alter topic %q partitions: %w", topic, err)
				}
				response, err := responses.On(topic, nil)
				if err == nil {
					err = kafkaError(response.Err, response.ErrMessage)
				}
				if err != nil {
					return fmt.Errorf("alter topic %q partitions: %w", topic, err)
				}
				done = append(done, fmt.Sprintf("partitions set to %d", partitions))
			}
			if len(alters) > 0 {
				if err := alterConfigs(ctx, admin, resourceTopic, topic, alters); err != nil {
					return err
				}
				done = append(done, describeAlterations(alters))
			}
			return printAltered(cmd, opts, "topic", topic, done)
		},
	}
	flags := cmd.Flags()
	flags.IntVar(&partitions, "partitions", 0, "new total number of partitions (can only grow)")
	flags.StringArrayVar(&setFlags, "config", nil, "set a topic config key=value, repeatable")
	flags.StringArrayVar(&deleteConfigs, "delete-config", nil, "remove a topic config override, repeatable")
	return cmd
}

// deletedTopic is one JSON result of "topics delete".
type deletedTopic struct {
	Topic   string `json:"topic"`
	Deleted bool   `json:"deleted"`
}

func newTopicsDeleteCommand(opts *globalOptions) *cobra.Command {
	var ifExists bool
	cmd := &cobra.Command{
		Use:   "delete TOPIC...",
		Short: "Delete topics",
		Example: `  samsa topics delete orders
  samsa topics delete staging-a staging-b --if-exists`,
		Args:              argsAtLeastOne("TOPIC"),
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			responses, err := admin.DeleteTopics(ctx, args...)
			if err != nil {
				return fmt.Errorf("delete topics: %w", err)
			}
			topics := append([]string(nil), args...)
			sort.Strings(topics)
			var results []deletedTopic
			for _, topic := range topics {
				response, err := responses.On(topic, nil)
				if err == nil {
					err = kafkaError(response.Err, response.ErrMessage)
				}
				switch {
				case err == nil:
					results = append(results, deletedTopic{Topic: topic, Deleted: true})
				case ifExists && errors.Is(err, kerr.UnknownTopicOrPartition):
					results = append(results, deletedTopic{Topic: topic})
				default:
					return fmt.Errorf("delete topic %q: %w", topic, err)
				}
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, results)
			}
			for _, r := range results {
				if r.Deleted {
					fmt.Fprintf(out, "Deleted topic %q.\n", r.Topic)
				} else {
					fmt.Fprintf(out, "Topic %q does not exist.\n", r.Topic)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed if a topic does not exist")
	return cmd
}

// alteredResource is the JSON result of the alter commands.
type alteredResource struct {
	Resource string   `json:"resource"`
	Name     string   `json:"name"`
	Changes  []string `json:"changes"`
}

func printAltered(cmd *cobra.Command, opts *globalOptions, resource, name string, changes []string) error {
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		return writeJSON(out, alteredResource{Resource: resource, Name: name, Changes: changes})
	}
	_, err := fmt.Fprintf(out, "Altered %s %q: %s.\n", resource, name, strings.Join(changes, "; "))
	return err
}

// completionTimeoutMax bounds the cluster lookups behind shell completion,
// so pressing tab against a dead broker does not hang the shell.
const completionTimeoutMax = 2 * time.Second

// completeTopicNames completes topic names from the cluster.
func completeTopicNames(opts *globalOptions) cobra.CompletionFunc {
	return completeFromCluster(opts, func(ctx context.Context, admin *kadm.Client) ([]string, error) {
		details, err := admin.ListTopics(ctx)
		return details.Names(), err
	})
}

// completeGroupNames completes consumer group names from the cluster.
func completeGroupNames(opts *globalOptions) cobra.CompletionFunc {
	return completeFromCluster(opts, func(ctx context.Context, admin *kadm.Client) ([]string, error) {
		groups, err := admin.ListGroups(ctx)
		return groups.Groups(), err
	})
}

func completeFromCluster(opts *globalOptions, list func(context.Context, *kadm.Client) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if err := opts.resolve(cmd); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		admin, err := opts.newAdmin()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), min(opts.requestTimeout, completionTimeoutMax))
		defer cancel()
		names, err := list(ctx, admin)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// configAlterations builds IncrementalAlterConfigs operations from the
// repeated set and delete flags.
func configAlterations(setFlags, deleteKeys []string, setFlag, deleteFlag string) ([]kadm.AlterConfig, error) {
	configs, err := parseConfigs(setFlag, setFlags)
	if err != nil {
		return nil, err
	}
	var alters []kadm.AlterConfig
	keys := make([]string, 0, len(configs))
	for key := range configs {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: key, Value: configs[key]})
	}
	for _, key := range deleteKeys {
		key = strings.TrimSpace(key)
		if key == "" {
			return nil, fmt.Errorf("%s needs a config name", deleteFlag)
		}
		if _, alsoSet := configs[key]; alsoSet {
			return nil, fmt.Errorf("config %s is both set and deleted", key)
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: key})
	}
	return alters, nil
}

func describeAlterations(alters []kadm.AlterConfig) string {
	var set, deleted []string
	for _, a := range alters {
		switch a.Op {
		case kadm.SetConfig:
			set = append(set, a.Name+"="+*a.Value)
		case kadm.DeleteConfig:
			deleted = append(deleted, a.Name)
		}
	}
	var parts []string
	if len(set) > 0 {
		parts = append(parts, "set "+strings.Join(set, ", "))
	}
	if len(deleted) > 0 {
		parts = append(parts, "deleted "+strings.Join(deleted, ", "))
	}
	return strings.Join(parts, "; ")
}
