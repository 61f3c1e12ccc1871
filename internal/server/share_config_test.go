package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func alterGroupConfigs(ctx context.Context, t *testing.T, cl *kgo.Client, group string, kvs ...string) int16 {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i < len(kvs); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kvs[i], kmsg.StringPtr(kvs[i+1])
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Resources[0].ErrorCode
}

// TestShareGroupConfigs: the group configs share.auto.offset.reset,
// share.isolation.level and share.record.lock.duration.ms, set with
// IncrementalAlterConfigs on the GROUP resource as Kafka's tools do:
// earliest delivers records produced before the group existed,
// read_committed never delivers an aborted transaction's records, the
// lock duration reaches the client; bad values answer INVALID_CONFIG and
// DescribeConfigs shows the values.
func TestShareGroupConfigs(t *testing.T) {
	tn := shareTestNode(t, "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1")
	const topic, group = "share-configs", "sg-configs"
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	ctx := testContext(t)
	cl := tn.client()
	if code := alterGroupConfigs(ctx, t, cl, group, "share.auto.offset.reset", "sometimes"); code != kerr.InvalidConfig.Code {
		t.Fatalf("bad reset value: %v", kerr.ErrorForCode(code))
	}
	if code := alterGroupConfigs(ctx, t, cl, group, "share.record.lock.duration.ms", "999999999"); code != kerr.InvalidConfig.Code {
		t.Fatalf("lock duration out of range: %v", kerr.ErrorForCode(code))
	}
	if code := alterGroupConfigs(ctx, t, cl, group, "no.such.config", "1"); code != kerr.InvalidConfig.Code {
		t.Fatalf("unknown config: %v", kerr.ErrorForCode(code))
	}
	if code := alterGroupConfigs(ctx, t, cl, group, "share.auto.offset.reset", "earliest", "share.isolation.level", "read_committed",
		"share.record.lock.duration.ms", "15000"); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	describe := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	describe.Resources = append(describe.Resources, dr)
	described, err := describe.RequestWith(ctx, cl)
	if err != nil || described.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe group configs: %+v %v", described, err)
	}
	values := map[string]string{}
	for _, c := range described.Resources[0].Configs {
		if c.Value != nil {
			values[c.Name] = *c.Value
		}
	}
	if values["share.auto.offset.reset"] != "earliest" || values["share.isolation.level"] != "read_committed" || values["share.session.timeout.ms"] != "45000" {
		t.Errorf("described group configs: %v", values)
	}

	// Before any consumer: committed 0-2, an aborted transaction, committed 3-4.
	produceShareRecords(t, tn, topic, 0, 3)
	txn := tn.client(kgo.TransactionalID("share-configs-txn"), kgo.DefaultProduceTopic(topic))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := txn.ProduceSync(ctx, &kgo.Record{Key: []byte("aborted-" + strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	produceShareRecords(t, tn, topic, 3, 5)

	consumer := shareConsumer(t, tn, group, topic)
	got := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < 5 && time.Now().Before(deadline) {
		pollCtx, cancel := context.WithTimeout(ctx, time.Second)
		consumer.PollRecords(pollCtx, 100).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = true })
		cancel()
	}
	for i := range 5 {
		if !got[strconv.Itoa(i)] {
			t.Errorf("committed record %d produced before the group existed was not delivered: %v", i, got)
		}
	}
	for k := range got {
		if len(k) > 1 {
			t.Errorf("aborted record %s delivered under read_committed", k)
		}
	}
	// The lock duration reaches share fetches.
	fetch := kmsg.NewPtrShareFetchRequest()
	fetch.GroupID, fetch.MemberID, fetch.MaxBytes = kmsg.StringPtr(group), kmsg.StringPtr("raw-member"), 1<<20
	resp, err := fetch.RequestWith(ctx, cl.Broker(1))
	if err != nil || resp.ErrorCode != 0 || resp.AcquisitionLockTimeoutMillis != 15000 {
		t.Fatalf("share fetch lock duration: %+v %v", resp, err)
	}
}
