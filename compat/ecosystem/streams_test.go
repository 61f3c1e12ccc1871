package ecosystem

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

func needJava(t *testing.T) string {
	t.Helper()
	if os.Getenv("SAMSA_ECOSYSTEM") != "1" {
		t.Skip("the ecosystem tests run with SAMSA_ECOSYSTEM=1 (make ecosystem sets it)")
	}
	cp, err := os.ReadFile(filepath.Join("..", "java", "target", "classpath.txt"))
	if err != nil || len(cp) == 0 {
		t.Fatal("compat/java is not built: run mvn -q package in compat/java (make ecosystem does)")
	}
	return strings.TrimSpace(string(cp)) + ":" + filepath.Join("..", "java", "target", "samsa-compat-java.jar")
}

// streamsInstance is one running WordCount JVM.
type streamsInstance struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	states []string
	done   chan struct{}
}

// startWordCount starts a WordCount JVM; extra is the optional group
// protocol ("streams" for KIP-1071).
func startWordCount(t *testing.T, classpath, bootstrap, appID, stateDir string, replication int, extra ...string) *streamsInstance {
	t.Helper()
	args := append([]string{"-Xmx384m", "-XX:+UseSerialGC",
		"-Dlog4j2.configurationFile=" + filepath.Join("..", "java", "log4j2.properties"),
		"-cp", classpath, "samsa.compat.WordCount", bootstrap, appID, "words", "counts", stateDir, fmt.Sprint(replication)}, extra...)
	cmd := exec.Command("java", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(stateDir + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &streamsInstance{cmd: cmd, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			in.mu.Lock()
			in.states = append(in.states, sc.Text())
			in.mu.Unlock()
		}
		cmd.Wait()
		logFile.Close()
		close(in.done)
	}()
	t.Cleanup(func() { in.kill() })
	return in
}

func (in *streamsInstance) state() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.states) == 0 {
		return ""
	}
	return in.states[len(in.states)-1]
}

func (in *streamsInstance) kill() {
	select {
	case <-in.done:
	default:
		in.cmd.Process.Kill()
		<-in.done
	}
}

var vocabulary = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu
red orange yellow green blue indigo violet black white grey`)

// line i of the input: five words chosen from i, so counts are known.
func line(i int) string {
	var w []string
	for j := range 5 {
		w = append(w, vocabulary[(i*7+j*13+i/11)%len(vocabulary)])
	}
	return strings.Join(w, " ")
}

func produceLines(t *testing.T, cl *kgo.Client, from, to int, want map[string]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		l := line(i)
		for _, w := range strings.Fields(l) {
			want[w]++
		}
		recs = append(recs, &kgo.Record{Topic: "words", Key: []byte(fmt.Sprint(i)), Value: []byte(l)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readCounts reads every committed count: per word, the sequence of values,
// until the topic stays quiet for two seconds (transaction markers end
// partitions, so end offsets alone cannot tell when the last record was
// read).
func readCounts(t *testing.T, bootstrap []string) map[string][]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...), kgo.ConsumeTopics("counts"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string][]int64{}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if len(r.Value) == 8 {
				got[string(r.Key)] = append(got[string(r.Key)], int64(binary.BigEndian.Uint64(r.Value)))
			}
		})
		if n == 0 {
			return got
		}
	}
	t.Fatal("reading counts: the topic never went quiet within 60s")
	return nil
}

// checkCounts: every word's committed counts increase strictly and end at
// exactly the count computed from the input (exactly once: no replayed
// input counted twice, none lost).
func checkCounts(got map[string][]int64, want map[string]int64) error {
	var problems []string
	for w, n := range want {
		seq := got[w]
		if len(seq) == 0 {
			problems = append(problems, fmt.Sprintf("%s: no count, want %d", w, n))
			continue
		}
		for i := 1; i < len(seq); i++ {
			if seq[i] <= seq[i-1] {
				problems = append(problems, fmt.Sprintf("%s: count %d after %d", w, seq[i], seq[i-1]))
				break
			}
		}
		if last := seq[len(seq)-1]; last != n {
			problems = append(problems, fmt.Sprintf("%s: final count %d, want %d", w, last, n))
		}
	}
	for w := range got {
		if _, ok := want[w]; !ok {
			problems = append(problems, "unexpected word "+w)
		}
	}
	if len(problems) > 0 {
		if len(problems) > 8 {
			problems = problems[:8]
		}
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// TestKafkaStreamsWordCountExactlyOnce runs two WordCount instances
// (exactly_once_v2, one standby replica) against three samsa nodes; one
// instance is SIGKILLed and restarted and one node is SIGKILLed and
// restarted while input keeps coming; the final counts must be exact.
func TestKafkaStreamsWordCountExactlyOnce(t *testing.T) {
	classpath := needJava(t)
	c := clustertest.StartCluster(t, 3, "auto.create.topics.enable=false")
	addrs := c.Addrs()
	bootstrap := strings.Join(addrs, ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	for _, topic := range []string{"words", "counts"} {
		if _, err := adm.CreateTopic(ctx, 4, 3, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	const total = 6000
	produceLines(t, cl, 0, total/3, want)

	dir := t.TempDir()
	a := startWordCount(t, classpath, bootstrap, "wordcount", filepath.Join(dir, "a"), 3)
	b := startWordCount(t, classpath, bootstrap, "wordcount", filepath.Join(dir, "b"), 3)
	running := func(ins ...*streamsInstance) func() error {
		return func() error {
			for i, in := range ins {
				if s := in.state(); s != "state RUNNING" {
					return fmt.Errorf("instance %d is in %q", i, s)
				}
			}
			return nil
		}
	}
	clustertest.WaitFor(t, 120*time.Second, running(a, b))
	// Some counts are out before the first failure.
	clustertest.WaitFor(t, 60*time.Second, func() error {
		if n := len(readCounts(t, addrs)); n == 0 {
			return fmt.Errorf("no counts yet")
		}
		return nil
	})
	a.kill()
	produceLines(t, cl, total/3, 2*total/3, want)
	a = startWordCount(t, classpath, bootstrap, "wordcount", filepath.Join(dir, "a"), 3)
	clustertest.WaitFor(t, 120*time.Second, running(a, b))
	c.Nodes[2].Kill()
	produceLines(t, cl, 2*total/3, total, want)
	c.Nodes[2].Start()

	clustertest.WaitFor(t, 180*time.Second, func() error {
		return checkCounts(readCounts(t, addrs), want)
	})
	if err := running(a, b)(); err != nil {
		t.Fatalf("after the failures: %v", err)
	}
	// Streams made its internal topics: the store's changelog, compacted,
	// and the repartition topic of the groupBy.
	rcs, err := adm.DescribeTopicConfigs(ctx, "wordcount-counts-changelog", "wordcount-counts-repartition")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("%s: %v", rc.Name, rc.Err)
		}
		for _, cfg := range rc.Configs {
			if cfg.Key == "cleanup.policy" {
				policies[rc.Name] = cfg.MaybeValue()
			}
		}
	}
	if policies["wordcount-counts-changelog"] != "compact" || policies["wordcount-counts-repartition"] != "delete" {
		t.Fatalf("internal topics' cleanup.policy: %v, want the changelog compact and the repartition topic delete", policies)
	}
}
