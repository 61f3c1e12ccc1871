package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupsShare: "groups list" shows a share group with type share, and
// "groups describe-share" its member, assignment and share-partition
// start offset once records are consumed.
func TestGroupsShare(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "jobs", 1)
	consumer, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ClientID("share-worker"),
		kgo.ShareGroup("workers"), kgo.ConsumeTopics("jobs"), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.DefaultProduceTopic("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	// The share-partition starts at the log end when first fetched: keep
	// producing until the consumer gets a record.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got == 0 && ctx.Err() == nil; {
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("job")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pollCtx, pollCancel := context.WithTimeout(ctx, 300*time.Millisecond)
		got = consumer.PollRecords(pollCtx, 10).NumRecords()
		pollCancel()
	}
	pollCtx, pollCancel := context.WithTimeout(ctx, 300*time.Millisecond)
	consumer.PollRecords(pollCtx, 1) // acknowledges what the last poll returned
	pollCancel()
	if err := consumer.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, bootstrap, "", "groups", "list").stdout
	if rows := tableRows(out, "workers"); len(rows) != 1 || rows[0][1] != "Stable" || rows[0][2] != "share" {
		t.Errorf("groups list rows for workers: %v\n%s", rows, out)
	}
	var described []describedShareGroup
	eventually(t, "the share-partition to move past the consumed records", func() bool {
		decodeJSON(t, mustRun(t, bootstrap, "", "groups", "describe-share", "workers", "-o", "json").stdout, &described)
		return len(described) == 1 && len(described[0].Partitions) == 1 && described[0].Partitions[0].StartOffset > 0
	})
	d := described[0]
	if d.State != "Stable" || d.Assignor != "simple" || len(d.Members) != 1 || d.Members[0].ClientID != "share-worker" ||
		len(d.Members[0].Assignment) != 1 || d.Members[0].Assignment[0].Topic != "jobs" {
		t.Errorf("describe-share: %+v", d)
	}
	out = mustRun(t, bootstrap, "", "groups", "describe-share", "workers").stdout
	for _, want := range []string{"Group:        workers", "Assignor:     simple", "START-OFFSET", "jobs:0"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe-share lacks %q:\n%s", want, out)
		}
	}
}
