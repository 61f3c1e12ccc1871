package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestProduceConsumeRoundTrip(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "events", 1)

	out := mustRun(t, bootstrap, "user-1:login\nuser-2:logout\nuser-3:login\n",
		"produce", "events", "--parse-key", "--key-separator", ":", "--header", "source=cli", "--header", "v=2").stdout
	if !strings.Contains(out, `Produced 3 records (34 bytes) to "events"`) || !strings.Contains(out, "0 failed") {
		t.Errorf("produce summary: %q", out)
	}

	result := mustRun(t, bootstrap, "", "consume", "events", "--from-beginning", "--max-messages", "3",
		"--format", `%T %p/%o %k=%v [%h]\n`)
	want := "events 0/0 user-1=login [source=cli,v=2]\n" +
		"events 0/1 user-2=logout [source=cli,v=2]\n" +
		"events 0/2 user-3=login [source=cli,v=2]\n"
	if result.stdout != want {
		t.Errorf("consume --format output:\n%s\nwant:\n%s", result.stdout, want)
	}
	if !strings.Contains(result.stderr, "Processed a total of 3 messages") {
		t.Errorf("consume summary on stderr: %q", result.stderr)
	}

	// The default format is the value alone.
	if out := mustRun(t, bootstrap, "", "consume", "events", "--from-beginning", "--max-messages", "1").stdout; out != "login\n" {
		t.Errorf("consume default format: %q", out)
	}

	// JSON lines.
	out = mustRun(t, bootstrap, "", "consume", "events", "--from-beginning", "--max-messages", "3", "-o", "json").stdout
	scanner := bufio.NewScanner(strings.NewReader(out))
	var lines int
	for scanner.Scan() {
		var record consumedRecord
		decodeJSON(t, scanner.Text(), &record)
		if record.Topic != "events" || record.Offset != int64(lines) || record.Key == nil || record.Value == nil ||
			len(record.Headers) != 2 || record.Headers[0] != (consumedHeader{Key: "source", Value: "cli"}) || record.Timestamp <= 0 {
			t.Errorf("JSON line %d: %+v", lines, record)
		}
		lines++
	}
	if lines != 3 {
		t.Errorf("consume -o json printed %d lines, want 3:\n%s", lines, out)
	}

	// An exact offset on one partition.
	out = mustRun(t, bootstrap, "", "consume", "events", "--partition", "0", "--offset", "1", "--max-messages", "2", "--format", `%o:%v\n`).stdout
	if out != "1:logout\n2:login\n" {
		t.Errorf("consume --partition 0 --offset 1: %q", out)
	}

	// --timeout ends an idle consumer with success.
	result = mustRun(t, bootstrap, "", "consume", "events", "--from-beginning", "--timeout", "500ms")
	if strings.Count(result.stdout, "\n") != 3 || !strings.Contains(result.stderr, "Processed a total of 3 messages") {
		t.Errorf("consume --timeout: stdout %q stderr %q", result.stdout, result.stderr)
	}
	result = mustRun(t, bootstrap, "", "consume", "events", "--offset", "latest", "--timeout", "300ms")
	if result.stdout != "" || !strings.Contains(result.stderr, "Processed a total of 0 messages") {
		t.Errorf("consume --offset latest: stdout %q stderr %q", result.stdout, result.stderr)
	}

	// --timestamp in the far future finds nothing; at 0 finds everything.
	future := time.Now().Add(24 * time.Hour).UnixMilli()
	if out := mustRun(t, bootstrap, "", "consume", "events", "--timestamp", itoa(int(future)), "--timeout", "300ms").stdout; out != "" {
		t.Errorf("consume --timestamp future: %q", out)
	}
	if out := mustRun(t, bootstrap, "", "consume", "events", "--timestamp", "0", "--max-messages", "3").stdout; strings.Count(out, "\n") != 3 {
		t.Errorf("consume --timestamp 0: %q", out)
	}

	// read_committed sees non-transactional records.
	if out := mustRun(t, bootstrap, "", "consume", "events", "--from-beginning", "--max-messages", "3",
		"--isolation", "read_committed").stdout; strings.Count(out, "\n") != 3 {
		t.Errorf("consume --isolation read_committed: %q", out)
	}
}

