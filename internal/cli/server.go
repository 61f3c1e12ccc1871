package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

func newServerCommand() *cobra.Command {
	var configPath string
	var overrides []string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a Samsa node (broker and controller)",
		Long: `Run a Samsa node. With no flags it starts a single combined broker and
controller on 127.0.0.1:9092 with data in ./samsa-data, the schema
registry on http://127.0.0.1:8081, the REST proxy on
http://127.0.0.1:8082 and the web console on http://127.0.0.1:8080.`,
		Example: `  samsa server
  samsa server --config server.properties
  samsa server --override listeners=PLAINTEXT://127.0.0.1:19092 --override log.dirs=/tmp/samsa`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if configPath == "" && len(overrides) == 0 {
				if _, set := os.LookupEnv(config.EnvName("schema.registry.listeners")); !set {
					// The zero-config dev node serves the schema registry on
					// Confluent's default port.
					overrides = []string{"schema.registry.listeners=http://127.0.0.1:8081"}
				}
				if _, set := os.LookupEnv(config.EnvName("http.proxy.listeners")); !set {
					// And the REST proxy on Confluent's.
					overrides = append(overrides, "http.proxy.listeners=http://127.0.0.1:8082")
				}
				if _, set := os.LookupEnv(config.EnvName("console.listener")); !set {
					// ... and the web console.
					overrides = append(overrides, "console.listener=http://127.0.0.1:8080")
				}
			}
			cfg, warnings, err := config.Load(configPath, overrides, os.Environ())
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(os.Stderr, "warning:", w)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The first signal starts a graceful shutdown; unregistering then
			// lets a second one kill the process as usual.
			context.AfterFunc(ctx, stop)
			err = server.Run(ctx, cfg)
			if _, isNetErr := errors.AsType[*net.OpError](err); isNetErr {
				// A listener could not bind. Report it as it is, not as the
				// client commands' "cannot reach the cluster".
				return withHint(errors.New(err.Error()), "another process may hold the address; change listeners or metrics.listener")
			}
			return err
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path to a server.properties file")
	cmd.Flags().StringArrayVar(&overrides, "override", nil, "override a config key (key=value), repeatable")
	return cmd
}
