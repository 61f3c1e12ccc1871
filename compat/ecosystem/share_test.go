package ecosystem

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestJavaKafkaShareConsumer: three of Apache Kafka's KafkaShareConsumers
// (compat/java, samsa.compat.ShareQueue) on one share group over six
// partitions accept every record exactly once, with explicit
// acknowledgements, and a record released by every delivery is delivered
// group.share.delivery.count.limit times, then archived; the group's
// offsets then stand at the log end. share.auto.offset.reset=earliest is
// set as a group config, as Kafka's tools set it.
func TestJavaKafkaShareConsumer(t *testing.T) {
	classpath := needJava(t)
	node := clustertest.StartNode(t, "group.share.delivery.count.limit=3")
	cl, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()), kgo.DefaultProduceTopic("jobs"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, "jobs"); err != nil {
		t.Fatal(err)
	}
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "java-workers"
	res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "share.auto.offset.reset", Value: kmsg.StringPtr("earliest")}}
	alter.Resources = append(alter.Resources, res)
	if resp, err := alter.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("group config: %v %v", err, resp)
	}
	const total = 3000
	for i := range total {
		cl.Produce(ctx, &kgo.Record{Key: []byte("job-" + strconv.Itoa(i)), Value: []byte("x")}, nil)
	}
	cl.Produce(ctx, &kgo.Record{Key: []byte("poison"), Value: []byte("x")}, nil)
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "java", "-Xmx256m", "-XX:+UseSerialGC",
		"-Dlog4j2.configurationFile="+filepath.Join("..", "java", "log4j2.properties"),
		"-cp", classpath, "samsa.compat.ShareQueue", node.Addr(), "jobs", "java-workers", "3", strconv.Itoa(total), "3", "120")
	out, err := cmd.Output()
	line := strings.TrimSpace(string(out))
	t.Logf("KafkaShareConsumer x3: %s", line)
	if err != nil {
		var stderr []byte
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = exit.Stderr
		}
		t.Fatalf("ShareQueue: %v: %s\n%s", err, line, stderr)
	}
	fields := strings.Fields(line)
	if len(fields) != 8 || fields[1] != strconv.Itoa(total) || fields[3] != "0" {
		t.Fatalf("want every record accepted once: %s", line)
	}
	if fields[7] != "3" {
		t.Errorf("the poison record was delivered %s times, want group.share.delivery.count.limit (3)", fields[7])
	}
	// Every share-partition ends past its records: accepted or archived.
	clustertest.WaitFor(t, 30*time.Second, func() error {
		described, err := adm.DescribeShareGroupOffsets(ctx, "java-workers")
		if err != nil {
			return err
		}
		ends, err := adm.ListEndOffsets(ctx, "jobs")
		if err != nil {
			return err
		}
		for p := range int32(6) {
			end, _ := ends.Lookup("jobs", p)
			req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
			req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "java-workers", Topics: []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "jobs", Partitions: []int32{p}}}}}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return err
			}
			got := resp.Groups[0].Topics[0].Partitions[0]
			if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
				return err
			}
			if got.StartOffset != end.Offset {
				return &startOffsetError{p, got.StartOffset, end.Offset, described}
			}
		}
		return nil
	})
}

type startOffsetError struct {
	partition  int32
	start, end int64
	described  kadm.DescribedShareGroupsOffsets
}

func (e *startOffsetError) Error() string {
	return "partition " + strconv.Itoa(int(e.partition)) + ": share-partition start " + strconv.FormatInt(e.start, 10) + ", log end " + strconv.FormatInt(e.end, 10)
}
