package kafkatools

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestKafkaDumpLogReadsSamsaFiles is the byte-compatibility claim proven by
// Kafka: kafka-dump-log (Kafka's DumpLogSegments) decodes every .log,
// .index, .timeindex, .snapshot and .txnindex file a samsa node wrote,
// with no error, and prints exactly what samsa dump-log prints for them,
// with and without --deep-iteration and --print-data-log.
func TestKafkaDumpLogReadsSamsaFiles(t *testing.T) {
	needTools(t)
	node := clustertest.StartNode(t, "auto.create.topics.enable=false")
	b := node.Addr()
	// Batches of every codec, keyed and unkeyed, a transaction committed
	// and one aborted (markers and a .txnindex), a group's offsets, and
	// segments rolled under an idempotent producer (.snapshot files).
	mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", "dump", "--partitions", "2",
		"--config", "segment.bytes=1048576")
	// 3 MB uncompressed: every partition rolls a segment.
	var big strings.Builder
	for i := range 1500 {
		big.WriteString("big-" + strconv.Itoa(i%7) + ":" + strings.Repeat(strconv.Itoa(i), 2000/len(strconv.Itoa(i))) + "\n")
	}
	mustTool(t, big.String(), "kafka-console-producer", "--bootstrap-server", b, "--topic", "dump",
		"--reader-property", "parse.key=true", "--reader-property", "key.separator=:")
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		mustTool(t, keyValueLines(300), "kafka-console-producer", "--bootstrap-server", b, "--topic", "dump",
			"--compression-codec", codec, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:")
	}
	mustTool(t, strings.Repeat("no key, value with ü and \u20ac\n", 50), "kafka-console-producer", "--bootstrap-server", b, "--topic", "dump")
	transact(t, b, "dump", "dump-txid")
	abortOne(t, b, "dump", "dump-txid-2")
	mustTool(t, "", "kafka-console-consumer", "--bootstrap-server", b, "--topic", "dump", "--from-beginning",
		"--max-messages", "10", "--group", "dump-group", "--timeout-ms", "30000")
	// A clean stop trims the indexes and writes each partition's producer
	// snapshot, as Kafka's shutdown does.
	node.Stop()

	var files []string
	for _, ext := range []string{"log", "index", "timeindex", "snapshot", "txnindex"} {
		m, _ := filepath.Glob(filepath.Join(node.Dir, "data", "*", "*."+ext))
		for _, f := range m {
			if !strings.Contains(f, "__cluster_metadata") {
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	kinds := map[string]int{}
	for _, f := range files {
		kinds[filepath.Ext(f)]++
	}
	for _, ext := range []string{".log", ".index", ".timeindex", ".snapshot", ".txnindex"} {
		if kinds[ext] == 0 {
			t.Fatalf("the node wrote no %s file to compare (files: %v)", ext, kinds)
		}
	}
	t.Logf("comparing %d files: %v", len(files), kinds)
	list := strings.Join(files, ",")
	for _, flags := range [][]string{nil, {"--deep-iteration"}, {"--print-data-log"}} {
		args := append(append([]string{}, flags...), "--files", list)
		kafka := tool(t, "", "kafka-dump-log", args...)
		if kafka.err != nil || strings.Contains(kafka.stderr, "Exception") {
			t.Fatalf("kafka-dump-log %v: %v\n%s", flags, kafka.err, tail(kafka.stderr, 30))
		}
		samsa := samsaDumpLog(t, args...)
		if kafka.stdout != samsa {
			t.Fatalf("kafka-dump-log and samsa dump-log %v differ: %s", flags, firstDifference(kafka.stdout, samsa))
		}
	}
}

func samsaDumpLog(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(clustertest.Binary(t), append([]string{"dump-log"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("samsa dump-log: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// firstDifference shows the first line where two outputs part.
func firstDifference(kafka, samsa string) string {
	kl, sl := strings.Split(kafka, "\n"), strings.Split(samsa, "\n")
	for i := 0; i < len(kl) || i < len(sl); i++ {
		var k, s string
		if i < len(kl) {
			k = kl[i]
		}
		if i < len(sl) {
			s = sl[i]
		}
		if k != s {
			return "line " + strconv.Itoa(i+1) + ":\nkafka: " + k + "\nsamsa: " + s
		}
	}
	return "same lines, different bytes"
}
