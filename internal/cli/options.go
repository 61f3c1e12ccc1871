package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// defaultBootstrapServers is where the client commands look for a
	// cluster when neither --bootstrap-server nor SAMSA_BROKERS says.
	defaultBootstrapServers = "127.0.0.1:9092"
	// bootstrapServersEnv overrides the default bootstrap servers.
	bootstrapServersEnv = "SAMSA_BROKERS"
	// defaultRequestTimeout bounds every admin request, like the Java
	// admin client's request.timeout.ms default of 30s.
	defaultRequestTimeout = 30 * time.Second
	// dialTimeoutMax is franz-go's default dial timeout; a shorter
	// --timeout shortens dialing too.
	dialTimeoutMax = 10 * time.Second
	// defaultClientID names the CLI's connections in broker logs and quotas.
	defaultClientID = "samsa-cli"

	outputTable = "table"
	outputJSON  = "json"
)

// globalOptions holds the persistent flags shared by every client command
// and the values resolved from them, the environment and --command-config.
type globalOptions struct {
	bootstrapServers  string
	commandConfigPath string
	output            string
	requestTimeout    time.Duration

	// Resolved by resolve before any command runs.
	seeds    []string
	clientID string
	// securityOpts connect with the --command-config security.protocol.
	securityOpts []kgo.Opt
}

func newGlobalOptions() *globalOptions {
	return &globalOptions{clientID: defaultClientID}
}

func (o *globalOptions) addFlags(root *cobra.Command) {
	flags := root.PersistentFlags()
	flags.StringVarP(&o.bootstrapServers, "bootstrap-server", "b", defaultBootstrapServers,
		"comma-separated host:port list of brokers to connect to (env "+bootstrapServersEnv+")")
	flags.StringVar(&o.commandConfigPath, "command-config", "",
		"client properties file (supports client.id, request.timeout.ms, bootstrap.servers, security.protocol, ssl.*, sasl.mechanism and sasl.jaas.config)")
	flags.StringVarP(&o.output, "output", "o", outputTable, "output format: table or json")
	flags.DurationVar(&o.requestTimeout, "timeout", defaultRequestTimeout,
		"how long to wait for the cluster to answer each request")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{outputTable, outputJSON}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.MarkPersistentFlagFilename("command-config")
}

// resolve validates the persistent flags and settles where each value comes
// from. Precedence, highest first: the flag, the environment, the
// --command-config file, the built-in default.
func (o *globalOptions) resolve(cmd *cobra.Command) error {
	if o.output != outputTable && o.output != outputJSON {
		return usageError{
			err:         fmt.Errorf("invalid --output %q: must be %q or %q", o.output, outputTable, outputJSON),
			commandPath: cmd.CommandPath(),
		}
	}
	var props clientProperties
	if o.commandConfigPath != "" {
		var warnings []string
		var err error
		props, warnings, err = loadClientProperties(o.commandConfigPath)
		if err != nil {
			return err
		}
		for _, w := range warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
		}
	}
	if props.clientID != "" {
		o.clientID = props.clientID
	}
	securityOpts, err := props.securityOpts()
	if err != nil {
		return err
	}
	o.securityOpts = securityOpts
	// consume shadows --timeout with its idle timeout, so the persistent
	// flag may not be this command's; ask the flag set that owns it.
	timeoutFlag := cmd.Root().PersistentFlags().Lookup("timeout")
	if !timeoutFlag.Changed && props.requestTimeout > 0 {
		o.requestTimeout = props.requestTimeout
	}
	if o.requestTimeout <= 0 {
		return usageError{err: fmt.Errorf("--timeout must be positive, got %s", o.requestTimeout), commandPath: cmd.CommandPath()}
	}

	servers := o.bootstrapServers
	if !cmd.Flags().Changed("bootstrap-server") {
		if env := os.Getenv(bootstrapServersEnv); env != "" {
			servers = env
		} else if props.bootstrapServers != "" {
			servers = props.bootstrapServers
		}
	}
	o.seeds = nil
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.seeds = append(o.seeds, s)
		}
	}
	if len(o.seeds) == 0 {
		return usageError{err: fmt.Errorf("no bootstrap servers given"), commandPath: cmd.CommandPath()}
	}
	return nil
}

func (o *globalOptions) jsonOutput() bool { return o.output == outputJSON }

// newClient connects a franz-go client to the cluster. Connections are made
// lazily, so this fails only on bad options.
func (o *globalOptions) newClient(extra ...kgo.Opt) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.seeds...),
		kgo.ClientID(o.clientID),
		kgo.DialTimeout(min(o.requestTimeout, dialTimeoutMax)),
	}
	opts = append(opts, o.securityOpts...)
	opts = append(opts, extra...)
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return client, nil
}

// newAdmin returns an admin client; close it with its Close method.
func (o *globalOptions) newAdmin() (*kadm.Client, error) {
	client, err := o.newClient()
	if err != nil {
		return nil, err
	}
	admin := kadm.NewClient(client)
	admin.SetTimeoutMillis(int32(min(o.requestTimeout.Milliseconds(), int64(1<<31-1))))
	return admin, nil
}

// adminSession opens an admin client and a context bounded by --timeout
// for one command; done releases both.
func (o *globalOptions) adminSession(parent context.Context) (*kadm.Client, context.Context, func(), error) {
	admin, err := o.newAdmin()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := o.requestContext(parent)
	return admin, ctx, func() { cancel(); admin.Close() }, nil
}

// clientSession opens a client and a context bounded by --timeout for one
// command; done releases both.
func (o *globalOptions) clientSession(parent context.Context) (*kgo.Client, context.Context, func(), error) {
	client, err := o.newClient()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := o.requestContext(parent)
	return client, ctx, func() { cancel(); client.Close() }, nil
}

// requestContext bounds one admin operation by --timeout.
func (o *globalOptions) requestContext(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, o.requestTimeout)
}

// bootstrapList is the resolved bootstrap servers as the user would type them.
func (o *globalOptions) bootstrapList() string { return strings.Join(o.seeds, ",") }
