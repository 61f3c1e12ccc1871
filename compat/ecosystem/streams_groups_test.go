package ecosystem

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// stop ends the instance with SIGTERM, so that Kafka Streams closes and
// its members leave the group, and waits for the JVM to exit.
func (in *streamsInstance) stop(t *testing.T) {
	t.Helper()
	in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.done:
	case <-time.After(60 * time.Second):
		t.Fatal("WordCount did not stop within 60s of SIGTERM")
	}
}

// kafkaTool runs one of Kafka's command-line tools (compat/java/kafka-tool.sh)
// and returns its standard output.
func kafkaTool(t *testing.T, tool string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "java", "kafka-tool.sh"), append([]string{tool}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", tool, args, err, out, stderr.String())
	}
	t.Logf("%s %s:\n%s", tool, strings.Join(args, " "), out)
	return string(out)
}

// describeStreamsGroup asks for the streams group with StreamsGroupDescribe.
func describeStreamsGroup(cl *kgo.Client, id string) (kmsg.StreamsGroupDescribeResponseGroup, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{id}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, err
	}
	g := resp.Groups[0]
	return g, kerr.ErrorForCode(g.ErrorCode)
}

// stableWithProcesses waits until the group is Stable with members of n
// processes, each running tasks, no warm-up left, every task of the word
// count (two subtopologies of four partitions) active on exactly one
// member.
func stableWithProcesses(cl *kgo.Client, id string, n int, seenWarmups *int) func() error {
	return func() error {
		g, err := describeStreamsGroup(cl, id)
		if err != nil {
			return err
		}
		processes := map[string]bool{}
		active := map[string]int{}
		warmups := 0
		for _, m := range g.Members {
			processes[m.ProcessID] = processes[m.ProcessID] || len(m.Assignment.ActiveTasks) > 0
			for _, t := range m.Assignment.WarmupTasks {
				warmups += len(t.Partitions)
			}
			for _, t := range m.Assignment.ActiveTasks {
				for _, p := range t.Partitions {
					active[fmt.Sprintf("%s_%d", t.SubtopologyID, p)]++
				}
			}
		}
		if g.State != "Stable" || len(processes) != n {
			return fmt.Errorf("group %s with %d processes, want Stable with %d", g.State, len(processes), n)
		}
		for p, running := range processes {
			if !running {
				return fmt.Errorf("process %s runs no task yet (%d warm-ups)", p, warmups)
			}
		}
		*seenWarmups = max(*seenWarmups, warmups)
		if warmups > 0 {
			return fmt.Errorf("%d warm-up tasks still restoring", warmups)
		}
		if len(active) != 8 {
			return fmt.Errorf("%d tasks active, want 8: %v", len(active), active)
		}
		for task, owners := range active {
			if owners != 1 {
				return fmt.Errorf("task %s active on %d members", task, owners)
			}
		}
		return nil
	}
}

