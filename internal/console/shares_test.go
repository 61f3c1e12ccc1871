package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shareNodeOverrides are share-group timings short enough for tests.
var shareNodeOverrides = []string{
	"group.share.heartbeat.interval.ms=1000", "group.share.min.heartbeat.interval.ms=1000",
	"group.share.min.record.lock.duration.ms=1000", "group.share.record.lock.duration.ms=2000",
}

// startShareConsumer creates topic with one partition, starts a kgo share
// consumer of it in group, and produces until the consumer has received
// and acknowledged records, so the group has a member and its
// share-partition a start offset past 0. The share-partition starts at the
// log end when first fetched (share.auto.offset.reset=latest), hence the
// loop. It returns the consumer and how many records were produced.
func startShareConsumer(t *testing.T, ctx context.Context, n *consoleNode, group, topic string) (*kgo.Client, int64) {
	t.Helper()
	admin := kadm.NewClient(newClient(t, n.seed))
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(n.seed), kgo.ClientID("share-worker"), kgo.ShareGroup(group),
		kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(consumer.Close)
	producer := newClient(t, n.seed, kgo.DefaultProduceTopic(topic))
	produced := int64(0)
	for got := 0; got == 0; {
		if ctx.Err() != nil {
			t.Fatal("the share consumer received no record")
		}
		produce(t, producer, &kgo.Record{Value: fmt.Appendf(nil, "job-%d", produced)})
		produced++
		pollCtx, pollCancel := context.WithTimeout(ctx, 300*time.Millisecond)
		got = consumer.PollRecords(pollCtx, 100).NumRecords()
		pollCancel()
	}
	pollCtx, pollCancel := context.WithTimeout(ctx, 300*time.Millisecond)
	consumer.PollRecords(pollCtx, 1) // acknowledges what the last poll returned
	pollCancel()
	if err := consumer.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	// Records the consumer has not seen, so the share-partition has lag.
	for range 3 {
		produce(t, producer, &kgo.Record{Value: []byte("later")})
		produced++
	}
	return consumer, produced
}

// shareStart is the share-partition start offset and lag of group on
// topic-0 as kadm reads them.
func shareStart(t *testing.T, ctx context.Context, admin *kadm.Client, group, topic string) (start, lag int64, found bool) {
	t.Helper()
	described, err := admin.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := described[group].Offsets[topic][0]
	return o.StartOffset, o.Lag, ok
}

