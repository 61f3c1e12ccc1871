package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTopicsDescribeTieredColumns offloads a tiered topic and checks that
// "topics describe" shows where its data lives: the remote range from the
// log start, the local start, and how many offsets are in the bucket only.
func TestTopicsDescribeTieredColumns(t *testing.T) {
	bootstrap, _ := startTestBrokerWithDir(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url=file://"+t.TempDir(),
		"remote.log.manager.task.interval.ms=100", "log.retention.check.interval.ms=100")
	mustRun(t, bootstrap, "", "topics", "create", "tiered", "--config", "remote.storage.enable=true",
		"--config", "segment.bytes=1048576", "--config", "local.retention.bytes=1048576")
	mustRun(t, bootstrap, "", "topics", "create", "plain")
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("tiered"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 1200 {
		cl.Produce(ctx, &kgo.Record{Value: bytes.Repeat([]byte("d"), 3000)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var partition describedPartition
	deadline := time.Now().Add(60 * time.Second)
	for {
		var described []describedTopic
		out := mustRun(t, bootstrap, "", "topics", "describe", "tiered", "-o", "json").stdout
		if err := json.Unmarshal([]byte(out), &described); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		partition = described[0].Partitions[0]
		if o := partition.Tiered; o != nil && o.RemoteOnly > 0 && o.RemoteEnd >= o.LocalStart-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no offsets in the remote tier only: %+v", partition.Tiered)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if o := partition.Tiered; o.LogStart != 0 || o.RemoteOnly != o.LocalStart {
		t.Fatalf("tiered offsets %+v", o)
	}
	text := mustRun(t, bootstrap, "", "topics", "describe", "tiered", "plain").stdout
	for _, want := range []string{"REMOTE", "LOCAL-START", "REMOTE-ONLY", "0-"} {
		if !strings.Contains(text, want) {
			t.Fatalf("describe output lacks %q:\n%s", want, text)
		}
	}
	if plain := mustRun(t, bootstrap, "", "topics", "describe", "plain").stdout; strings.Contains(plain, "REMOTE") {
		t.Fatalf("an untiered topic shows tiered columns:\n%s", plain)
	}
}
