package clustertest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

func registryAt(t *testing.T, port int) *sr.Client {
	t.Helper()
	client, err := sr.NewClient(sr.URLs(fmt.Sprintf("http://127.0.0.1:%d", port)))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func avroRecord(name string, fields int) string {
	out := `{"type":"record","name":"` + name + `","fields":[`
	for i := range fields {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf(`{"name":"f%d","type":"int","default":0}`, i)
	}
	return out + "]}"
}

// checkRegistry asserts the registry at client holds what registerAll
// wrote: the subjects (a and b, and any written since), versions, ids, the level of a and the mode of b.
func checkRegistry(ctx context.Context, client *sr.Client, wantSubjects string) error {
	subjects, err := client.Subjects(ctx)
	if err != nil {
		return err
	}
	if fmt.Sprint(subjects) != wantSubjects {
		return fmt.Errorf("subjects %v", subjects)
	}
	for version, id := range map[int]int{1: 1, 2: 2, 3: 3} {
		got, err := client.SchemaByVersion(ctx, "a", version)
		if err != nil {
			return err
		}
		if got.ID != id {
			return fmt.Errorf("a version %d has id %d, want %d", version, got.ID, id)
		}
	}
	if got, err := client.SchemaByVersion(ctx, "b", 1); err != nil || got.ID != 1 {
		return fmt.Errorf("b version 1: %+v %v", got, err)
	}
	if results := client.Compatibility(ctx, "a"); results[0].Err != nil || results[0].Level != sr.CompatFull {
		return fmt.Errorf("level of a: %+v", results[0])
	}
	if results := client.Mode(ctx, "b"); results[0].Err != nil || results[0].Mode != sr.ModeReadOnly {
		return fmt.Errorf("mode of b: %+v", results[0])
	}
	return nil
}

// waitForWriter waits until a write through each registry succeeds: the
// writer election has settled. The write, the global level set to its
// default, changes nothing else.
func waitForWriter(ctx context.Context, t *testing.T, ports ...int) {
	t.Helper()
	for _, port := range ports {
		client := registryAt(t, port)
		WaitFor(t, 60*time.Second, func() error {
			return client.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward})[0].Err
		})
	}
}

