package kafkatools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// toolTimeout bounds one tool run; a tool that hangs fails its test.
const toolTimeout = 90 * time.Second

// needTools skips unless SAMSA_KAFKA_TOOLS=1 (compat/run.sh sets it, after
// Maven resolved Kafka's jars into compat/java/target), so `go test ./...`
// does not start a JVM forty times; with it set, a missing build fails.
func needTools(t *testing.T) {
	t.Helper()
	if os.Getenv("SAMSA_KAFKA_TOOLS") != "1" {
		t.Skip("Kafka's tools run with SAMSA_KAFKA_TOOLS=1 (make compat sets it)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatal("no java on PATH: compat/run.sh installs openjdk-17-jdk-headless")
	}
	if fi, err := os.Stat(filepath.Join("..", "java", "target", "classpath.txt")); err != nil || fi.Size() == 0 {
		t.Fatal("Kafka's tools are not built: run mvn -q package in compat/java (compat/run.sh does)")
	}
}

type toolResult struct {
	stdout, stderr string
	err            error
}

// tool runs one of Kafka's tools through compat/java/kafka-tool.sh.
func tool(t *testing.T, stdin string, name string, args ...string) toolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "java", "kafka-tool.sh"), append([]string{name}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	line := strings.Join(args, " ")
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	t.Logf("%s %s: %v in %s", name, line, err, time.Since(start).Round(10*time.Millisecond))
	return toolResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// mustTool runs a tool that must succeed and returns its stdout.
func mustTool(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	r := tool(t, stdin, name, args...)
	if r.err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), r.err, r.stdout, tail(r.stderr, 40))
	}
	return r.stdout
}

func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("%s: output lacks %q:\n%s", what, w, out)
		}
	}
}

// waitTool reruns a tool until check accepts its output.
func waitTool(t *testing.T, limit time.Duration, check func(out string) error, name string, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r := tool(t, "", name, args...)
		err := r.err
		if err == nil {
			if err = check(r.stdout); err == nil {
				return r.stdout
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, r.stdout, tail(r.stderr, 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// offsets parses kafka-get-offsets lines (topic:partition:offset).
func offsets(t *testing.T, out, topic string) map[int]int64 {
	t.Helper()
	got := map[int]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		parts := strings.Split(line, ":")
		if len(parts) != 3 || parts[0] != topic {
			t.Fatalf("kafka-get-offsets line %q, want %s:PARTITION:OFFSET", line, topic)
		}
		p, err1 := strconv.Atoi(parts[1])
		o, err2 := strconv.ParseInt(parts[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("kafka-get-offsets line %q", line)
		}
		got[p] = o
	}
	return got
}

func sum(m map[int]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

var spaces = regexp.MustCompile(`\s+`)

// tableRows parses a table into rows keyed by its header's column names:
// whitespace-aligned (kafka-consumer-groups) or tab-separated
// (kafka-transactions, kafka-metadata-quorum), where a last column may be
// empty.
func tableRows(out, firstColumn string) []map[string]string {
	var header []string
	var rows []map[string]string
	split := func(line string) []string {
		if strings.Contains(line, "\t") {
			var fs []string
			for _, f := range strings.Split(strings.TrimRight(line, "\t\n "), "\t") {
				fs = append(fs, strings.TrimSpace(f))
			}
			return fs
		}
		return spaces.Split(strings.TrimSpace(line), -1)
	}
	for _, line := range strings.Split(out, "\n") {
		fields := split(line)
		if len(fields) == 0 || fields[0] == "" {
			continue
		}
		if fields[0] == firstColumn {
			header = fields
			continue
		}
		if header == nil || len(fields) > len(header) {
			continue
		}
		row := map[string]string{}
		for i, h := range header {
			if i < len(fields) {
				row[h] = fields[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func keyValueLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "key-%02d:value-%04d\n", i%10, i)
	}
	return b.String()
}
