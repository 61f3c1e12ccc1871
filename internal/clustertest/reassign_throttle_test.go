package clustertest

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReassignmentThrottle moves a partition holding 100 MB to a second,
// empty broker with `samsa topics reassign --throttle 5000000`, as
// kafka-reassign-partitions --throttle does: the new replica grows at
// 5 MB/s ± 10% (measured from its size in DescribeLogDirs), `--verify`
// changes nothing while the move runs, and once it is done removes the
// topic's throttled replica lists and every broker's throttle rates.
//
// The quota is measured over two one-second windows here. With Kafka's
// default of eleven, a throttle admits a burst of about eleven seconds'
// worth at once and then nothing until those windows expire, in Samsa as in
// Kafka: the average holds over a long move, but a 100 MB one would see two
// bursts.
func TestReassignmentThrottle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "replication.quota.window.num=2", "replication.quota.window.size.seconds=1")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const topic, rate, total = "throttled", 5_000_000, 100 << 20
	cl := c.client(t, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	adm := kadm.NewClient(cl)
	createAssignedTopic(t, ctx, cl, topic, []int32{1}, "1")
	value := make([]byte, 100<<10)
	rand.Read(value)
	var records []*kgo.Record
	for range total / len(value) {
		records = append(records, &kgo.Record{Topic: topic, Value: value})
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	leaderSize := replicaSize(t, ctx, adm, 1, topic)

	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(Binary(t), append([]string{"-b", strings.Join(c.Addrs(), ",")}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("samsa %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start := time.Now()
	cli("topics", "reassign", topic, "--partition", "0", "--replicas", "1,2", "--throttle", fmt.Sprint(rate))

	type sample struct {
		at   time.Duration
		size int64
	}
	var samples []sample
	verifiedDuringMove := false
	for {
		size := replicaSize(t, ctx, adm, 2, topic)
		samples = append(samples, sample{time.Since(start), size})
		if size >= leaderSize {
			break
		}
		if !verifiedDuringMove && size > leaderSize/4 {
			if out := cli("topics", "reassign", topic, "--verify"); !strings.Contains(out, "still in progress") {
				t.Fatalf("--verify during the move: %s", out)
			}
			verifiedDuringMove = true
		}
		if ctx.Err() != nil || time.Since(start) > 3*time.Minute {
			st, _ := topicState(ctx, c.Nodes[0].Addr(), topic)
			logNodeWarnings(t, c)
			t.Logf("partition state: %+v", st)
			t.Fatalf("the new replica holds %d of %d bytes after %v", size, leaderSize, time.Since(start))
		}
		time.Sleep(250 * time.Millisecond)
	}
	// The first window may carry a second's worth at once; the steady rate
	// is measured between 30% and 95%.
	var from, to *sample
	for i := range samples {
		if from == nil && samples[i].size >= leaderSize*30/100 {
			from = &samples[i]
		}
		if samples[i].size <= leaderSize*95/100 {
			to = &samples[i]
		}
	}
	if from == nil || to == nil || to.at-from.at < 3*time.Second {
		t.Fatalf("too few samples in the steady part of the move: %v", samples)
	}
	measured := float64(to.size-from.size) / (to.at - from.at).Seconds()
	t.Logf("new replica grew at %.2f MB/s between %.0f%% and %.0f%% (throttle %.2f MB/s); the whole move took %v",
		measured/1e6, 100*float64(from.size)/float64(leaderSize), 100*float64(to.size)/float64(leaderSize), float64(rate)/1e6, samples[len(samples)-1].at)
	if math.Abs(measured-rate)/rate > 0.10 {
		t.Fatalf("replication ran at %.0f B/s, want %d ± 10%%", measured, rate)
	}

	waitReplicas(t, c, topic, 0, []int32{1, 2}, 60*time.Second)
	WaitFor(t, 30*time.Second, func() error {
		if out := cli("topics", "reassign", topic, "--verify"); !strings.Contains(out, "Throttles removed.") {
			return fmt.Errorf("--verify: %s", out)
		}
		return nil
	})
	// Each broker answers DescribeConfigs from its own metadata image, so
	// the removal reaches every one of them shortly after --verify.
	WaitFor(t, 30*time.Second, func() error {
		configs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return err
		}
		for _, rc := range configs {
			for _, cfg := range rc.Configs {
				if strings.HasSuffix(cfg.Key, ".replication.throttled.replicas") && cfg.MaybeValue() != "" {
					return fmt.Errorf("%s=%q left after --verify", cfg.Key, cfg.MaybeValue())
				}
			}
		}
		brokers, err := adm.DescribeBrokerConfigs(ctx, 1, 2, 3)
		if err != nil {
			return err
		}
		for _, rc := range brokers {
			for _, cfg := range rc.Configs {
				if strings.HasSuffix(cfg.Key, ".replication.throttled.rate") && cfg.MaybeValue() != "9223372036854775807" {
					return fmt.Errorf("broker %s: %s=%q left after --verify", rc.Name, cfg.Key, cfg.MaybeValue())
				}
			}
		}
		return nil
	})
}

// replicaSize is the size of partition 0 of topic on broker, from
// DescribeLogDirs.
func replicaSize(t *testing.T, ctx context.Context, adm *kadm.Client, broker int32, topic string) int64 {
	t.Helper()
	dirs, err := adm.DescribeBrokerLogDirs(ctx, broker, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	dirs.EachPartition(func(p kadm.DescribedLogDirPartition) { size += p.Size })
	return size
}
