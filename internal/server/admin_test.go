package server

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestListOffsetsByTime(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "times", 1, nil)
	cl := tn.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 10 {
		r := &kgo.Record{Topic: "times", Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Minute)}
		if err := cl.ProduceSync(testContext(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := tn.admin()
	ctx := testContext(t)
	at, err := adm.ListOffsetsAfterMilli(ctx, base.Add(4*time.Minute+time.Second).UnixMilli(), "times")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := at.Lookup("times", 0); o.Offset != 5 || o.Err != nil {
		t.Fatalf("offset after minute 4: %+v, want 5", o)
	}
	after, err := adm.ListOffsetsAfterMilli(ctx, time.Now().Add(time.Hour).UnixMilli(), "times")
	if err != nil {
		t.Fatal(err)
	}
	// Past the newest record Kafka answers -1; kadm maps that to the end offset.
	if o, _ := after.Lookup("times", 0); o.Offset != 10 && o.Offset != -1 {
		t.Fatalf("offset after the last record: %+v", o)
	}
	start, err := adm.ListStartOffsets(ctx, "times")
	if err != nil {
		t.Fatal(err)
	}
	end, err := adm.ListEndOffsets(ctx, "times")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := start.Lookup("times", 0); s.Offset != 0 {
		t.Fatalf("start %d", s.Offset)
	}
	if e, _ := end.Lookup("times", 0); e.Offset != 10 {
		t.Fatalf("end %d", e.Offset)
	}
	maxTs, err := adm.ListMaxTimestampOffsets(ctx, "times")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := maxTs.Lookup("times", 0); o.Offset != 9 || o.Timestamp != base.Add(9*time.Minute).UnixMilli() {
		t.Fatalf("max timestamp offset %+v", o)
	}
}

func TestAlterAndDescribeConfigs(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "cfg", 1, nil)
	ctx := testContext(t)
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("12345")}, {Name: "cleanup.policy", Value: kadm.StringPtr("compact,delete")}}, "cfg")
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter: %v %v", err, resp)
	}
	described, err := adm.DescribeTopicConfigs(ctx, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := described.On("cfg", nil)
	values := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		values[c.Key] = c
	}
	if v := values["retention.ms"]; v.MaybeValue() != "12345" || v.Source.String() != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("retention.ms %+v", v)
	}
	if v := values["segment.bytes"]; v.MaybeValue() != "1073741824" || v.Source.String() != "DEFAULT_CONFIG" {
		t.Fatalf("segment.bytes %+v", v)
	}
	bad, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("soon")}}, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(bad[0].Err, kerr.InvalidConfig) {
		t.Fatalf("bad value: %v", bad[0].Err)
	}
	missing, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("1")}}, "nope")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(missing[0].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %v", missing[0].Err)
	}
	// Delete the override: back to the default.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "retention.ms"}}, "cfg"); err != nil {
		t.Fatal(err)
	}
	described, _ = adm.DescribeTopicConfigs(ctx, "cfg")
	rc, _ = described.On("cfg", nil)
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" && c.MaybeValue() != "604800000" {
			t.Fatalf("retention.ms after delete %q", c.MaybeValue())
		}
	}
	brokers, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rc := range brokers {
		for _, c := range rc.Configs {
			if c.Key == "num.io.threads" && c.MaybeValue() == "8" {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("broker configs lack num.io.threads=8")
	}
}

func TestDeleteRecordsAndTopics(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "del", 1, nil)
	produceKeyed(t, tn.client(), "del", 100)
	ctx := testContext(t)
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "del", Partition: 0, At: 40})
	resp, err := adm.DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := resp.Lookup("del", 0); r.Err != nil || r.LowWatermark != 40 {
		t.Fatalf("delete records: %+v", r)
	}
	start, _ := adm.ListStartOffsets(ctx, "del")
	if s, _ := start.Lookup("del", 0); s.Offset != 40 {
		t.Fatalf("start offset %d after DeleteRecords", s.Offset)
	}
	recs := consumeAll(t, tn, "del", 60)
	if recs[0].Offset != 40 {
		t.Fatalf("first record at %d", recs[0].Offset)
	}
	beyond := kadm.Offsets{}
	beyond.Add(kadm.Offset{Topic: "del", Partition: 0, At: 1000})
	resp, _ = adm.DeleteRecords(ctx, beyond)
	if r, _ := resp.Lookup("del", 0); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("delete beyond the high watermark: %v", r.Err)
	}

	dr, err := adm.DeleteTopics(ctx, "del", "never-existed")
	if err != nil {
		t.Fatal(err)
	}
	if dr["del"].Err != nil || !errors.Is(dr["never-existed"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete topics: %+v", dr)
	}
	topics, _ := adm.ListTopics(ctx)
	if topics.Has("del") {
		t.Fatal("topic still listed after delete")
	}
	// The name can be reused, and the new topic starts empty.
	mustCreateTopic(t, adm, "del", 2, nil)
	end, _ := adm.ListEndOffsets(ctx, "del")
	if e, _ := end.Lookup("del", 0); e.Offset != 0 {
		t.Fatalf("re-created topic starts at %d", e.Offset)
	}
	tn.restart()
	topics, _ = tn.admin().ListTopics(testContext(t))
	if d := topics["del"]; len(d.Partitions) != 2 {
		t.Fatalf("after restart: %+v", d)
	}
}

