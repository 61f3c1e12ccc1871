package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkGroupsPage measures one page of the groups list with 2000
// groups on a real node, beside the reference of kadm.Lag for the same 50
// groups (what a client computing the page's lag itself would send).
//
//	go test -run '^$' -bench BenchmarkGroupsPage ./internal/console/
func BenchmarkGroupsPage(b *testing.B) {
	n := startConsoleNode(b)
	client, err := kgo.NewClient(kgo.SeedBrokers(n.seed))
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	ctx := context.Background()
	if _, err := admin.CreateTopic(ctx, 4, 1, nil, "events"); err != nil {
		b.Fatal(err)
	}
	if err := client.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("v")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	const groups = 2000
	var firstPage []string
	for i := range groups {
		group := fmt.Sprintf("group-%04d", i)
		if i < 50 {
			firstPage = append(firstPage, group)
		}
		offsets := kadm.Offsets{}
		for p := range int32(4) {
			offsets.AddOffset("events", p, 0, -1)
		}
		if err := admin.CommitAllOffsets(ctx, group, offsets); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("console", func(b *testing.B) {
		for b.Loop() {
			resp, err := http.Get(n.url + "/groups?search=group-")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.Status)
			}
		}
	})
	b.Run("kadm-lag-reference", func(b *testing.B) {
		for b.Loop() {
			if _, err := admin.ListGroups(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := admin.Lag(ctx, firstPage...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
