package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestDumpLogDecodesWhatTheBrokerWrote(t *testing.T) {
	bootstrap, dir := startTestBrokerWithDir(t)
	mustRun(t, bootstrap, "", "topics", "create", "dump", "--partitions", "1")
	mustRun(t, bootstrap, "alpha\tone\nbeta\ttwo\n", "produce", "dump", "--parse-key", "--compression", "zstd")
	segment := filepath.Join(dir, "dump-0", "00000000000000000000.log")

	out := mustRun(t, "", "", "dump-log", segment, "--print-data").stdout
	for _, want := range []string{"baseOffset: 0", "| offset: 0", "key: alpha payload: one", "key: beta payload: two"} {
		if !strings.Contains(out, want) {
			t.Errorf("dump-log output lacks %q:\n%s", want, out)
		}
	}
	index := mustRun(t, "", "", "dump-log", filepath.Join(dir, "dump-0", "00000000000000000000.index")).stdout
	if strings.Contains(index, "error") {
		t.Errorf("index dump: %s", index)
	}

	var doc struct {
		Contents struct {
			Batches []struct {
				Records []struct {
					Offset int64  `json:"offset"`
					Key    string `json:"key"`
				} `json:"records"`
			} `json:"batches"`
		} `json:"contents"`
	}
	js := mustRun(t, "", "", "-o", "json", "dump-log", segment, "--print-data").stdout
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if len(doc.Contents.Batches) == 0 || len(doc.Contents.Batches[0].Records) != 2 || doc.Contents.Batches[0].Records[1].Key != "beta" {
		t.Fatalf("json dump: %+v", doc)
	}
}

func TestDumpLogProducerSnapshot(t *testing.T) {
	bootstrap, dir := startTestBrokerWithDir(t)
	mustRun(t, bootstrap, "", "topics", "create", "snap", "--partitions", "1", "--config", "segment.bytes=1048576")
	var lines strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&lines, "value-%04d-%s\n", i, strings.Repeat("x", 500))
	}
	// An idempotent producer fills more than one segment; each roll writes a
	// producer snapshot.
	mustRun(t, bootstrap, lines.String(), "produce", "snap", "--idempotent")
	matches, err := filepath.Glob(filepath.Join(dir, "snap-0", "*.snapshot"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no producer snapshot written: %v %v", matches, err)
	}
	out := mustRun(t, "", "", "dump-log", matches[0]).stdout
	if !strings.Contains(out, "producerId: ") || !strings.Contains(out, "lastSequence: ") {
		t.Fatalf("snapshot dump:\n%s", out)
	}
}

func TestDumpLogRejectsUnknownFiles(t *testing.T) {
	mustFail(t, "", "", []string{"dump-log", filepath.Join(t.TempDir(), "00000000000000000000.txt")})
	mustFail(t, "", "", []string{"dump-log", "not-a-segment.log"})
}