func TestProduceOptions(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "codecs", 2)

	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	for _, codec := range codecs {
		mustRun(t, bootstrap, codec+"\n", "produce", "codecs", "--compression", codec, "--partition", "1")
	}
	mustRun(t, bootstrap, "acks-1\n", "produce", "codecs", "--acks", "1", "--partition", "1")
	mustRun(t, bootstrap, "acks-0\n", "produce", "codecs", "--acks", "0", "--partition", "1")
	mustRun(t, bootstrap, "not-idempotent\n", "produce", "codecs", "--idempotent=false", "--partition", "1")

	file := filepath.Join(t.TempDir(), "input.txt")
	if err := os.WriteFile(file, []byte("from-file\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, bootstrap, "", "produce", "codecs", "--file", file, "--partition", "1")

	want := append(append([]string(nil), codecs...), "acks-1", "acks-0", "not-idempotent", "from-file")
	out := mustRun(t, bootstrap, "", "consume", "codecs", "--partition", "1", "--from-beginning", "--max-messages", itoa(len(want))).stdout
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("consumed %v, want %v", got, want)
	}
	if out := mustRun(t, bootstrap, "", "consume", "codecs", "--partition", "0", "--from-beginning", "--timeout", "300ms").stdout; out != "" {
		t.Errorf("partition 0 should be empty, got %q", out)
	}
	mustFail(t, bootstrap, "", []string{"produce", "codecs", "--key-separator", ""}, "--key-separator must not be empty")

	// --parse-key alone splits at a tab.
	mustRun(t, bootstrap, "tab-key\ttab-value\n", "produce", "codecs", "--parse-key", "--partition", "0")
	if out := mustRun(t, bootstrap, "", "consume", "codecs", "--partition", "0", "--from-beginning", "--max-messages", "1",
		"--format", `%k|%v\n`).stdout; out != "tab-key|tab-value\n" {
		t.Errorf("--parse-key with the default separator: %q", out)
	}

	var summary produceSummary
	decodeJSON(t, mustRun(t, bootstrap, "x\ny\n", "produce", "codecs", "-o", "json").stdout, &summary)
	if summary.Topic != "codecs" || summary.Produced != 2 || summary.Failed != 0 || summary.Bytes != 2 {
		t.Errorf("produce -o json summary %+v", summary)
	}
}

func TestProduceConsumeErrors(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "small", 1)

	mustFail(t, bootstrap, "a\n", []string{"produce", "missing"}, `"missing"`, "UNKNOWN_TOPIC_OR_PARTITION", "samsa topics list")
	mustFail(t, bootstrap, "", []string{"consume", "missing", "--timeout", "5s"}, `"missing"`, "UNKNOWN_TOPIC_OR_PARTITION")
	mustFail(t, bootstrap, "a\n", []string{"produce", "small", "--partition", "4"}, "has 1 partition, no partition 4")
	mustFail(t, bootstrap, "", []string{"consume", "small", "--partition", "4"}, "has 1 partition, no partition 4")

	// A line without the separator stops the producer, but what was read
	// before it is still produced and reported.
	result := runCLI(t, bootstrap, "k:v\nno-separator\n", "produce", "small", "--parse-key", "--key-separator", ":")
	if result.code == 0 || !strings.Contains(result.stderr, `line 2 has no key separator ":"`) {
		t.Errorf("produce with a bad line: exit %d stderr %q", result.code, result.stderr)
	}
	if !strings.Contains(result.stdout, "Produced 1 record ") {
		t.Errorf("produce with a bad line: summary %q", result.stdout)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"produce", "small", "--acks", "2"}, `invalid --acks "2"`},
		{[]string{"produce", "small", "--acks", "1", "--idempotent"}, "--idempotent needs --acks all"},
		{[]string{"produce", "small", "--compression", "brotli"}, `invalid --compression "brotli"`},
		{[]string{"produce", "small", "--header", "novalue"}, `invalid --header "novalue"`},
		{[]string{"produce", "small", "--file", "/nonexistent/input"}, "no such file"},
		{[]string{"consume", "small", "--offset", "soon"}, `invalid --offset "soon"`},
		{[]string{"consume", "small", "--from-beginning", "--offset", "3"}, "only one of --from-beginning, --offset and --timestamp"},
		{[]string{"consume", "small", "--group", "g", "--partition", "0"}, "--partition cannot be used with --group"},
		{[]string{"consume", "small", "--group", "g", "--offset", "5"}, "with --group"},
		{[]string{"consume", "small", "--isolation", "dirty"}, `invalid --isolation "dirty"`},
		{[]string{"consume", "small", "--format", "%q"}, "unknown verb %q"},
		{[]string{"consume", "small", "--format", "%v", "-o", "json"}, "--format and -o json cannot be combined"},
	} {
		mustFail(t, bootstrap, "", tc.args, tc.want)
	}
}

func TestConsumeWithGroupCommits(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "jobs", 1)
	mustRun(t, bootstrap, "1\n2\n3\n4\n", "produce", "jobs")

	if out := mustRun(t, bootstrap, "", "consume", "jobs", "--group", "workers", "--from-beginning", "--max-messages", "3").stdout; out != "1\n2\n3\n" {
		t.Fatalf("first group consume: %q", out)
	}
	// The group resumes after its commit, not from the beginning.
	if out := mustRun(t, bootstrap, "", "consume", "jobs", "--group", "workers", "--from-beginning", "--max-messages", "1", "--timeout", "20s").stdout; out != "4\n" {
		t.Errorf("second group consume: %q, want only the uncommitted record", out)
	}
}

func TestParseRecordFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		template string
		wantErr  string
	}{
		{`%v\n`, ""},
		{`100%% %k\t%v`, ""},
		{`%`, "lone %"},
		{`%x`, "unknown verb %x"},
	} {
		_, err := parseRecordFormat(tc.template)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("parseRecordFormat(%q): %v", tc.template, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("parseRecordFormat(%q) = %v, want error containing %q", tc.template, err, tc.wantErr)
		}
	}
	if got := unescape(`a\tb\nc\\n`); got != "a\tb\nc\\n" {
		t.Errorf("unescape = %q", got)
	}
}
