package log

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

func managerOptions(clock *testClock) ManagerOptions {
	return ManagerOptions{
		ClusterID: "3Db5QLSqSZieL3rJBUUegA", NodeID: 1, BrokerEpoch: 7,
		Clock: clock.Now, Logger: quietLogger,
		TopicConfig: func(string) Config { return smallConfig() },
	}
}

func TestManagerLifecycle(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2")}
	clock := newTestClock()
	m, err := NewManager(vfs.Default, dirs, managerOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if logs, err := m.LoadAll(); err != nil || len(logs) != 0 {
		t.Fatalf("LoadAll on empty dirs: %v %v", logs, err)
	}
	for _, d := range dirs {
		meta, err := ReadMetaProperties(vfs.Default, d)
		if err != nil || meta.Version != 1 || meta.ClusterID != "3Db5QLSqSZieL3rJBUUegA" || meta.NodeID != 1 || meta.DirectoryID == ([16]byte{}) {
			t.Fatalf("meta.properties in %s: %+v %v", d, meta, err)
		}
	}
	topicID := [16]byte{1, 2, 3}
	perDir := map[string]int{}
	for p := int32(0); p < 4; p++ {
		l, err := m.Create(TopicPartition{"orders", p}, topicID, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		perDir[filepath.Dir(l.Dir())]++
		for i := 0; i < int(p)+1; i++ {
			mustAppend(t, l, makeBatch(2, 100, clock.Now().UnixMilli()), 0)
		}
		l.UpdateHighWatermark(l.LogEndOffset())
		if got, err := ReadPartitionMetadata(vfs.Default, l.Dir()); err != nil || got != topicID {
			t.Fatalf("partition.metadata %x %v", got, err)
		}
	}
	if perDir[dirs[0]] != 2 || perDir[dirs[1]] != 2 {
		t.Fatalf("partitions not balanced over dirs: %v", perDir)
	}
	if again, _ := m.Create(TopicPartition{"orders", 0}, topicID, smallConfig()); again != m.Get(TopicPartition{"orders", 0}) {
		t.Fatal("Create of an existing partition made a new log")
	}
	if err := m.Get(TopicPartition{"orders", 3}).DeleteRecordsBefore(4); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(TopicPartition{"orders", 2}); err != nil {
		t.Fatal(err)
	}
	if m.Get(TopicPartition{"orders", 2}) != nil {
		t.Fatal("deleted log still there")
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, CleanShutdownFile)); err != nil {
			t.Fatalf("no clean shutdown marker in %s", d)
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "-delete") {
				t.Fatalf("deleted partition dir left: %s", e.Name())
			}
		}
	}
	d := filepath.Dir(m.Get(TopicPartition{"orders", 3}).Dir())
	rp, _ := ReadOffsetCheckpoint(vfs.Default, filepath.Join(d, RecoveryPointCheckpointFile))
	if rp[TopicPartition{"orders", 3}] != 8 {
		t.Fatalf("recovery point checkpoint %v", rp)
	}
	ls, _ := ReadOffsetCheckpoint(vfs.Default, filepath.Join(d, LogStartOffsetCheckpointFile))
	if ls[TopicPartition{"orders", 3}] != 4 {
		t.Fatalf("log start checkpoint %v", ls)
	}
	hw, _ := ReadOffsetCheckpoint(vfs.Default, filepath.Join(d, ReplicationCheckpointFile))
	if hw[TopicPartition{"orders", 3}] != 8 {
		t.Fatalf("replication checkpoint %v", hw)
	}

	// Restart: clean, so nothing is recovered; the markers go.
	m2, err := NewManager(vfs.Default, dirs, managerOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m2.LoadAll()
	if err != nil || len(logs) != 3 {
		t.Fatalf("reloaded %d logs: %v", len(logs), err)
	}
	for tp, l := range logs {
		want := int64(2 * (tp.Partition + 1))
		if l.LogEndOffset() != want {
			t.Fatalf("%s LEO %d, want %d", tp, l.LogEndOffset(), want)
		}
		checkLog(t, l)
	}
	if l := logs[TopicPartition{"orders", 3}]; l.LogStartOffset() != 4 || l.HighWatermark() != 8 {
		t.Fatalf("log start %d hw %d", l.LogStartOffset(), l.HighWatermark())
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, CleanShutdownFile)); !os.IsNotExist(err) {
			t.Fatalf("marker still in %s after load", d)
		}
	}
	// Simulated crash: no Shutdown. The next start recovers from the
	// checkpointed recovery points.
	mustAppend(t, logs[TopicPartition{"orders", 0}], makeBatch(1, 10, 1), 0)
	m3, err := NewManager(vfs.Default, dirs, managerOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	logs3, err := m3.LoadAll()
	if err != nil || logs3[TopicPartition{"orders", 0}].LogEndOffset() != 3 {
		t.Fatalf("after crash: %v", err)
	}
	m3.Shutdown()
	m2.Shutdown()

	// Another node's dirs are refused.
	opts := managerOptions(clock)
	opts.NodeID = 2
	if _, err := NewManager(vfs.Default, dirs, opts); err == nil {
		t.Fatal("opened another node's log dir")
	}
}

