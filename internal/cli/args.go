package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// argsNamed accepts exactly the named positional arguments, and says which
// one is missing rather than cobra's "accepts 1 arg(s)".
func argsNamed(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return newUsageError(cmd.CommandPath(), "missing %s argument", names[len(args)])
		case len(args) > len(names):
			return newUsageError(cmd.CommandPath(), "unexpected argument %q", args[len(names)])
		}
		return nil
	}
}

// argsAtLeastOne accepts one or more positional arguments called name.
func argsAtLeastOne(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return newUsageError(cmd.CommandPath(), "missing %s argument", name)
		}
		return nil
	}
}

// argsNone rejects positional arguments.
func argsNone(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return newUsageError(cmd.CommandPath(), "unexpected argument %q", args[0])
	}
	return nil
}

// newParentCommand builds a command that only groups subcommands, such as
// "samsa topics". Run bare, it prints its help; with an unknown subcommand,
// it fails instead of silently printing help.
func newParentCommand(use, short, example string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return newUsageError(cmd.CommandPath(), "unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}

// parseKeyValue splits a "key=value" flag value. The value may be empty and
// may itself contain '='.
func parseKeyValue(flag, s string) (key, value string, err error) {
	key, value, found := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !found || key == "" {
		return "", "", fmt.Errorf("invalid %s %q: expected key=value", flag, s)
	}
	return key, value, nil
}

// parseConfigs turns repeated "--config k=v" flags into Kafka's config map.
// A key given twice is an error rather than last-one-wins, so a typo cannot
// silently discard a setting.
func parseConfigs(flag string, values []string) (map[string]*string, error) {
	configs := make(map[string]*string, len(values))
	for _, s := range values {
		key, value, err := parseKeyValue(flag, s)
		if err != nil {
			return nil, err
		}
		if _, dup := configs[key]; dup {
			return nil, fmt.Errorf("%s %s given more than once", flag, key)
		}
		configs[key] = &value
	}
	return configs, nil
}

// unescape interprets the backslash escapes \n, \t, \r and \\ that users
// type in separators and format strings.
func unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r").Replace(s)
}