func registerAll(ctx context.Context, t *testing.T, client *sr.Client) {
	t.Helper()
	for fields := 1; fields <= 3; fields++ {
		if _, err := client.CreateSchema(ctx, "a", sr.Schema{Schema: avroRecord("A", fields)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.CreateSchema(ctx, "b", sr.Schema{Schema: avroRecord("A", 1)}); err != nil {
		t.Fatal(err)
	}
	if r := client.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatFull}, "a"); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if r := client.SetMode(ctx, sr.ModeReadOnly, "b"); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
}

// TestRegistrySurvivesKillNine registers subjects, levels and modes, kills
// the node with SIGKILL, restarts it and finds everything replayed from
// _schemas, with the next id after the largest.
func TestRegistrySurvivesKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	port := FreePort(t)
	node := StartNode(t, "schema.registry.listeners=http://127.0.0.1:"+strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := registryAt(t, port)
	waitForWriter(ctx, t, port)
	registerAll(ctx, t, client)
	node.Kill()
	node.Start()
	WaitFor(t, 30*time.Second, func() error { return checkRegistry(ctx, client, "[a b]") })
	next, err := client.CreateSchema(ctx, "c", sr.Schema{Schema: avroRecord("C", 1)})
	if err != nil || next.ID != 4 {
		t.Log(node.Log())
		t.Fatalf("new schema after restart: %+v %v", next, err)
	}
}

// TestRegistryClusterKillWriter writes through one node of three, reads
// the same state from the others, registers concurrently through all three
// (one id per schema), kills the writer with SIGKILL, writes
// through another node (no id collides) and finds everything on the
// restarted node.
func TestRegistryClusterKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	ports := []int{FreePort(t), FreePort(t), FreePort(t)}
	cluster := StartClusterEach(t, 3, func(i int) []string {
		return []string{"schema.registry.listeners=http://127.0.0.1:" + strconv.Itoa(ports[i])}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	writer := registryAt(t, ports[0])
	WaitFor(t, 60*time.Second, func() error { _, err := writer.Subjects(ctx); return err })
	// _schemas is created at the first write with as many replicas as the
	// writer sees live brokers (at most three): wait until it sees three.
	WaitFor(t, 30*time.Second, func() error {
		count, err := brokerCount(cluster.Nodes[0].Addr())
		if err == nil && count != 3 {
			err = fmt.Errorf("node 1 sees %d brokers", count)
		}
		return err
	})
	waitForWriter(ctx, t, ports...)
	func() {
		defer func() {
			if t.Failed() {
				for _, node := range cluster.Nodes {
					t.Log(node.Log())
				}
			}
		}()
		registerAll(ctx, t, writer)
	}()
	for _, port := range ports[1:] {
		reader := registryAt(t, port)
		WaitFor(t, 30*time.Second, func() error { return checkRegistry(ctx, reader, "[a b]") })
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(cluster.Nodes[1].Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// Every replica is in sync before the writer dies, so another can lead.
	WaitFor(t, 30*time.Second, func() error {
		topics, err := kadm.NewClient(admin).ListTopics(ctx, "_schemas")
		if err != nil {
			return err
		}
		partition, ok := topics["_schemas"].Partitions[0]
		if !ok || len(partition.Replicas) != 3 || len(partition.ISR) != 3 {
			return fmt.Errorf("_schemas-0: %+v", partition)
		}
		return nil
	})
	// Concurrent registrations through every node: the same schema gets
	// one id, different schemas different ids (writes go to one writer).
	ids := make([]int, 6)
	var wait sync.WaitGroup
	for i := range ids {
		wait.Add(1)
		go func() {
			defer wait.Done()
			client := registryAt(t, ports[i%3])
			schema := avroRecord("Same", 1)
			if i >= 3 {
				schema = avroRecord(fmt.Sprintf("Different%d", i), 1)
			}
			got, err := client.CreateSchema(ctx, fmt.Sprintf("concurrent-%d", i), sr.Schema{Schema: schema})
			if err != nil {
				t.Errorf("registration %d: %v", i, err)
				return
			}
			ids[i] = got.ID
		}()
	}
	wait.Wait()
	if ids[0] != ids[1] || ids[1] != ids[2] || ids[3] == ids[4] || ids[4] == ids[5] || ids[3] == ids[5] || ids[3] == ids[0] {
		t.Fatalf("concurrent ids across nodes: %v", ids)
	}
	for _, port := range ports {
		subjects, err := registryAt(t, port).Subjects(ctx)
		if err != nil || len(subjects) != 8 {
			t.Fatalf("subjects on port %d: %v %v", port, subjects, err)
		}
	}
	// Remove them again so the checks below see a and b only.
	for i := range ids {
		subject := fmt.Sprintf("concurrent-%d", i)
		if _, err := writer.DeleteSubject(ctx, subject, sr.SoftDelete); err != nil {
			t.Fatal(err)
		}
		if _, err := writer.DeleteSubject(ctx, subject, sr.HardDelete); err != nil {
			t.Fatal(err)
		}
	}
	nextID := slices.Max(ids) + 1

	cluster.Nodes[0].Kill()
	second := registryAt(t, ports[1])
	var next sr.SubjectSchema
	WaitFor(t, 60*time.Second, func() error {
		var err error
		next, err = second.CreateSchema(ctx, "c", sr.Schema{Schema: avroRecord("C", 1)})
		return err
	})
	if next.ID != nextID {
		t.Fatalf("id after the writer died: %d, want %d", next.ID, nextID)
	}
	cluster.Nodes[0].Start()
	restarted := registryAt(t, ports[0])
	WaitFor(t, 60*time.Second, func() error {
		if err := checkRegistry(ctx, restarted, "[a b c]"); err != nil {
			return err
		}
		got, err := restarted.SchemaByVersion(ctx, "c", 1)
		if err != nil || got.ID != nextID {
			return fmt.Errorf("c on the restarted node: %+v %v", got, err)
		}
		return nil
	})
}
