package ecosystem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// connectWorker is one Kafka Connect distributed worker JVM.
type connectWorker struct {
	id   string // host:port, as the REST API names workers
	url  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startConnectWorker starts a distributed worker of the group "connect"
// with its REST API on a free loopback port.
func startConnectWorker(t *testing.T, classpath, bootstrap, dir, name string) *connectWorker {
	t.Helper()
	port := clustertest.FreePort(t)
	props := strings.Join([]string{
		"bootstrap.servers=" + bootstrap,
		"group.id=connect",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.storage.StringConverter",
		"config.storage.topic=connect-configs",
		"offset.storage.topic=connect-offsets",
		"status.storage.topic=connect-status",
		"config.storage.replication.factor=3",
		"offset.storage.replication.factor=3",
		"status.storage.replication.factor=3",
		"offset.storage.partitions=5",
		"status.storage.partitions=3",
		"exactly.once.source.support=enabled",
		// Sinks read only committed records: the source's aborted
		// transactions (a worker killed mid-batch) must not reach the files.
		"consumer.isolation.level=read_committed",
		"offset.flush.interval.ms=1000",
		// A dead worker's tasks move after this delay (Kafka's default is
		// five minutes).
		"scheduled.rebalance.max.delay.ms=5000",
		"session.timeout.ms=10000",
		"heartbeat.interval.ms=2000",
		fmt.Sprintf("listeners=http://127.0.0.1:%d", port),
		"rest.advertised.host.name=127.0.0.1",
		fmt.Sprintf("rest.advertised.port=%d", port),
		"plugin.discovery=service_load",
	}, "\n") + "\n"
	propsFile := filepath.Join(dir, name+".properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-Xmx384m", "-XX:+UseSerialGC",
		"-Dlog4j2.configurationFile="+filepath.Join("..", "java", "log4j2.properties"),
		"-cp", classpath, "org.apache.kafka.connect.cli.ConnectDistributed", propsFile)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &connectWorker{
		id:   fmt.Sprintf("127.0.0.1:%d", port),
		url:  fmt.Sprintf("http://127.0.0.1:%d", port),
		cmd:  cmd,
		done: make(chan struct{}),
	}
	go func() {
		cmd.Wait()
		logFile.Close()
		close(w.done)
	}()
	t.Cleanup(w.kill)
	clustertest.WaitFor(t, 120*time.Second, func() error {
		select {
		case <-w.done:
			t.Fatalf("connect worker %s exited; its log is %s", name, logFile.Name())
		default:
		}
		_, err := w.call(http.MethodGet, "/connectors", nil)
		return err
	})
	return w
}

func (w *connectWorker) kill() {
	select {
	case <-w.done:
	default:
		w.cmd.Process.Kill()
		<-w.done
	}
}

// call sends one REST request and returns the body of a 2xx answer.
func (w *connectWorker) call(method, path string, body any) ([]byte, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, w.url+path, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	client := http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	return data, nil
}

// connectorStatus is the body of GET /connectors/NAME/status.
type connectorStatus struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

// inState reports nil once the connector and all of its tasks (want of
// them) are in state, on one of the given workers.
func inState(w *connectWorker, name, state string, tasks int, on ...string) func() error {
	return func() error {
		data, err := w.call(http.MethodGet, "/connectors/"+name+"/status", nil)
		if err != nil {
			return err
		}
		var s connectorStatus
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if s.Connector.State != state {
			return fmt.Errorf("%s is %s, want %s", name, s.Connector.State, state)
		}
		if len(s.Tasks) != tasks {
			return fmt.Errorf("%s has %d tasks, want %d", name, len(s.Tasks), tasks)
		}
		for _, task := range s.Tasks {
			if task.State == "FAILED" {
				return fmt.Errorf("%s task %d failed: %s", name, task.ID, task.Trace)
			}
			if task.State != state {
				return fmt.Errorf("%s task %d is %s, want %s", name, task.ID, task.State, state)
			}
			if len(on) > 0 && !slices.Contains(on, task.WorkerID) {
				return fmt.Errorf("%s task %d is on %s, want one of %v", name, task.ID, task.WorkerID, on)
			}
		}
		return nil
	}
}

// connectLine is line i of the connector input: unique, so that exactly
// once can be checked line by line.
func connectLine(i int) string { return fmt.Sprintf("%06d %s", i, line(i)) }

func appendLines(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := from; i < to; i++ {
		fmt.Fprintln(w, connectLine(i))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sinkLines counts every line in the sink's output files.
func sinkLines(dir string) (map[string]int, int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, 0, err
	}
	seen := map[string]int{}
	total := 0
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, 0, err
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l != "" {
				seen[l]++
				total++
			}
		}
	}
	return seen, total, nil
}

