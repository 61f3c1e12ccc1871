package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// userPasswordBytesMax bounds a password read from stdin.
const userPasswordBytesMax = 4096

func newUsersCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("users", "List, create and delete SCRAM users",
		`  samsa users list
  samsa users create alice --mechanism SCRAM-SHA-512 --password alice-secret
  printf 'alice-secret\n' | samsa users create alice
  samsa users delete alice --mechanism SCRAM-SHA-512`)
	cmd.AddCommand(newUsersListCommand(opts), newUsersCreateCommand(opts), newUsersDeleteCommand(opts))
	return cmd
}

// listedUser is one row of "users list".
type listedUser struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

func newUsersListCommand(opts *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "list [user...]",
		Short:   "List SCRAM users and their mechanisms (never a password or key)",
		Example: "  samsa users list\n  samsa users list alice -o json",
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			described, err := admin.DescribeUserSCRAMs(ctx, args...)
			if err != nil {
				return fmt.Errorf("describe users: %w", err)
			}
			if err := described.Error(); err != nil {
				return fmt.Errorf("describe users: %w", err)
			}
			var users []listedUser
			for _, d := range described.Sorted() {
				for _, info := range d.CredInfos {
					users = append(users, listedUser{User: d.User, Mechanism: info.Mechanism.String(), Iterations: info.Iterations})
				}
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				if users == nil {
					users = []listedUser{}
				}
				return writeJSON(out, users)
			}
			t := newTable(out, "USER", "MECHANISM", "ITERATIONS")
			for _, u := range users {
				t.row(u.User, u.Mechanism, u.Iterations)
			}
			return t.flush()
		},
	}
}

func parseScramMechanism(cmd *cobra.Command, name string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(name) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, newUsageError(cmd.CommandPath(), "--mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got %q", name)
}

func newUsersCreateCommand(opts *globalOptions) *cobra.Command {
	var mechanism, password string
	var iterations int32
	cmd := &cobra.Command{
		Use:   "create <user>",
		Short: "Create a SCRAM user or change its password (AlterUserScramCredentials)",
		Long: `Create a SCRAM user, or set a new password for an existing one. The password
comes from --password, or else from the first line of stdin, which keeps it
out of the process list and the shell history. The client salts it; the
cluster stores only the derived keys.`,
		Example: "  samsa users create alice --password alice-secret\n  samsa users create alice --mechanism SCRAM-SHA-256 --iterations 8192 < password.txt",
		Args:    argsNamed("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := parseScramMechanism(cmd, mechanism)
			if err != nil {
				return err
			}
			if password == "" {
				reader := bufio.NewReaderSize(cmd.InOrStdin(), userPasswordBytesMax)
				line, err := reader.ReadString('\n')
				if err != nil && line == "" {
					return newUsageError(cmd.CommandPath(), "no password: give --password or a line on stdin")
				}
				password = strings.TrimRight(line, "\r\n")
			}
			if password == "" {
				return newUsageError(cmd.CommandPath(), "the password must not be empty")
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			altered, err := admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: args[0], Mechanism: m, Iterations: iterations, Password: password}})
			if err != nil {
				return fmt.Errorf("create user %s: %w", args[0], err)
			}
			if err := altered.Error(); err != nil {
				return fmt.Errorf("create user %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Set %s credentials of user %s.\n", m, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&mechanism, "mechanism", "SCRAM-SHA-512", "SCRAM-SHA-256 or SCRAM-SHA-512")
	cmd.Flags().Int32Var(&iterations, "iterations", 4096, "PBKDF2 iterations, 4096 to 16384")
	cmd.Flags().StringVar(&password, "password", "", "the password (default: read a line from stdin)")
	return cmd
}

func newUsersDeleteCommand(opts *globalOptions) *cobra.Command {
	var mechanism string
	cmd := &cobra.Command{
		Use:     "delete <user>",
		Short:   "Delete a SCRAM user's credentials for one mechanism",
		Example: "  samsa users delete alice --mechanism SCRAM-SHA-512",
		Args:    argsNamed("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := parseScramMechanism(cmd, mechanism)
			if err != nil {
				return err
			}
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			altered, err := admin.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: args[0], Mechanism: m}}, nil)
			if err != nil {
				return fmt.Errorf("delete user %s: %w", args[0], err)
			}
			if err := altered.Error(); err != nil {
				return fmt.Errorf("delete user %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s credentials of user %s.\n", m, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&mechanism, "mechanism", "SCRAM-SHA-512", "SCRAM-SHA-256 or SCRAM-SHA-512")
	return cmd
}
