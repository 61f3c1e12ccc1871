package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configResourceKind is what a configs command reads or changes.
type configResourceKind int

const (
	resourceTopic configResourceKind = iota
	resourceBroker
	// resourceBrokerDefaults is the cluster-wide broker default, the
	// resource Kafka names with an empty broker id.
	resourceBrokerDefaults
	// resourceClientMetrics is a client-metrics subscription (KIP-714),
	// kafka-configs' entity type client-metrics.
	resourceClientMetrics
)

func (k configResourceKind) String() string {
	switch k {
	case resourceTopic:
		return "topic"
	case resourceBroker:
		return "broker"
	case resourceClientMetrics:
		return "client-metrics"
	default:
		return "broker defaults"
	}
}

// configTarget is the --topic / --broker / --broker-defaults /
// --client-metrics choice.
type configTarget struct {
	topic          string
	broker         int32
	brokerDefaults bool
	clientMetrics  string
}

func (t *configTarget) addFlags(cmd *cobra.Command, opts *globalOptions) {
	flags := cmd.Flags()
	flags.StringVar(&t.topic, "topic", "", "the topic whose configs to use")
	flags.Int32Var(&t.broker, "broker", -1, "the broker (node id) whose configs to use")
	flags.BoolVar(&t.brokerDefaults, "broker-defaults", false, "the cluster-wide default broker configs")
	flags.StringVar(&t.clientMetrics, "client-metrics", "", "the client-metrics subscription (metrics, interval.ms, match) whose configs to use")
	_ = cmd.RegisterFlagCompletionFunc("topic", completeTopicNames(opts))
}

// resolve returns which resource the flags name, and its Kafka name.
func (t *configTarget) resolve(cmd *cobra.Command) (configResourceKind, string, error) {
	chosen := 0
	for _, set := range []bool{cmd.Flags().Changed("topic"), cmd.Flags().Changed("broker"), t.brokerDefaults, cmd.Flags().Changed("client-metrics")} {
		if set {
			chosen++
		}
	}
	if chosen != 1 {
		return 0, "", newUsageError(cmd.CommandPath(), "give exactly one of --topic, --broker, --broker-defaults or --client-metrics")
	}
	switch {
	case cmd.Flags().Changed("client-metrics"):
		if t.clientMetrics == "" {
			return 0, "", newUsageError(cmd.CommandPath(), "--client-metrics needs a subscription name")
		}
		return resourceClientMetrics, t.clientMetrics, nil
	case cmd.Flags().Changed("topic"):
		if t.topic == "" {
			return 0, "", newUsageError(cmd.CommandPath(), "--topic needs a topic name")
		}
		return resourceTopic, t.topic, nil
	case t.brokerDefaults:
		return resourceBrokerDefaults, "", nil
	default:
		if t.broker < 0 {
			return 0, "", newUsageError(cmd.CommandPath(), "--broker must be a node id of 0 or more, got %d", t.broker)
		}
		return resourceBroker, strconv.Itoa(int(t.broker)), nil
	}
}

func newConfigsCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("configs", "Describe and change topic and broker configs",
		`  samsa configs describe --topic orders
  samsa configs alter --topic orders --set retention.ms=3600000 --delete cleanup.policy
  samsa configs describe --broker 1 --all
  samsa configs alter --client-metrics producers --set metrics=org.apache.kafka.producer. --set interval.ms=60000
  samsa configs list --type client-metrics`)
	cmd.AddCommand(newConfigsDescribeCommand(opts), newConfigsAlterCommand(opts), newConfigsListCommand(opts))
	return cmd
}

// describedConfig is one JSON entry of "configs describe".
type describedConfig struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

// describedConfigs is the JSON shape of "configs describe".
type describedConfigs struct {
	Resource string            `json:"resource"`
	Name     string            `json:"name"`
	Configs  []describedConfig `json:"configs"`
}

func newConfigsDescribeCommand(opts *globalOptions) *cobra.Command {
	var (
		target configTarget
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show a topic's, broker's or client-metrics subscription's configs",
		Long: `Show the configs set dynamically on a topic or broker. With --all, show every
config with its effective value and where that value comes from.`,
		Example: `  samsa configs describe --topic orders
  samsa configs describe --topic orders --all -o json
  samsa configs describe --broker 1
  samsa configs describe --broker-defaults
  samsa configs describe --client-metrics producers`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, err := target.resolve(cmd)
			if err != nil {
				return err
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			var resources kadm.ResourceConfigs
			switch kind {
			case resourceClientMetrics:
				resources, err = describeClientMetrics(ctx, opts, name)
			case resourceTopic:
				resources, err = admin.DescribeTopicConfigs(ctx, name)
			case resourceBroker:
				resources, err = admin.DescribeBrokerConfigs(ctx, target.broker)
			default:
				resources, err = admin.DescribeBrokerConfigs(ctx)
			}
			label := resourceLabel(kind, name)
			if err != nil {
				return fmt.Errorf("describe %s configs: %w", label, err)
			}
			resource, err := resources.On(name, nil)
			if err == nil {
				err = kafkaError(resource.Err, resource.ErrMessage)
			}
			if err != nil {
				return fmt.Errorf("describe %s configs: %w", label, err)
			}
			result := describedConfigs{Resource: kind.String(), Name: name, Configs: []describedConfig{}}
			for _, c := range resource.Configs {
				if !all && !isDynamicSource(c.Source) {
					continue
				}
				result.Configs = append(result.Configs, describedConfig{
					Name:      c.Key,
					Value:     c.Value,
					Source:    c.Source.String(),
					Sensitive: c.Sensitive,
				})
			}
			sort.Slice(result.Configs, func(i, j int) bool { return result.Configs[i].Name < result.Configs[j].Name })
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, result)
			}
			t := newTable(out, "NAME", "VALUE", "SOURCE")
			for _, c := range result.Configs {
				value := "null"
				switch {
				case c.Sensitive:
					value = "(sensitive)"
				case c.Value != nil:
					value = *c.Value
				}
				t.row(c.Name, value, c.Source)
			}
			return t.flush()
		},
	}
	target.addFlags(cmd, opts)
	cmd.Flags().BoolVar(&all, "all", false, "show every config, not only the dynamically set ones")
	return cmd
}

