package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// "cluster features upgrade" finalizes feature levels with UpdateFeatures,
// as kafka-features upgrade does (kraft.version=1 enables voter changes).

func newClusterFeaturesCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("features", "Finalize cluster feature levels",
		`  samsa cluster features upgrade --feature kraft.version=1`)
	cmd.AddCommand(newClusterFeaturesUpgradeCommand(opts))
	return cmd
}

func newClusterFeaturesUpgradeCommand(opts *globalOptions) *cobra.Command {
	var features []string
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade features to the given levels (UpdateFeatures)",
		Example: `  samsa cluster features upgrade --feature kraft.version=1
  samsa cluster features upgrade --feature transaction.version=2 --feature group.version=1`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			req := kmsg.NewPtrUpdateFeaturesRequest()
			req.TimeoutMillis = 60000
			for _, f := range features {
				name, levelText, ok := strings.Cut(f, "=")
				level, err := strconv.ParseInt(levelText, 10, 16)
				if !ok || name == "" || err != nil {
					return fmt.Errorf("--feature %q is not name=level", f)
				}
				u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
				u.Feature, u.MaxVersionLevel, u.UpgradeType = name, int16(level), 1
				req.FeatureUpdates = append(req.FeatureUpdates, u)
			}
			client, ctx, done, err := opts.clientSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			resp, err := req.RequestWith(ctx, client)
			if err != nil {
				return err
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return kafkaError(err, stringOrEmpty(resp.ErrorMessage))
			}
			for _, r := range resp.Results {
				if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
					return kafkaError(err, stringOrEmpty(r.ErrorMessage))
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Upgraded %s.\n", strings.Join(features, ", "))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&features, "feature", nil, "name=level to finalize (repeatable, required)")
	cmd.MarkFlagRequired("feature")
	return cmd
}
