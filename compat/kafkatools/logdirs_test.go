package kafkatools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestKafkaReassignPartitionsMovesLogDirs moves a replica to another log
// dir of its broker with kafka-reassign-partitions (a plan with log_dirs,
// which the tool sends as AlterReplicaLogDirs) while a producer keeps
// writing, waits for --verify to report the replica moved, checks
// kafka-log-dirs lists it in the new dir, and reads every acknowledged
// record back.
func TestKafkaReassignPartitionsMovesLogDirs(t *testing.T) {
	needTools(t)
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "disk0"), filepath.Join(base, "disk1")}
	node := clustertest.StartNode(t, "auto.create.topics.enable=false", "log.dirs="+strings.Join(dirs, ","))
	b := node.Addr()
	const topic = "jbod"
	mustTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")

	cl, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		mu      sync.Mutex
		acked   int
		loadErr error
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i += 100 {
			select {
			case <-stop:
				return
			default:
			}
			var recs []*kgo.Record
			for j := i; j < i+100; j++ {
				recs = append(recs, &kgo.Record{Value: []byte(strconv.Itoa(j))})
			}
			err := cl.ProduceSync(ctx, recs...).FirstErr()
			mu.Lock()
			if err != nil {
				loadErr = err
				mu.Unlock()
				return
			}
			acked = i + 100
			mu.Unlock()
		}
	}()
	waitFor(t, 30*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if acked < 5000 {
			return fmt.Errorf("%d records acknowledged", acked)
		}
		return nil
	})

	current := replicaLogDir(t, b, topic)
	dest := dirs[0]
	if current == dirs[0] {
		dest = dirs[1]
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"`+topic+`","partition":0,"replicas":[1],"log_dirs":["`+dest+`"]}]}`), 0o644)
	out := mustTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", b, "--reassignment-json-file", plan, "--execute")
	mustContain(t, "execute", out, `"log_dirs":["`+current+`"]`, "Successfully started partition reassignment for "+topic+"-0",
		"Successfully started moving log directory to "+dest+" for replica "+topic+"-0 with broker 1")
	waitTool(t, 60*time.Second, func(out string) error {
		if !strings.Contains(out, "Reassignment of replica "+topic+"-0-1 completed successfully.") {
			return fmt.Errorf("not completed")
		}
		return nil
	}, "kafka-reassign-partitions", "--bootstrap-server", b, "--reassignment-json-file", plan, "--verify")
	if got := replicaLogDir(t, b, topic); got != dest {
		t.Fatalf("kafka-log-dirs lists %s-0 in %s after the move, want %s", topic, got, dest)
	}

	close(stop)
	<-done
	if loadErr != nil {
		t.Fatalf("producing during the move: %v", loadErr)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for seen := 0; seen < acked; {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records back", seen, acked)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != strconv.Itoa(seen) {
				t.Fatalf("offset %d holds %q, want %d", r.Offset, r.Value, seen)
			}
			seen++
		})
	}
}

// replicaLogDir is the dir kafka-log-dirs lists topic-0's (current)
// replica in.
func replicaLogDir(t *testing.T, bootstrap, topic string) string {
	t.Helper()
	out := mustTool(t, "", "kafka-log-dirs", "--bootstrap-server", bootstrap, "--describe", "--topic-list", topic)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			line = l
		}
	}
	var described struct {
		Brokers []struct {
			LogDirs []struct {
				LogDir     string `json:"logDir"`
				Partitions []struct {
					Partition string `json:"partition"`
					IsFuture  bool   `json:"isFuture"`
				} `json:"partitions"`
			} `json:"logDirs"`
		} `json:"brokers"`
	}
	if err := json.Unmarshal([]byte(line), &described); err != nil {
		t.Fatalf("kafka-log-dirs JSON: %v\n%s", err, out)
	}
	for _, br := range described.Brokers {
		for _, d := range br.LogDirs {
			for _, p := range d.Partitions {
				if p.Partition == topic+"-0" && !p.IsFuture {
					return d.LogDir
				}
			}
		}
	}
	t.Fatalf("kafka-log-dirs lists no %s-0:\n%s", topic, out)
	return ""
}