func TestCreatePartitions(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "grow", 2, nil)
	ctx := testContext(t)
	resp, err := adm.UpdatePartitions(ctx, 5, "grow")
	if err != nil || resp["grow"].Err != nil {
		t.Fatalf("grow: %v %+v", err, resp)
	}
	resp, _ = adm.UpdatePartitions(ctx, 3, "grow")
	if !errors.Is(resp["grow"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrink: %v", resp["grow"].Err)
	}
	produceKeyed(t, tn.client(), "grow", 200)
	recs := consumeAll(t, tn, "grow", 200)
	parts := map[int32]bool{}
	for _, r := range recs {
		parts[r.Partition] = true
	}
	if len(parts) != 5 {
		t.Fatalf("records on %d partitions, want 5", len(parts))
	}
}

func TestLongPollFetchWakesOnAppend(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "poll", 1, nil)
	consumer := tn.client(kgo.ConsumeTopics("poll"), kgo.FetchMaxWait(30*time.Second))
	ctx := testContext(t)
	// Let the consumer reach the empty log and park its fetch.
	done := make(chan []*kgo.Record, 1)
	go func() {
		fetches := consumer.PollFetches(ctx)
		done <- fetches.Records()
	}()
	deadline := time.Now().Add(20 * time.Second)
	var got []*kgo.Record
	for got == nil && time.Now().Before(deadline) {
		produceKeyed(t, tn.client(), "poll", 1)
		select {
		case got = <-done:
		case <-time.After(500 * time.Millisecond):
		}
	}
	if len(got) == 0 {
		t.Fatal("a parked fetch was not woken by appends within 20s (max wait is 30s)")
	}
}

func TestMetricsEndpoint(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "m", 1, nil)
	before := scrape(t, tn)
	produceKeyed(t, tn.client(), "m", 50)
	consumeAll(t, tn, "m", 50)
	after := scrape(t, tn)
	for _, series := range []string{
		`samsa_topic_bytes_in_total{topic="m"}`,
		`samsa_request_total_seconds_count{api="Produce"}`,
		`samsa_topic_bytes_out_total{topic="m"}`,
	} {
		if after[series] <= before[series] {
			t.Errorf("%s did not grow: %v -> %v", series, before[series], after[series])
		}
	}
	for _, series := range []string{"samsa_partitions", "samsa_active_controller_count", "go_gc_duration_seconds_count"} {
		if _, ok := after[series]; !ok {
			t.Errorf("series %s missing", series)
		}
	}
}