// TestKafkaStreamsWordCountStreamsGroups runs the word count with
// group.protocol=streams (KIP-1071): the broker keeps the topology,
// creates the repartition and changelog topics and assigns the tasks. A
// second instance joins (it warms up the state of the stateful tasks it is
// to run, they move once it has caught up, and every stateful task gets a
// standby on the other process) and then leaves; the node is killed and
// restarted; the final counts must be exact.
func TestKafkaStreamsWordCountStreamsGroups(t *testing.T) {
	classpath := needJava(t)
	// A one-node cluster needs Kafka's single-node replication factors:
	// its internal topics wait for that many brokers.
	c := clustertest.StartCluster(t, 1, "auto.create.topics.enable=false",
		"group.streams.heartbeat.interval.ms=1000", "group.streams.num.standby.replicas=1",
		"group.streams.task.offset.interval.ms=1000",
		"offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1")
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
		if _, err := adm.CreateTopic(ctx, 4, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	const total = 3000
	produceLines(t, cl, 0, total/3, want)

	const app = "wordcount-streams"
	dir := t.TempDir()
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
	a := startWordCount(t, classpath, bootstrap, app, filepath.Join(dir, "a"), 1, "streams")
	clustertest.WaitFor(t, 120*time.Second, running(a))
	var warmups int
	clustertest.WaitFor(t, 60*time.Second, stableWithProcesses(cl, app, 1, &warmups))
	// Once the first instance has reported its changelog offsets, the
	// broker knows where the state is: the second instance, without any,
	// gets the stateful tasks it is to run as warm-ups first.
	clustertest.WaitFor(t, 30*time.Second, func() error {
		g, err := describeStreamsGroup(cl, app)
		if err != nil {
			return err
		}
		if len(g.Members) != 1 || len(g.Members[0].TaskOffsets) == 0 {
			return fmt.Errorf("no task offsets reported yet")
		}
		return nil
	})

	b := startWordCount(t, classpath, bootstrap, app, filepath.Join(dir, "b"), 1, "streams")
	clustertest.WaitFor(t, 120*time.Second, stableWithProcesses(cl, app, 2, &warmups))
	t.Logf("warm-up tasks seen at once while the second instance joined: %d", warmups)
	clustertest.WaitFor(t, 60*time.Second, running(a, b))
	g, err := describeStreamsGroup(cl, app)
	if err != nil {
		t.Fatal(err)
	}
	// Both processes run tasks, and every task of the counting subtopology
	// (the one with a store) has a standby on the process not running it
	// (group.streams.num.standby.replicas=1).
	activeOn, standbyOn := map[string]string{}, map[string]string{}
	for _, m := range g.Members {
		if len(m.Assignment.ActiveTasks) == 0 {
			t.Errorf("member %s of process %s has no active task after the rebalance", m.MemberID, m.ProcessID)
		}
		for _, ts := range m.Assignment.ActiveTasks {
			for _, p := range ts.Partitions {
				activeOn[fmt.Sprintf("%s_%d", ts.SubtopologyID, p)] = m.ProcessID
			}
		}
		for _, ts := range m.Assignment.StandbyTasks {
			for _, p := range ts.Partitions {
				standbyOn[fmt.Sprintf("%s_%d", ts.SubtopologyID, p)] = m.ProcessID
			}
		}
	}
	if len(standbyOn) != 4 {
		t.Errorf("standby tasks %v, want one for each of the 4 stateful tasks", standbyOn)
	}
	for task, process := range standbyOn {
		if activeOn[task] == process || activeOn[task] == "" {
			t.Errorf("standby of %s on process %s, which runs it actively (or nobody does)", task, process)
		}
	}
	// Kafka's own kafka-streams-groups tool (Admin.describeStreamsGroups)
	// sees both processes.
	out := kafkaTool(t, "org.apache.kafka.tools.streams.StreamsGroupCommand", "--bootstrap-server", bootstrap, "--describe", "--members", "--group", app)
	for _, m := range g.Members {
		if !strings.Contains(out, m.ProcessID) {
			t.Errorf("kafka-streams-groups --describe --members does not show process %s:\n%s", m.ProcessID, out)
		}
	}
	if out := kafkaTool(t, "org.apache.kafka.tools.streams.StreamsGroupCommand", "--bootstrap-server", bootstrap, "--list"); !strings.Contains(out, app) {
		t.Errorf("kafka-streams-groups --list:\n%s", out)
	}
	produceLines(t, cl, total/3, 2*total/3, want)

	b.stop(t)
	clustertest.WaitFor(t, 60*time.Second, stableWithProcesses(cl, app, 1, &warmups))
	before, err := describeStreamsGroup(cl, app)
	if err != nil {
		t.Fatal(err)
	}

	// The node is SIGKILLed and restarted: the group comes back from its
	// records in __consumer_offsets, and the member carries on at its
	// epoch, without being fenced and rejoining.
	c.Nodes[0].Kill()
	c.Nodes[0].Start()
	clustertest.WaitFor(t, 90*time.Second, stableWithProcesses(cl, app, 1, &warmups))
	after, err := describeStreamsGroup(cl, app)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Members) != 1 || after.Members[0].MemberID != before.Members[0].MemberID ||
		after.Members[0].MemberEpoch != before.Members[0].MemberEpoch || after.Epoch != before.Epoch {
		t.Errorf("after the restart: member %s at epoch %d, group epoch %d; before: member %s at epoch %d, group epoch %d",
			after.Members[0].MemberID, after.Members[0].MemberEpoch, after.Epoch, before.Members[0].MemberID, before.Members[0].MemberEpoch, before.Epoch)
	}
	produceLines(t, cl, 2*total/3, total, want)
	clustertest.WaitFor(t, 120*time.Second, func() error {
		return checkCounts(readCounts(t, addrs), want)
	})
	if err := running(a)(); err != nil {
		t.Fatalf("after the rebalances: %v", err)
	}

	// The broker made the internal topics: the changelog compacted, the
	// repartition topic deleting, four partitions each.
	topics, err := adm.ListTopics(ctx, app+"-counts-changelog", app+"-counts-repartition")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{app + "-counts-changelog", app + "-counts-repartition"} {
		if d, ok := topics[name]; !ok || d.Err != nil || len(d.Partitions) != 4 {
			t.Fatalf("internal topic %s: %+v", name, d)
		}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, app+"-counts-changelog", app+"-counts-repartition")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{}
	for _, rc := range rcs {
		for _, cfg := range rc.Configs {
			if cfg.Key == "cleanup.policy" {
				policies[rc.Name] = cfg.MaybeValue()
			}
		}
	}
	if policies[app+"-counts-changelog"] != "compact" || policies[app+"-counts-repartition"] != "delete" {
		t.Fatalf("internal topics' cleanup.policy: %v", policies)
	}
	// ListGroups knows the group's type.
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lg, ok := listed[app]; !ok || lg.GroupType != "streams" || lg.ProtocolType != "streams" {
		t.Fatalf("ListGroups: %+v", listed[app])
	}
}