// waitShareMembers polls ShareGroupDescribe until group has want members.
func waitShareMembers(t *testing.T, ctx context.Context, admin *kadm.Client, group string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		described, err := admin.DescribeShareGroups(ctx, group)
		if err == nil && described[group].Err == nil && len(described[group].Members) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("share group %s: want %d members: %v %+v", group, want, err, described[group])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func postForm(t *testing.T, target string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(target, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestConsoleShareGroup checks a share group's pages without a browser:
// the list links it with its members and lag, its page shows what
// ShareGroupDescribe and DescribeShareGroupOffsets answer kadm, a reset is
// previewed without change and refused while the group has members, bad
// input answers 400, and once the consumer has left a reset, an offset
// deletion and the group's deletion are seen by kadm.
func TestConsoleShareGroup(t *testing.T) {
	n := startConsoleNode(t, shareNodeOverrides...)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	admin := kadm.NewClient(newClient(t, n.seed))
	consumer, produced := startShareConsumer(t, ctx, n, "workers", "jobs")

	var start, lag int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		var found bool
		if start, lag, found = shareStart(t, ctx, admin, "workers", "jobs"); found && start > 0 && lag > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the share-partition did not move past the consumed records: start %d lag %d", start, lag)
		}
		time.Sleep(50 * time.Millisecond)
	}

	status, body := get(t, n.url+"/groups")
	if status != 200 || !strings.Contains(body, `href="/share-groups/workers"`) ||
		!strings.Contains(body, fmt.Sprintf(`<td class="lag" data-group="workers">%d</td>`, lag)) {
		t.Fatalf("groups page: %d %s", status, body)
	}
	status, body = get(t, n.url+"/share-groups/workers")
	for _, want := range []string{`id="group-state">Stable<`, `class="client">share-worker<`, `<span class="tag">jobs-0</span>`,
		fmt.Sprintf(`<td class="start">%d</td>`, start), fmt.Sprintf(`id="total-lag">%d<`, lag), `id="reset"`} {
		if status != 200 || !strings.Contains(body, want) {
			t.Fatalf("share group page lacks %q: %d %s", want, status, body)
		}
	}
	// The consumer-group URL sends a share group to its page.
	if status, body := get(t, n.url+"/groups/workers"); status != 200 || !strings.Contains(body, "Share group workers") {
		t.Fatalf("/groups/workers: %d %.300s", status, body)
	}

	// A dry run changes nothing; an apply is refused while the consumer is
	// a member.
	status, body = postForm(t, n.url+"/share-groups/workers/reset", url.Values{"to": {"earliest"}, "action": {"preview"}})
	if status != 200 || !strings.Contains(body, `id="preview"`) || !strings.Contains(body, `<td class="target">0</td>`) {
		t.Fatalf("dry run: %d %s", status, body)
	}
	status, body = postForm(t, n.url+"/share-groups/workers/reset", url.Values{"to": {"earliest"}, "action": {"apply"}})
	if status != http.StatusConflict || !strings.Contains(body, "only be reset while the group is empty") {
		t.Fatalf("apply with a member: %d %s", status, body)
	}
	if now, _, _ := shareStart(t, ctx, admin, "workers", "jobs"); now != start {
		t.Fatalf("a refused reset moved the start offset %d -> %d", start, now)
	}
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"to": {"sideways"}}, "expected earliest, latest, timestamp or offset"},
		{url.Values{"to": {"offset"}, "value": {"-3"}}, "expected a whole number"},
		{url.Values{"to": {"timestamp"}, "value": {"yesterday"}}, "timestamp"},
	} {
		if status, body := postForm(t, n.url+"/share-groups/workers/reset", c.form); status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("reset %v: %d, want 400 mentioning %q: %.300s", c.form, status, c.want, body)
		}
	}
	if status, body := postForm(t, n.url+"/share-groups/workers/delete-offsets", url.Values{}); status != 400 || !strings.Contains(body, "choose a topic") {
		t.Errorf("delete offsets without a topic: %d %.300s", status, body)
	}
	if status, body := postForm(t, n.url+"/share-groups/workers/delete-offsets", url.Values{"topic": {"jobs"}}); status != 400 || !strings.Contains(body, "NON_EMPTY_GROUP") {
		t.Errorf("delete offsets with a member: %d %.300s", status, body)
	}
	if status, _ := get(t, n.url+"/share-groups/no-such-group"); status != http.StatusBadGateway {
		t.Errorf("unknown share group: %d", status)
	}

	// With the consumer gone, a reset to an offset is applied.
	consumer.Close()
	waitShareMembers(t, ctx, admin, "workers", 0)
	status, body = postForm(t, n.url+"/share-groups/workers/reset", url.Values{"topic": {"jobs"}, "to": {"offset"}, "value": {"1"}, "action": {"apply"}})
	if status != 200 || !strings.Contains(body, "reset 1 share-partitions") {
		t.Fatalf("apply on the empty group: %d %s", status, body)
	}
	if now, nowLag, _ := shareStart(t, ctx, admin, "workers", "jobs"); now != 1 || nowLag != produced-1 {
		t.Fatalf("after the reset to offset 1: start %d lag %d, want 1 and %d", now, nowLag, produced-1)
	}
	status, body = postForm(t, n.url+"/share-groups/workers/delete-offsets", url.Values{"topic": {"jobs"}})
	if status != 200 || !strings.Contains(body, "deleted the offsets of workers on jobs") {
		t.Fatalf("delete offsets: %d %s", status, body)
	}
	if now, _, found := shareStart(t, ctx, admin, "workers", "jobs"); found && now != -1 {
		t.Fatalf("after deleting the offsets the start offset is %d", now)
	}
	status, body = postForm(t, n.url+"/groups/workers/delete", url.Values{})
	if status != 200 || !strings.Contains(body, "deleted group workers") {
		t.Fatalf("delete group: %d %s", status, body)
	}
	if listed, err := admin.ListGroups(ctx); err != nil || containsGroup(listed.Groups(), "workers") {
		t.Fatalf("workers after the console deleted it: %v %v", err, listed.Groups())
	}
}

