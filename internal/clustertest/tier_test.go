package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listOffsetAt asks one node for a ListOffsets spec of partition 0.
func listOffsetAt(ctx context.Context, addr, topic string, timestamp int64) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, timestamp, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return 0, err
	}
	sp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		return 0, err
	}
	return sp.Offset, nil
}

// TestTieredReassignToEmptyReplica offloads a partition on brokers {1,2}
// whose local retention keeps about one segment, reassigns it to {1,3}:
// broker 3 starts empty, is answered OFFSET_MOVED_TO_TIERED_STORAGE, builds
// its state from the bucket (leader epochs, producer snapshot) and fetches
// the leader's local tail only. With broker 1 stopped, broker 3 leads and
// serves every record from offset 0, the old ones from the bucket, and
// ListOffsets answers the remote start and its own local start.
func TestTieredReassignToEmptyReplica(t *testing.T) {
	bucket := "file://" + t.TempDir()
	c := StartCluster(t, 3, "remote.log.storage.system.enable=true", "rsm.config.bucket.url="+bucket,
		"remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200")
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("moved"),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createAssignedTopic(t, ctx, cl, "moved", []int32{1, 2}, "1")
	adm := kadm.NewClient(cl)
	for key, value := range map[string]string{"remote.storage.enable": "true", "segment.bytes": "1048576", "local.retention.bytes": "1048576"} {
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: key, Value: kadm.StringPtr(value)}}, "moved")
		if err != nil || resp[0].Err != nil {
			t.Fatalf("alter %s: %v %v", key, err, resp)
		}
	}
	const records = 1500
	value := bytes.Repeat([]byte("m"), 3000)
	for i := range records {
		cl.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	leader := c.Nodes[0].Addr()
	var localStart int64
	WaitFor(t, 60*time.Second, func() error {
		var err error
		if localStart, err = listOffsetAt(ctx, leader, "moved", -4); err != nil {
			return err
		}
		if localStart < 600 {
			return fmt.Errorf("leader local start %d", localStart)
		}
		return nil
	})

	var move kadm.AlterPartitionAssignmentsReq
	move.Assign("moved", 0, []int32{1, 3})
	if resp, err := adm.AlterPartitionAssignments(ctx, move); err != nil || resp["moved"][0].Err != nil {
		t.Fatalf("reassign: %v %v", err, resp)
	}
	waitReplicas(t, c, "moved", 0, []int32{1, 3}, 60*time.Second)
	rebuilt := false
	c.Nodes[2].LogLines(func(line string) {
		if bytes.Contains([]byte(line), []byte("follower log rebuilt from the remote tier")) {
			rebuilt = true
		}
	})
	if !rebuilt {
		t.Fatal("broker 3 did not rebuild its state from the remote tier")
	}

	c.Nodes[0].Stop()
	newLeader := c.Nodes[2].Addr()
	WaitFor(t, 60*time.Second, func() error {
		st, err := replicaStateOf(ctx, newLeader, "moved", 0)
		if err != nil {
			return err
		}
		if st.leader != 3 {
			return fmt.Errorf("leader %d", st.leader)
		}
		return nil
	})
	if got, err := listOffsetAt(ctx, newLeader, "moved", -2); err != nil || got != 0 {
		t.Fatalf("earliest on the new leader = %d, %v", got, err)
	}
	newLocalStart, err := listOffsetAt(ctx, newLeader, "moved", -4)
	if err != nil || newLocalStart < localStart {
		t.Fatalf("earliest local on the new leader = %d (the old leader's was %d), %v", newLocalStart, localStart, err)
	}
	WaitFor(t, 30*time.Second, func() error {
		tiered, err := listOffsetAt(ctx, newLeader, "moved", -5)
		if err != nil || tiered < newLocalStart-1 {
			return fmt.Errorf("latest tiered on the new leader = %d below its local start %d, %v", tiered, newLocalStart, err)
		}
		return nil
	})
	// Timestamp 0: the first record, found in the remote time indexes.
	if got, err := listOffsetAt(ctx, newLeader, "moved", 0); err != nil || got != 0 {
		t.Fatalf("offset for timestamp 0 on the new leader = %d, %v", got, err)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(newLeader), kgo.ConsumeTopics("moved"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	readCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	next := int64(0)
	for next < records {
		fetches := consumer.PollFetches(readCtx)
		if readCtx.Err() != nil {
			t.Fatalf("consumed %d of %d from the new leader", next, records)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != next || string(r.Key) != strconv.FormatInt(next, 10) {
				t.Fatalf("record at %d key %q, want %d", r.Offset, r.Key, next)
			}
			next++
		})
	}
}
