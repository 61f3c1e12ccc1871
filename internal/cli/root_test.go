package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// allCommands walks the command tree.
func allCommands(cmd *cobra.Command) []*cobra.Command {
	commands := []*cobra.Command{cmd}
	for _, child := range cmd.Commands() {
		commands = append(commands, allCommands(child)...)
	}
	return commands
}

func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	root := newRootCommand(newGlobalOptions(), strings.NewReader(""), io.Discard, io.Discard)
	for _, cmd := range allCommands(root) {
		if cmd.Hidden {
			continue
		}
		path := strings.Fields(cmd.CommandPath())[1:]
		out := mustRun(t, "", "", append(path, "--help")...).stdout
		if !strings.Contains(out, "Examples:") {
			t.Errorf("%q --help has no Examples section:\n%s", cmd.CommandPath(), out)
		}
	}
}

func TestRootUsageErrors(t *testing.T) {
	t.Parallel()
	mustFail(t, "", "", []string{"frobnicate"}, `unknown command "frobnicate"`, "samsa --help")
	mustFail(t, "", "", []string{"topics", "frobnicate"}, `unknown command "frobnicate" for "samsa topics"`, "samsa topics --help")
	mustFail(t, "", "", []string{"topics", "list", "--bogus"}, "unknown flag: --bogus", "samsa topics list --help")
	mustFail(t, "", "", []string{"-o", "xml", "topics", "list"}, `invalid --output "xml"`)
	mustFail(t, "", "", []string{"--timeout", "0s", "topics", "list"}, "--timeout must be positive")
	out := mustRun(t, "", "", "topics").stdout
	if !strings.Contains(out, "Available Commands:") {
		t.Errorf("bare 'samsa topics' does not print help:\n%s", out)
	}
}

func TestShellCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if out := mustRun(t, "", "", "completion", shell).stdout; !strings.Contains(out, "samsa") {
			t.Errorf("completion %s output does not mention samsa", shell)
		}
	}
	out := mustRun(t, "", "", "__complete", "produce", "t", "--compression", "").stdout
	if !strings.Contains(out, "zstd") {
		t.Errorf("completion of --compression: %q", out)
	}
}

// The bootstrap servers come from the flag, else SAMSA_BROKERS, else the
// --command-config file. Not parallel: it sets an environment variable.
func TestBootstrapFromEnvironment(t *testing.T) {
	bootstrap := startTestBroker(t)
	t.Setenv(bootstrapServersEnv, bootstrap)
	if out := mustRun(t, "", "", "cluster", "describe").stdout; !strings.Contains(out, "Cluster ID:") {
		t.Errorf("cluster describe via %s:\n%s", bootstrapServersEnv, out)
	}
	// The flag wins over the environment.
	address := closedAddress(t)
	mustFail(t, address, "", []string{"cluster", "describe"}, address)
}

func TestCommandConfig(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	good := write("good.properties", "# client settings\nclient.id = audit-tool\nrequest.timeout.ms: 20000\n"+
		"security.protocol=PLAINTEXT\nlinger.ms=5\nacks=all\n")
	result := mustRun(t, bootstrap, "", "--command-config", good, "cluster", "describe")
	for _, key := range []string{"linger.ms", "acks"} {
		if !strings.Contains(result.stderr, "warning: --command-config: ignoring unsupported client property "+key) {
			t.Errorf("no warning for %s: %q", key, result.stderr)
		}
	}
	if strings.Contains(result.stderr, "client.id") || strings.Contains(result.stderr, "request.timeout.ms") {
		t.Errorf("warned about a supported property: %q", result.stderr)
	}

	// request.timeout.ms sets the request timeout unless --timeout is given,
	// and bootstrap.servers is used when neither flag nor env says.
	quick := write("quick.properties", "request.timeout.ms=300\nbootstrap.servers="+silentBroker(t)+"\n")
	if os.Getenv(bootstrapServersEnv) == "" {
		mustFail(t, "", "", []string{"--command-config", quick, "topics", "list"}, "timed out after 300ms")
	}
	mustFail(t, silentBroker(t), "", []string{"--command-config", quick, "--timeout", "200ms", "topics", "list"}, "timed out after 200ms")

	mustFail(t, bootstrap, "", []string{"--command-config", write("sasl.properties", "security.protocol=SASL_SSL\n"), "topics", "list"},
		"security.protocol=SASL_SSL needs sasl.jaas.config")
	mustFail(t, bootstrap, "", []string{"--command-config", write("protocol.properties", "security.protocol=KERBEROS\n"), "topics", "list"},
		"security.protocol=KERBEROS is not one of")
	mustFail(t, bootstrap, "", []string{"--command-config", write("bad.properties", "request.timeout.ms=soon\n"), "topics", "list"},
		"request.timeout.ms must be a positive integer")
	mustFail(t, bootstrap, "", []string{"--command-config", write("junk.properties", "just words\n"), "topics", "list"},
		"expected key=value")
	mustFail(t, bootstrap, "", []string{"--command-config", filepath.Join(dir, "absent"), "topics", "list"}, "no such file")
}

// TestExecuteExitStatus runs Execute in a child process, as main does, to
// check the exit status and the single error line.
func TestExecuteExitStatus(t *testing.T) {
	if args := os.Getenv("SAMSA_CLI_TEST_EXECUTE"); args != "" {
		os.Args = append([]string{"samsa"}, strings.Fields(args)...)
		Execute()
		os.Exit(0)
	}
	t.Parallel()
	for _, tc := range []struct {
		args     string
		wantCode int
		wantErr  string
	}{
		{"topics --help", 0, ""},
		{"--bootstrap-server " + closedAddress(t) + " topics list", 1, "error: list topics: cannot reach the cluster"},
		{"frobnicate", 1, `error: unknown command "frobnicate" for "samsa"`},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExecuteExitStatus$")
		cmd.Env = append(os.Environ(), "SAMSA_CLI_TEST_EXECUTE="+tc.args)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if exitErr, ok := err.(*exec.ExitError); ok {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.wantCode {
			t.Errorf("samsa %s: exit %d, want %d (stderr %q)", tc.args, code, tc.wantCode, stderr.String())
		}
		if tc.wantErr != "" && (!strings.HasPrefix(stderr.String(), tc.wantErr) || strings.Count(stderr.String(), "\n") != 1) {
			t.Errorf("samsa %s: stderr %q, want one line starting %q", tc.args, stderr.String(), tc.wantErr)
		}
	}
}
