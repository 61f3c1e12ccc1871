package clustertest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientQuotasOnEveryBroker alters client quotas through every node of
// a three-node cluster, so that some forward to the active controller, and
// checks that every node then describes all of them and throttles a
// producer over its quota.
func TestClientQuotasOnEveryBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "quota.window.num=2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, n := range c.Nodes {
		cl := newClient(t, []string{n.Addr()}, kgo.RequestRetries(0))
		req := kmsg.NewPtrAlterClientQuotasRequest()
		entry := kmsg.NewAlterClientQuotasRequestEntry()
		entity := kmsg.NewAlterClientQuotasRequestEntryEntity()
		entity.Type, entity.Name = "client-id", kmsg.StringPtr(fmt.Sprintf("client-%d", i+1))
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = "producer_byte_rate", 1<<20
		entry.Entity, entry.Ops = append(entry.Entity, entity), append(entry.Ops, op)
		req.Entries = append(req.Entries, entry)
		resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
		if err != nil {
			t.Fatalf("AlterClientQuotas on node %d: %v", i+1, err)
		}
		if err := kerr.ErrorForCode(resp.Entries[0].ErrorCode); err != nil {
			t.Fatalf("AlterClientQuotas on node %d: %v", i+1, err)
		}
	}
	for i, n := range c.Nodes {
		adm := kadm.NewClient(newClient(t, []string{n.Addr()}))
		WaitFor(t, 30*time.Second, func() error {
			described, err := adm.DescribeClientQuotas(ctx, false, nil)
			if err != nil {
				return err
			}
			if len(described) != 3 {
				return fmt.Errorf("node %d describes %d quotas", i+1, len(described))
			}
			return nil
		})
	}
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "quota"); err != nil {
		t.Fatal(err)
	}
	// Every partition leader measures what it receives against client-1's
	// quota, as Kafka's brokers do: 3 MB to each of three partitions is
	// throttled.
	var throttles atomic.Int64
	hook := hookFunc(func() { throttles.Add(1) })
	producer := newClient(t, c.Addrs(), kgo.ClientID("client-1"), kgo.WithHooks(hook), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	value := make([]byte, 64<<10)
	for i := range value {
		value[i] = byte(i * 7)
	}
	for i := 0; i < 3*16*3; i++ {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "quota", Partition: int32(i % 3), Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if throttles.Load() == 0 {
		t.Fatal("client-1 was never throttled")
	}
}

// hookFunc counts franz-go's throttle notices.
type hookFunc func()

func (h hookFunc) OnBrokerThrottle(kgo.BrokerMetadata, time.Duration, bool) { h() }
