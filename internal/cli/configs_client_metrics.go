package cli

// Client-metrics subscriptions (KIP-714) in "samsa configs": Kafka's
// kafka-configs --entity-type client-metrics and kafka-client-metrics.sh.
// A subscription is a config resource of type CLIENT_METRICS named by the
// subscription, with the keys metrics, interval.ms and match; removing all
// three removes it.

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeClientMetrics describes one subscription's configs.
func describeClientMetrics(ctx context.Context, opts *globalOptions, name string) (kadm.ResourceConfigs, error) {
	client, err := opts.newClient()
	if err != nil {
		return nil, err
	}
	defer client.Close()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return nil, err
	}
	var out kadm.ResourceConfigs
	for _, rr := range resp.Resources {
		rc := kadm.ResourceConfig{Name: rr.ResourceName, Err: kerr.ErrorForCode(rr.ErrorCode), ErrMessage: derefString(rr.ErrorMessage)}
		for _, c := range rr.Configs {
			rc.Configs = append(rc.Configs, kadm.Config{Key: c.Name, Value: c.Value, Source: c.Source, Sensitive: c.IsSensitive})
		}
		out = append(out, rc)
	}
	return out, nil
}

// alterClientMetrics applies alters to one subscription with
// IncrementalAlterConfigs and returns its Kafka error, if any.
func alterClientMetrics(ctx context.Context, opts *globalOptions, name string, alters []kadm.AlterConfig) error {
	label := resourceLabel(resourceClientMetrics, name)
	client, err := opts.newClient()
	if err != nil {
		return err
	}
	defer client.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	for _, a := range alters {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = a.Name, a.Value
		c.Op = kmsg.IncrementalAlterConfigOp(a.Op)
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, client)
	if err == nil && len(resp.Resources) != 1 {
		err = fmt.Errorf("%d resources answered, want 1", len(resp.Resources))
	}
	if err == nil {
		rr := resp.Resources[0]
		err = kafkaError(kerr.ErrorForCode(rr.ErrorCode), derefString(rr.ErrorMessage))
	}
	if err != nil {
		return fmt.Errorf("alter %s configs: %w", label, err)
	}
	return nil
}

// configResourceTypes are the --type names of "configs list", as Kafka's
// ConfigResource.Type names them.
var configResourceTypes = map[string]kadm.ConfigResourceType{
	"topic":          kadm.ConfigResourceType(kmsg.ConfigResourceTypeTopic),
	"broker":         kadm.ConfigResourceType(kmsg.ConfigResourceTypeBroker),
	"broker-logger":  kadm.ConfigResourceType(kmsg.ConfigResourceTypeBrokerLogger),
	"client-metrics": kadm.ConfigResourceClientMetrics,
	"group":          kadm.ConfigResourceType(kmsg.ConfigResourceTypeGroupConfig),
}

// listedConfigResource is one JSON entry of "configs list".
type listedConfigResource struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

func newConfigsListCommand(opts *globalOptions) *cobra.Command {
	var types []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the config resources: topics, brokers, broker loggers, client-metrics subscriptions, groups",
		Long: `List config resources with ListConfigResources (KIP-1142): every kind, or those
--type names (topic, broker, broker-logger, client-metrics, group). With
--type client-metrics it lists the client-metrics subscriptions, as
kafka-client-metrics.sh --list does.`,
		Example: `  samsa configs list
  samsa configs list --type client-metrics -o json`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			var wanted []kadm.ConfigResourceType
			for _, name := range types {
				t, ok := configResourceTypes[name]
				if !ok {
					return newUsageError(cmd.CommandPath(), "unknown --type %q: one of topic, broker, broker-logger, client-metrics, group", name)
				}
				wanted = append(wanted, t)
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			listed, err := admin.ListConfigResources(ctx, wanted...)
			if err == nil {
				err = kafkaError(listed.Err, "")
			}
			if err != nil {
				return fmt.Errorf("list config resources: %w", err)
			}
			names := map[kadm.ConfigResourceType]string{}
			for name, t := range configResourceTypes {
				names[t] = name
			}
			result := []listedConfigResource{}
			for _, r := range listed.Resources {
				result = append(result, listedConfigResource{Type: names[r.Type], Name: r.Name})
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, result)
			}
			t := newTable(out, "TYPE", "NAME")
			for _, r := range result {
				t.row(r.Type, r.Name)
			}
			return t.flush()
		},
	}
	cmd.Flags().StringSliceVar(&types, "type", nil, "list only these resource types ("+strings.Join([]string{"topic", "broker", "broker-logger", "client-metrics", "group"}, ", ")+"), repeatable")
	return cmd
}