// TestKafkaConnectDistributedExactlyOnce runs two Kafka Connect 4.4
// distributed workers against three samsa nodes with exactly-once source
// support: a file source connector and a file sink connector move 100,000
// lines file → topic → files while the sink is paused and resumed, the
// source restarted through the REST API, and one worker SIGKILLed, after
// which its tasks run on the other; every line must arrive exactly once,
// in the topic (read_committed) and in the files.
func TestKafkaConnectDistributedExactlyOnce(t *testing.T) {
	classpath := needJava(t)
	c := clustertest.StartCluster(t, 3, "auto.create.topics.enable=false")
	addrs := c.Addrs()
	bootstrap := strings.Join(addrs, ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "lines"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	input := filepath.Join(dir, "input.txt")
	output := filepath.Join(dir, "output")
	const total = 100_000
	appendLines(t, input, 0, total/4)

	a := startConnectWorker(t, classpath, bootstrap, dir, "a")
	b := startConnectWorker(t, classpath, bootstrap, dir, "b")
	if _, err := a.call(http.MethodPost, "/connectors", map[string]any{
		"name": "lines-source",
		"config": map[string]string{
			"connector.class":      "samsa.compat.connect.LineFileSourceConnector",
			"tasks.max":            "1",
			"file":                 input,
			"topic":                "lines",
			"exactly.once.support": "required",
		},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.call(http.MethodPost, "/connectors", map[string]any{
		"name": "lines-sink",
		"config": map[string]string{
			"connector.class": "samsa.compat.connect.LineFileSinkConnector",
			"tasks.max":       "3",
			"topics":          "lines",
			"directory":       output,
		},
	}); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 120*time.Second, inState(a, "lines-source", "RUNNING", 1))
	clustertest.WaitFor(t, 120*time.Second, inState(a, "lines-sink", "RUNNING", 3))

	// The connector list and a connector's config come back as created.
	data, err := b.call(http.MethodGet, "/connectors", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"lines-sink", "lines-source"}) {
		t.Fatalf("GET /connectors: %v", names)
	}

	// Paused, the sink writes nothing more; resumed, it catches up.
	clustertest.WaitFor(t, 60*time.Second, func() error {
		if _, n, err := sinkLines(output); err != nil || n == 0 {
			return fmt.Errorf("no output yet (%v)", err)
		}
		return nil
	})
	if _, err := a.call(http.MethodPut, "/connectors/lines-sink/pause", nil); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 60*time.Second, inState(b, "lines-sink", "PAUSED", 3))
	_, pausedAt, err := sinkLines(output)
	if err != nil {
		t.Fatal(err)
	}
	appendLines(t, input, total/4, total/2)
	// The source keeps producing while the sink is paused.
	clustertest.WaitFor(t, 60*time.Second, func() error {
		offsets, err := adm.ListEndOffsets(ctx, "lines")
		if err != nil {
			return err
		}
		var end int64
		offsets.Each(func(o kadm.ListedOffset) { end += o.Offset })
		if end < total/2 {
			return fmt.Errorf("the topic ends at %d, want at least %d", end, total/2)
		}
		return nil
	})
	if _, n, err := sinkLines(output); err != nil || n != pausedAt {
		t.Fatalf("the paused sink went from %d to %d lines (%v)", pausedAt, n, err)
	}
	if _, err := b.call(http.MethodPut, "/connectors/lines-sink/resume", nil); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 60*time.Second, inState(a, "lines-sink", "RUNNING", 3))

	// A restart through the REST API resumes the source from its
	// committed position.
	if _, err := b.call(http.MethodPost, "/connectors/lines-source/restart?includeTasks=true", nil); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 120*time.Second, inState(a, "lines-source", "RUNNING", 1))
	appendLines(t, input, total/2, 3*total/4)

	// SIGKILL one worker mid-stream: its tasks move to the other.
	a.kill()
	appendLines(t, input, 3*total/4, total)
	clustertest.WaitFor(t, 180*time.Second, inState(b, "lines-source", "RUNNING", 1, b.id))
	clustertest.WaitFor(t, 180*time.Second, inState(b, "lines-sink", "RUNNING", 3, b.id))

	clustertest.WaitFor(t, 240*time.Second, func() error {
		seen, n, err := sinkLines(output)
		if err != nil {
			return err
		}
		if n < total {
			return fmt.Errorf("the sink has written %d of %d lines", n, total)
		}
		for i := range total {
			if k := seen[connectLine(i)]; k != 1 {
				t.Fatalf("line %d is in the sink's files %d times", i, k)
			}
		}
		if n != total {
			t.Fatalf("the sink wrote %d lines, want %d", n, total)
		}
		return nil
	})

	// The topic holds every line exactly once for a read_committed reader.
	topicLines := map[string]int{}
	reader, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics("lines"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	clustertest.WaitFor(t, 60*time.Second, func() error {
		pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		polled := 0
		reader.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) { topicLines[string(r.Value)]++; polled++ })
		if len(topicLines) < total || polled > 0 {
			return fmt.Errorf("read %d distinct lines from the topic, still reading", len(topicLines))
		}
		return nil
	})
	for l, k := range topicLines {
		if k != 1 {
			t.Fatalf("%q is in the topic %d times", l, k)
		}
	}

	// The source task wrote through a transactional producer of its own
	// (Connect names it GROUP-CONNECTOR-TASK).
	txns, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := txns["connect-lines-source-0"]; !ok {
		t.Fatalf("no transactional id connect-lines-source-0 among %v", txns.TransactionalIDs())
	}

	// Connect made its internal topics compacted, as it requires.
	rcs, err := adm.DescribeTopicConfigs(ctx, "connect-configs", "connect-offsets", "connect-status")
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("%s: %v", rc.Name, rc.Err)
		}
		for _, cfg := range rc.Configs {
			if cfg.Key == "cleanup.policy" && cfg.MaybeValue() != "compact" {
				t.Fatalf("%s has cleanup.policy=%s, want compact", rc.Name, cfg.MaybeValue())
			}
		}
	}
}