// TestConsoleShareGroupReadOnly: the share group's page hides its forms
// and every change is refused.
func TestConsoleShareGroupReadOnly(t *testing.T) {
	n := startConsoleNode(t, append([]string{"console.read.only=true"}, shareNodeOverrides...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	startShareConsumer(t, ctx, n, "readers", "feed")
	status, body := get(t, n.url+"/share-groups/readers")
	if status != 200 || !strings.Contains(body, `class="client">share-worker<`) || strings.Contains(body, `id="reset"`) || strings.Contains(body, `id="delete-group"`) {
		t.Fatalf("read-only share group page: %d %s", status, body)
	}
	for _, path := range []string{"/share-groups/readers/reset", "/share-groups/readers/delete-offsets"} {
		if status, body := postForm(t, n.url+path, url.Values{"to": {"earliest"}, "action": {"apply"}, "topic": {"feed"}}); status != 403 || !strings.Contains(body, "read-only") {
			t.Errorf("read-only %s: %d %.200s", path, status, body)
		}
	}
}

// TestConsoleBrowserShareGroup drives a share group's page in headless
// Chromium: reached from the groups list, it shows the kgo share
// consumer's membership and the start offset kadm reads; a dry run
// previews, an apply is refused while the consumer is a member, and once
// it has left the reset to earliest is where a new share consumer starts.
func TestConsoleBrowserShareGroup(t *testing.T) {
	b := newBrowser(t)
	n := startConsoleNode(t, shareNodeOverrides...)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	admin := kadm.NewClient(newClient(t, n.seed))
	consumer, _ := startShareConsumer(t, ctx, n, "crawlers", "pages")
	var start int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		var lag int64
		var found bool
		if start, lag, found = shareStart(t, ctx, admin, "crawlers", "pages"); found && start > 0 && lag > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the share-partition did not move past the consumed records: start %d", start)
		}
		time.Sleep(50 * time.Millisecond)
	}

	b.open(n.url+"/groups", "groups-share")
	b.do(chromedp.Click(chromedp.CSS(`a[href="/share-groups/crawlers"]`)))
	b.waitFor(`document.querySelector("#share-partitions") !== null`)
	b.checkNoErrors("share group page")
	if got := eval[string](b, `document.querySelector("#members tr.member td.client").innerText`); got != "share-worker" {
		t.Fatalf("member client %q", got)
	}
	if got := eval[string](b, `document.querySelector('tr.share-row[data-topic="pages"][data-partition="0"] td.start').innerText`); got != fmt.Sprint(start) {
		t.Fatalf("start offset shown %s, kadm %d", got, start)
	}
	b.do(chromedp.SetValue(chromedp.CSS("#reset-to"), "earliest"), chromedp.Click(chromedp.CSS("#reset-preview")))
	b.waitFor(`document.readyState === "complete" && document.querySelector("#preview") !== null`)
	b.checkNoErrors("share reset preview")
	b.screenshot("share-group-reset-preview")
	if got := eval[string](b, `document.querySelector("#preview td.target").innerText`); got != "0" {
		t.Fatalf("preview target %q", got)
	}
	b.do(chromedp.Click(chromedp.CSS("#reset-apply")))
	b.waitFor(`document.querySelector("#error") !== null && document.querySelector("#error").innerText.includes("while the group is empty")`)
	b.mu.Lock()
	b.errors = nil // the refusal's 409 is expected
	b.mu.Unlock()
	if now, _, _ := shareStart(t, ctx, admin, "crawlers", "pages"); now != start {
		t.Fatalf("a refused reset moved the start offset %d -> %d", start, now)
	}

	consumer.Close()
	waitShareMembers(t, ctx, admin, "crawlers", 0)
	// An empty group's DescribeShareGroupOffsets names no topics (its
	// members' subscriptions are gone): the reset names one.
	b.open(n.url+"/share-groups/crawlers", "share-group-empty")
	b.do(chromedp.SetValue(chromedp.CSS(`#reset input[name="topic"]`), "pages"), chromedp.SetValue(chromedp.CSS("#reset-to"), "earliest"),
		chromedp.Click(chromedp.CSS("#reset-apply")))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("reset 1 share-partitions")`)
	b.checkNoErrors("share reset apply")
	if got := eval[string](b, `document.querySelector('tr.share-row[data-topic="pages"] td.start').innerText`); got != "0" {
		t.Fatalf("start offset after the reset %q", got)
	}
	again := newClient(t, n.seed, kgo.ShareGroup("crawlers"), kgo.ConsumeTopics("pages"), kgo.FetchMaxWait(200*time.Millisecond))
	for {
		fetches := again.PollRecords(ctx, 100)
		if ctx.Err() != nil {
			t.Fatal("the share consumer received nothing after the reset")
		}
		if records := fetches.Records(); len(records) > 0 {
			if records[0].Offset != 0 {
				t.Fatalf("after the UI reset to earliest the share group delivers offset %d first, want 0", records[0].Offset)
			}
			break
		}
	}
}
