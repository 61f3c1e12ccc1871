package cli

import (
	"encoding/base64"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// "cluster quorum add" and "cluster quorum remove" change the metadata
// quorum's voters with AddRaftVoter and RemoveRaftVoter (KIP-853), as
// kafka-metadata-quorum add-controller and remove-controller do. The
// cluster must run kraft.version 1.

func newClusterQuorumAddCommand(opts *globalOptions) *cobra.Command {
	var (
		id                   int32
		directoryID          string
		controller, listener string
		timeoutMs            int32
	)
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a controller to the metadata quorum's voters (AddRaftVoter)",
		Long: `Add a running controller, started with controller.quorum.bootstrap.servers,
to the voters of the metadata quorum. The leader first replicates the metadata
log to it and promotes it once it has caught up. The cluster must run
kraft.version 1 (samsa features upgrade --feature kraft.version=1).`,
		Example: `  samsa cluster quorum add --id 4 --controller ctrl4:9093
  samsa cluster quorum add --id 4 --controller ctrl4:9093 --directory-id pbvuBlaTTwKRxS5NLJwRFQ`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := parseDirectoryID(directoryID)
			if err != nil {
				return err
			}
			host, portText, err := net.SplitHostPort(controller)
			if err != nil {
				return fmt.Errorf("--controller %q: %w", controller, err)
			}
			port, err := strconv.ParseUint(portText, 10, 16)
			if err != nil || port == 0 {
				return fmt.Errorf("--controller %q: bad port", controller)
			}
			req := kmsg.NewPtrAddRaftVoterRequest()
			req.VoterID, req.VoterDirectoryID, req.TimeoutMillis, req.AckWhenCommitted = id, dir, timeoutMs, true
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = listener, host, uint16(port)
			req.Listeners = append(req.Listeners, l)
			return sendVoterChange(cmd, opts, req, func(r kmsg.Response) (int16, *string) {
				resp := r.(*kmsg.AddRaftVoterResponse)
				return resp.ErrorCode, resp.ErrorMessage
			}, fmt.Sprintf("Added controller %d to the quorum's voters.", id))
		},
	}
	cmd.Flags().Int32Var(&id, "id", -1, "node.id of the controller to add (required)")
	cmd.Flags().StringVar(&controller, "controller", "", "host:port of its controller listener (required)")
	cmd.Flags().StringVar(&listener, "listener", "CONTROLLER", "name of its controller listener")
	cmd.Flags().StringVar(&directoryID, "directory-id", "", "its metadata log directory id (base64 UUID); none if empty")
	cmd.Flags().Int32Var(&timeoutMs, "timeout-ms", 60000, "how long the leader waits for the controller to catch up")
	cmd.MarkFlagRequired("id")
	cmd.MarkFlagRequired("controller")
	return cmd
}

func newClusterQuorumRemoveCommand(opts *globalOptions) *cobra.Command {
	var (
		id          int32
		directoryID string
	)
	cmd := &cobra.Command{
		Use:   "remove",
		Short: "Remove a controller from the metadata quorum's voters (RemoveRaftVoter)",
		Long: `Remove a voter from the metadata quorum. A leader that removes itself steps
down once the change commits. The cluster must run kraft.version 1.`,
		Example: `  samsa cluster quorum remove --id 4`,
		Args:    argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := parseDirectoryID(directoryID)
			if err != nil {
				return err
			}
			req := kmsg.NewPtrRemoveRaftVoterRequest()
			req.VoterID, req.VoterDirectoryID = id, dir
			return sendVoterChange(cmd, opts, req, func(r kmsg.Response) (int16, *string) {
				resp := r.(*kmsg.RemoveRaftVoterResponse)
				return resp.ErrorCode, resp.ErrorMessage
			}, fmt.Sprintf("Removed controller %d from the quorum's voters.", id))
		},
	}
	cmd.Flags().Int32Var(&id, "id", -1, "node.id of the voter to remove (required)")
	cmd.Flags().StringVar(&directoryID, "directory-id", "", "its metadata log directory id (base64 UUID); any if empty")
	cmd.MarkFlagRequired("id")
	return cmd
}

// sendVoterChange sends req to the cluster (a broker forwards it to the
// active controller) and reports the outcome.
func sendVoterChange(cmd *cobra.Command, opts *globalOptions, req kmsg.Request, result func(kmsg.Response) (int16, *string), done string) error {
	client, ctx, release, err := opts.clientSession(cmd.Context())
	if err != nil {
		return err
	}
	defer release()
	resp, err := client.Request(ctx, req)
	if err != nil {
		return err
	}
	code, message := result(resp)
	if err := kerr.ErrorForCode(code); err != nil {
		return kafkaError(err, stringOrEmpty(message))
	}
	if opts.jsonOutput() {
		return writeJSON(cmd.OutOrStdout(), map[string]string{"result": done})
	}
	fmt.Fprintln(cmd.OutOrStdout(), done)
	return nil
}

// parseDirectoryID parses Kafka's base64 (URL-safe, unpadded) UUID; "" is
// the zero id.
func parseDirectoryID(s string) ([16]byte, error) {
	var id [16]byte
	if s == "" {
		return id, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("--directory-id %q is not a base64 UUID", s)
	}
	copy(id[:], b)
	return id, nil
}
