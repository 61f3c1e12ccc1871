package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionFilter selects partitions in "topics describe".
type partitionFilter struct {
	underReplicated bool // ISR smaller than the replica set
	unavailable     bool // no leader, or a leader that is not a live broker
}

func (f partitionFilter) active() bool { return f.underReplicated || f.unavailable }

// matches reports whether p passes the filter; with both filters set a
// partition matching either is kept, as Kafka's tool does.
func (f partitionFilter) matches(p kadm.PartitionDetail, liveBrokers map[int32]bool) bool {
	if !f.active() {
		return true
	}
	if f.underReplicated && len(p.ISR) < len(p.Replicas) {
		return true
	}
	return f.unavailable && (p.Leader < 0 || !liveBrokers[p.Leader] || p.Err != nil)
}

// describedTopic is the JSON shape of "topics describe".
type describedTopic struct {
	Topic             string               `json:"topic"`
	ID                string               `json:"id"`
	Internal          bool                 `json:"internal"`
	ReplicationFactor int                  `json:"replication_factor"`
	Configs           map[string]string    `json:"configs"`
	Partitions        []describedPartition `json:"partitions"`
}

type describedPartition struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	Error           string  `json:"error,omitempty"`
	// Tiered is set on partitions of topics with remote.storage.enable
	// (topics_describe_tiered.go).
	Tiered *tieredOffsets `json:"tiered,omitempty"`
}

func newTopicsDescribeCommand(opts *globalOptions) *cobra.Command {
	var (
		filter          partitionFilter
		includeInternal bool
	)
	cmd := &cobra.Command{
		Use:   "describe [TOPIC...]",
		Short: "Show topics' partitions, leaders, replicas, ISR and config overrides",
		Long: `Show each topic's partitions with their leader, replicas and in-sync replicas,
and the topic's configs that differ from the defaults. With no TOPIC, every
topic is described. --under-replicated and --unavailable list only the
partitions in trouble, and print no topic summary.`,
		Example: `  samsa topics describe orders
  samsa topics describe --under-replicated
  samsa topics describe orders payments -o json`,
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			metadata, err := admin.Metadata(ctx, args...)
			if err != nil {
				return fmt.Errorf("describe topics: %w", err)
			}
			if len(args) == 0 && !includeInternal {
				metadata.Topics.FilterInternal()
			}
			for _, topic := range metadata.Topics.Sorted() {
				if topic.Err != nil {
					return fmt.Errorf("describe topic %q: %w", topic.Topic, topic.Err)
				}
			}
			configs, err := topicConfigOverrides(ctx, admin, metadata.Topics.Names())
			if err != nil {
				return err
			}
			described := buildDescribedTopics(metadata, configs, filter)
			if err := addTieredOffsets(ctx, admin, described); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, described)
			}
			return printDescribedTopics(cmd, described, filter)
		},
	}
	flags := cmd.Flags()
	flags.BoolVar(&filter.underReplicated, "under-replicated", false, "only partitions whose ISR is smaller than their replica set")
	flags.BoolVar(&filter.unavailable, "unavailable", false, "only partitions without a live leader")
	flags.BoolVar(&includeInternal, "internal", false, "include internal topics when describing all topics")
	return cmd
}

// topicConfigOverrides returns, per topic, the configs set on the topic
// itself (source DYNAMIC_TOPIC_CONFIG), the ones Kafka's tool shows.
func topicConfigOverrides(ctx context.Context, admin *kadm.Client, topics []string) (map[string]map[string]string, error) {
	overrides := make(map[string]map[string]string, len(topics))
	if len(topics) == 0 {
		return overrides, nil
	}
	resources, err := admin.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topic configs: %w", err)
	}
	for _, resource := range resources {
		if resource.Err != nil {
			// A topic deleted between the two requests is reported
			// by its missing configs, not as a failure.
			if errors.Is(resource.Err, kerr.UnknownTopicOrPartition) {
				continue
			}
			return nil, fmt.Errorf("describe topic %q configs: %w", resource.Name, kafkaError(resource.Err, resource.ErrMessage))
		}
		values := make(map[string]string)
		for _, config := range resource.Configs {
			if config.Source == kmsg.ConfigSourceDynamicTopicConfig {
				values[config.Key] = configValueForDisplay(config)
			}
		}
		overrides[resource.Name] = values
	}
	return overrides, nil
}

func buildDescribedTopics(metadata kadm.Metadata, configs map[string]map[string]string, filter partitionFilter) []describedTopic {
	live := make(map[int32]bool, len(metadata.Brokers))
	for _, b := range metadata.Brokers {
		live[b.NodeID] = true
	}
	described := make([]describedTopic, 0, len(metadata.Topics))
	for _, topic := range metadata.Topics.Sorted() {
		d := describedTopic{
			Topic:             topic.Topic,
			ID:                kafkaUUID(topic.ID),
			Internal:          topic.IsInternal,
			ReplicationFactor: topic.Partitions.NumReplicas(),
			Configs:           configs[topic.Topic],
			Partitions:        []describedPartition{},
		}
		if d.Configs == nil {
			d.Configs = map[string]string{}
		}
		for _, p := range topic.Partitions.Sorted() {
			if !filter.matches(p, live) {
				continue
			}
			dp := describedPartition{
				Partition:       p.Partition,
				Leader:          p.Leader,
				LeaderEpoch:     p.LeaderEpoch,
				Replicas:        nonNil(p.Replicas),
				ISR:             nonNil(p.ISR),
				OfflineReplicas: nonNil(p.OfflineReplicas),
			}
			if p.Err != nil {
				dp.Error = p.Err.Error()
			}
			d.Partitions = append(d.Partitions, dp)
		}
		if filter.active() && len(d.Partitions) == 0 {
			continue
		}
		described = append(described, d)
	}
	return described
}

func printDescribedTopics(cmd *cobra.Command, described []describedTopic, filter partitionFilter) error {
	out := cmd.OutOrStdout()
	if !filter.active() {
		summary := newTable(out, "TOPIC", "ID", "PARTITIONS", "REPLICATION-FACTOR", "CONFIGS")
		for _, d := range described {
			summary.row(d.Topic, d.ID, len(d.Partitions), d.ReplicationFactor, orDash(formatConfigMap(d.Configs)))
		}
		if err := summary.flush(); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	columns := []string{"TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "OFFLINE"}
	tiered := anyTiered(described)
	if tiered {
		columns = append(columns, tieredColumns...)
	}
	partitions := newTable(out, columns...)
	for _, d := range described {
		for _, p := range d.Partitions {
			leader := fmt.Sprint(p.Leader)
			if p.Leader < 0 {
				leader = "none"
			}
			row := []any{d.Topic, p.Partition, leader, joinInt32s(p.Replicas), joinInt32s(p.ISR), orDash(joinInt32s(p.OfflineReplicas))}
			if tiered {
				row = append(row, p.Tiered.cells()...)
			}
			partitions.row(row...)
		}
	}
	return partitions.flush()
}

func formatConfigMap(configs map[string]string) string {
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + configs[k]
	}
	return strings.Join(parts, ",")
}

func nonNil(values []int32) []int32 {
	if values == nil {
		return []int32{}
	}
	return values
}