func TestManagerBackgroundRetention(t *testing.T) {
	clock := newTestClock()
	opts := managerOptions(clock)
	opts.RetentionCheckIntervalMs = 10
	opts.DeletionCheckIntervalMs = 10
	m, err := NewManager(vfs.Default, []string{t.TempDir()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.LoadAll()
	cfg := smallConfig()
	cfg.RetentionMs = 1000
	cfg.SegmentBytes = 1000
	l, _ := m.Create(TopicPartition{"t", 0}, [16]byte{1}, cfg)
	for i := 0; i < 10; i++ {
		mustAppend(t, l, makeBatch(1, 600, clock.Now().Add(-time.Hour).UnixMilli()), 0)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	m.Start(context.Background())
	defer m.Shutdown()
	deadline := time.Now().Add(10 * time.Second)
	for l.LogStartOffset() != 10 {
		if time.Now().After(deadline) {
			t.Fatalf("retention did not run: log start %d", l.LogStartOffset())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManagerManyPartitionsStartup loads many partitions after a clean
// shutdown and checks closed segments were not opened.
func TestManagerManyPartitionsStartup(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 500
	}
	// In memory: creating thousands of files on a shared disk is slow.
	mem := vfs.NewMem()
	root := "/data"
	clock := newTestClock()
	m, _ := NewManager(mem, []string{root}, managerOptions(clock))
	m.LoadAll()
	cfg := smallConfig()
	cfg.SegmentIndexBytes = 1024
	// One real partition with a closed and an active segment, cloned n-1
	// times (cheaper than n rounds of Create and Append).
	l, err := m.Create(TopicPartition{"many", 0}, [16]byte{9}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(1, 10, 1), 0)
	l.Roll()
	mustAppend(t, l, makeBatch(1, 10, 1), 0)
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	entries, err := mem.ReadDir("/data/many-0")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		f, _ := mem.Open("/data/many-0/" + e.Name())
		info, _ := f.Stat()
		b := make([]byte, info.Size())
		f.ReadAt(b, 0)
		f.Close()
		files[e.Name()] = b
	}
	for p := 1; p < n; p++ {
		dir := fmt.Sprintf("/data/many-%d", p)
		mem.MkdirAll(dir, 0o755)
		for name, b := range files {
			f, _ := mem.Create(dir + "/" + name)
			f.Write(b)
			f.Close()
		}
	}
	ffs := vfs.NewFaultFS(mem)
	// Every partition's first segment is closed: touching it fails.
	ffs.Inject(vfs.Fault{Ops: vfs.OpOpen | vfs.OpRead, PathContains: "00000000000000000000.", Err: vfs.ErrIO})
	start := time.Now()
	m2, _ := NewManager(ffs, []string{root}, managerOptions(clock))
	logs, err := m2.LoadAll()
	if err != nil || len(logs) != n {
		t.Fatalf("loaded %d: %v", len(logs), err)
	}
	t.Logf("loaded %d partitions in %v", n, time.Since(start))
	if ffs.Injected() != 0 {
		t.Fatalf("startup opened %d closed-segment files", ffs.Injected())
	}
	ffs.Clear()
	if r, err := logs[TopicPartition{"many", 5}].Read(0, 100, 2, true); err != nil || r.Bytes == 0 {
		t.Fatalf("lazy read: %v", err)
	}
	m2.Shutdown()
}

func TestParsePartitionDirName(t *testing.T) {
	for name, want := range map[string]TopicPartition{
		"orders-0":              {"orders", 0},
		"my-topic-12":           {"my-topic", 12},
		"__consumer_offsets-49": {"__consumer_offsets", 49},
	} {
		if got, ok := parsePartitionDirName(name); !ok || got != want {
			t.Errorf("%s: %v %v", name, got, ok)
		}
	}
	for _, name := range []string{"orders", "-1", "orders-", "orders-x"} {
		if got, ok := parsePartitionDirName(name); ok {
			t.Errorf("%s parsed as %v", name, got)
		}
	}
}
