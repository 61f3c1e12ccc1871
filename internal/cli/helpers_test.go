package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cliResult is what one samsa invocation printed and returned.
type cliResult struct {
	stdout string
	stderr string
	code   int
}

// testCommandTimeout bounds one CLI invocation in tests, so a hang fails the
// test instead of the whole run.
const testCommandTimeout = 60 * time.Second

// runCLI runs samsa with args against bootstrap (omitted if empty), feeding
// stdin, and returns its output and exit status.
func runCLI(t *testing.T, bootstrap, stdin string, args ...string) cliResult {
	t.Helper()
	if bootstrap != "" {
		args = append([]string{"--bootstrap-server", bootstrap}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testCommandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// mustRun runs samsa and fails the test unless it succeeds.
func mustRun(t *testing.T, bootstrap, stdin string, args ...string) cliResult {
	t.Helper()
	result := runCLI(t, bootstrap, stdin, args...)
	if result.code != 0 {
		t.Fatalf("samsa %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), result.code, result.stdout, result.stderr)
	}
	return result
}

// mustFail runs samsa, expects it to fail with exactly one "error:" line on
// stderr containing every one of wants, and returns that line.
func mustFail(t *testing.T, bootstrap, stdin string, args []string, wants ...string) string {
	t.Helper()
	result := runCLI(t, bootstrap, stdin, args...)
	if result.code == 0 {
		t.Fatalf("samsa %s: succeeded, want failure\nstdout:\n%s", strings.Join(args, " "), result.stdout)
	}
	lines := strings.Split(strings.TrimRight(result.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "error: ") {
		t.Fatalf("samsa %s: last stderr line %q does not start with \"error: \"\nstderr:\n%s", strings.Join(args, " "), last, result.stderr)
	}
	for _, line := range lines[:len(lines)-1] {
		if strings.HasPrefix(line, "error: ") {
			t.Fatalf("samsa %s: more than one error line:\n%s", strings.Join(args, " "), result.stderr)
		}
	}
	for _, want := range wants {
		if !strings.Contains(last, want) {
			t.Errorf("samsa %s: error line %q does not contain %q", strings.Join(args, " "), last, want)
		}
	}
	return last
}

// decodeJSON parses a command's -o json output into v.
func decodeJSON(t *testing.T, output string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(output), v); err != nil {
		t.Fatalf("decode JSON output: %v\n%s", err, output)
	}
}

// createTopic creates a topic through the CLI.
func createTopic(t *testing.T, bootstrap, topic string, partitions int) {
	t.Helper()
	mustRun(t, bootstrap, "", "topics", "create", topic, "--partitions", itoa(partitions), "--replication-factor", "1")
}

func itoa(n int) string { return strconv.Itoa(n) }

// eventually polls check until it returns true or the deadline passes.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closedAddress returns a local address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	listener.Close()
	return addr
}

// tableRows returns the whitespace-split rows of a table's output whose
// first cell is first.
func tableRows(output, first string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(output, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && fields[0] == first {
			rows = append(rows, fields)
		}
	}
	return rows
}
