// Package cli is the samsa command line: the broker itself (samsa server)
// and the client tools that talk to any Kafka-compatible cluster through
// franz-go (topics, produce, consume, groups, configs, cluster).
//
// Every client command shares the persistent flags defined in options.go,
// prints tables or JSON through output.go, and reports failures as one line
// built by errors.go.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// commandConstructor builds one top-level subcommand. Client commands get
// the shared options; commands that do not talk to a cluster ignore them.
type commandConstructor func(opts *globalOptions) *cobra.Command

// topLevelCommands lists every subcommand of samsa (help sorts them by
// name). To add a command (samsa dump-log, samsa bench, ...), write its
// constructor in its own file and append it here.
var topLevelCommands = []commandConstructor{
	func(*globalOptions) *cobra.Command { return newServerCommand() },
	newTopicsCommand,
	newProduceCommand,
	newConsumeCommand,
	newGroupsCommand,
	newConfigsCommand,
	newACLsCommand,
	newClusterCommand,
	newBenchCommand,
	newDumpLogCommand,
	newCertsCommand,
	newUsersCommand,
	newTokensCommand,
	newQuotasCommand,
}

// Execute runs samsa with the process's arguments and standard streams, and
// exits the process with status 1 if the command failed. The first
// interrupt or SIGTERM cancels the command's context, so long-running
// commands (consume, produce) stop cleanly and print their summary; a
// second one kills the process as usual.
func Execute() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if code != 0 {
		os.Exit(code)
	}
}

// run executes one samsa command line and returns the process exit status.
// A failure is reported on stderr as a single "error: ..." line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts := newGlobalOptions()
	root := newRootCommand(opts, stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, opts.formatError(err))
		return 1
	}
	return 0
}

// newRootCommand builds the whole samsa command tree around opts, writing
// to the given streams.
func newRootCommand(opts *globalOptions, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "samsa",
		Short: "Samsa: a Kafka-compatible event streaming broker and its tools",
		Long: `Samsa is a Kafka-compatible event streaming broker in one binary.

"samsa server" runs a node; the other commands are client tools that work
against Samsa or any Kafka cluster.`,
		Example: `  samsa server
  samsa topics create orders --partitions 3
  printf 'a\nb\n' | samsa produce orders
  samsa consume orders --from-beginning --max-messages 2
  samsa groups describe billing
  samsa -b broker1:9092,broker2:9092 cluster describe`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return opts.resolve(cmd)
		},
	}
	// Set the streams before adding cobra's completion command, which
	// captures the output stream when it is created.
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{err: err, commandPath: cmd.CommandPath()}
	})
	opts.addFlags(root)
	for _, construct := range topLevelCommands {
		root.AddCommand(construct(opts))
	}
	addBuiltinCommandExamples(root)
	return root
}

// addBuiltinCommandExamples creates cobra's own help and completion
// commands now rather than at execution, so they too carry examples.
func addBuiltinCommandExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "help":
			cmd.Example = "  samsa help topics create"
		case "completion":
			cmd.Example = `  source <(samsa completion bash)
  samsa completion zsh > "${fpath[1]}/_samsa"`
			for _, shell := range cmd.Commands() {
				shell.Example = fmt.Sprintf("  samsa completion %s", shell.Name())
			}
		}
	}
}