func newConfigsAlterCommand(opts *globalOptions) *cobra.Command {
	var (
		target     configTarget
		setFlags   []string
		deleteKeys []string
	)
	cmd := &cobra.Command{
		Use:   "alter",
		Short: "Set or remove topic, broker or client-metrics configs",
		Long: `Set or remove dynamic configs with IncrementalAlterConfigs. Removing a config
restores its default (or the broker-level value, for a topic).`,
		Example: `  samsa configs alter --topic orders --set retention.ms=3600000
  samsa configs alter --topic orders --delete retention.ms
  samsa configs alter --broker 1 --set log.retention.ms=86400000
  samsa configs alter --broker-defaults --set log.retention.ms=86400000
  samsa configs alter --client-metrics producers --set metrics=org.apache.kafka.producer. \
      --set interval.ms=60000 --set match=client_software_name=apache-kafka-java`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, err := target.resolve(cmd)
			if err != nil {
				return err
			}
			if len(setFlags) == 0 && len(deleteKeys) == 0 {
				return newUsageError(cmd.CommandPath(), "nothing to alter: give --set or --delete")
			}
			alters, err := configAlterations(setFlags, deleteKeys, "--set", "--delete")
			if err != nil {
				return usageError{err: err, commandPath: cmd.CommandPath()}
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			if kind == resourceClientMetrics {
				err = alterClientMetrics(ctx, opts, name, alters)
			} else {
				err = alterConfigs(ctx, admin, kind, name, alters)
			}
			if err != nil {
				return err
			}
			resource := kind.String()
			if kind == resourceBrokerDefaults {
				resource, name = "broker", "defaults"
			}
			return printAltered(cmd, opts, resource, name, []string{describeAlterations(alters)})
		},
	}
	target.addFlags(cmd, opts)
	cmd.Flags().StringArrayVar(&setFlags, "set", nil, "set a config key=value, repeatable")
	cmd.Flags().StringArrayVar(&deleteKeys, "delete", nil, "remove a config, repeatable")
	return cmd
}

// alterConfigs applies alters to one resource with IncrementalAlterConfigs
// and returns the resource's Kafka error, if any.
func alterConfigs(ctx context.Context, admin *kadm.Client, kind configResourceKind, name string, alters []kadm.AlterConfig) error {
	var (
		responses kadm.AlterConfigsResponses
		err       error
	)
	switch kind {
	case resourceTopic:
		responses, err = admin.AlterTopicConfigs(ctx, alters, name)
	case resourceBroker:
		broker, _ := strconv.Atoi(name)
		responses, err = admin.AlterBrokerConfigs(ctx, alters, int32(broker))
	default:
		responses, err = admin.AlterBrokerConfigs(ctx, alters)
	}
	label := resourceLabel(kind, name)
	if err != nil {
		return fmt.Errorf("alter %s configs: %w", label, err)
	}
	response, err := responses.On(name, nil)
	if err == nil {
		err = kafkaError(response.Err, response.ErrMessage)
	}
	if err != nil {
		return fmt.Errorf("alter %s configs: %w", label, err)
	}
	return nil
}

func resourceLabel(kind configResourceKind, name string) string {
	if kind == resourceBrokerDefaults {
		return "broker defaults"
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// isDynamicSource reports whether a config value was set at runtime rather
// than coming from a default or the broker's static properties.
func isDynamicSource(source kmsg.ConfigSource) bool {
	switch source {
	case kmsg.ConfigSourceDynamicTopicConfig,
		kmsg.ConfigSourceDynamicBrokerConfig,
		kmsg.ConfigSourceDynamicDefaultBrokerConfig,
		kmsg.ConfigSourceDynamicBrokerLoggerConfig,
		kmsg.ConfigSourceClientMetricsConfig,
		kmsg.ConfigSourceGroupConfig:
		return true
	}
	return false
}

func configValueForDisplay(c kadm.Config) string {
	if c.Sensitive {
		return "(sensitive)"
	}
	if c.Value == nil {
		return "null"
	}
	return *c.Value
}
