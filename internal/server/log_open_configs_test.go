package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLogsOpenWithTheirTopicConfigs: a log found on disk at startup opens
// with its topic's configs, not the broker defaults, as Kafka's LogManager
// loads logs once the first metadata image gives their configs. The active
// segment's offset index is preallocated to the topic's
// segment.index.bytes when the log is created and again when it is opened
// after a restart (the default would make it 10 MiB), and the records
// written before the restart read back.
func TestLogsOpenWithTheirTopicConfigs(t *testing.T) {
	tn := startTestNode(t)
	const topic = "small-indexes"
	const indexBytes = 4096
	size := "4096"
	mustCreateTopic(t, tn.admin(), topic, 1, map[string]*string{"segment.index.bytes": &size})
	produceKeyed(t, tn.client(kgo.DefaultProduceTopic(topic)), topic, 20)

	index := filepath.Join(tn.dir, topic+"-0", "00000000000000000000.index")
	indexSize := func(when string) {
		t.Helper()
		info, err := os.Stat(index)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() != indexBytes {
			t.Fatalf("%s: the active segment's offset index is %d bytes, want segment.index.bytes %d", when, info.Size(), indexBytes)
		}
	}
	indexSize("after creation")
	tn.restart()
	records := consumeAll(t, tn, topic, 20)
	if string(records[0].Value) != topic+"-0" || string(records[19].Value) != topic+"-19" {
		t.Fatalf("read back %q ... %q", records[0].Value, records[19].Value)
	}
	indexSize("after a restart")
}
