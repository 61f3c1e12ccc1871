package console_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func get(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	resp, err := http.Get(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestConsoleScanBoundsAndBadInput checks that a scan over a partition
// larger than console.records.max.bytes stops there and says so, that bad
// query input answers 400 with its reason, and that the node keeps serving.
func TestConsoleScanBoundsAndBadInput(t *testing.T) {
	n := startConsoleNode(t, "console.records.max.bytes=65536")
	client := newClient(t, n.seed, kgo.ProducerBatchMaxBytes(16<<10))
	ctx := context.Background()
	if _, err := kadm.NewClient(client).CreateTopic(ctx, 1, 1, nil, "big"); err != nil {
		t.Fatal(err)
	}
	var records []*kgo.Record
	for range 400 {
		// Random bytes: the producer's compression cannot shrink them.
		value := make([]byte, 1000)
		_, _ = rand.Read(value)
		records = append(records, &kgo.Record{Topic: "big", Value: value})
	}
	produce(t, client, records...)

	status, body := get(t, n.url+"/topics/big/records?limit=500")
	if status != 200 || !strings.Contains(body, "console.records.max.bytes") || !strings.Contains(body, `class="status bounded"`) {
		t.Fatalf("bounded scan: %d %s", status, body)
	}
	if got := strings.Count(body, `<tr class="record">`); got == 0 || got >= 400 {
		t.Fatalf("bounded scan showed %d records", got)
	}
	if !strings.Contains(body, `id="next"`) {
		t.Fatal("a bounded scan offers no next page")
	}

	for _, c := range []struct{ query, want string }{
		{"filter=" + url.QueryEscape(`value.contains(`), "filter"},
		{"filter=" + url.QueryEscape(`offset + 1`), "expected a bool"},
		{"start=offset&offset=-4", "offset"},
		{"start=timestamp&timestamp=yesterday", "timestamp"},
		{"limit=100000", "console.records.max"},
		{"partition=x", "partition"},
		{"cursor=0:zz", "cursor"},
		{"format=xml", "format"},
		{"partition=7", "has no partition"},
		{"cursor=9:0", "has no partition"},
	} {
		status, body := get(t, n.url+"/topics/big/records?"+c.query)
		if status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d, want 400 mentioning %q: %.300s", c.query, status, c.want, body)
		}
	}
	// A runtime error of the filter (no such JSON field) drops records and
	// says so rather than failing the page.
	status, body = get(t, n.url+"/topics/big/records?limit=5&filter="+url.QueryEscape(`json.missing == 1`))
	if status != 200 || !strings.Contains(body, "filter-error") {
		t.Fatalf("runtime filter error: %d %.500s", status, body)
	}
	if status, _ := get(t, n.url+"/topics/no-such-topic/records"); status != 400 {
		t.Fatalf("unknown topic: %d", status)
	}
	if status, body := get(t, n.url+"/"); status != 200 || !strings.Contains(body, "Brokers") {
		t.Fatalf("overview after bad input: %d", status)
	}
	// A form from another origin is refused.
	request, _ := http.NewRequest("POST", n.url+"/topics", strings.NewReader("name=evil&partitions=1&replication_factor=1"))
	request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	request.Header.Set("Origin", "http://attacker.example")
	resp, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("cross-origin form: %d", resp.StatusCode)
	}
}

// TestConsoleReadOnly checks console.read.only: pages load, forms are
// hidden, and every change is refused.
func TestConsoleReadOnly(t *testing.T) {
	n := startConsoleNode(t, "console.read.only=true")
	status, body := get(t, n.url+"/topics")
	if status != 200 || !strings.Contains(body, `id="read-only"`) || strings.Contains(body, `id="create-topic"`) {
		t.Fatalf("read-only topics page: %d", status)
	}
	resp, err := http.PostForm(n.url+"/topics", url.Values{"name": {"t"}, "partitions": {"1"}, "replication_factor": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	body2, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body2), "read-only") {
		t.Fatalf("read-only create: %d %s", resp.StatusCode, body2)
	}
	topics, err := kadm.NewClient(newClient(t, n.seed)).ListTopics(context.Background())
	if err != nil || topics.Has("t") {
		t.Fatalf("read-only console created a topic: %v", err)
	}
}

// TestConsoleGroupsPaging commits offsets for 120 groups and checks the
// groups pages: 50 a page, the last page holding the rest, and each group's
// lag as kadm computes it.
func TestConsoleGroupsPaging(t *testing.T) {
	n := startConsoleNode(t)
	client := newClient(t, n.seed)
	admin := kadm.NewClient(client)
	ctx := context.Background()
	if _, err := admin.CreateTopic(ctx, 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	var records []*kgo.Record
	for i := range 30 {
		records = append(records, &kgo.Record{Topic: "events", Value: []byte(strconv.Itoa(i))})
	}
	produce(t, client, records...)
	ends, err := admin.ListEndOffsets(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for i := range 120 {
		group := fmt.Sprintf("group-%03d", i)
		groups = append(groups, group)
		offsets := kadm.Offsets{}
		ends.Each(func(end kadm.ListedOffset) {
			offsets.AddOffset("events", end.Partition, max(end.Offset-int64(i%7), 0), -1)
		})
		if err := admin.CommitAllOffsets(ctx, group, offsets); err != nil {
			t.Fatal(err)
		}
	}
	// The node's schema registry has a group of its own; search for ours.
	status, body := get(t, n.url+"/groups?search=group-")
	if status != 200 || !strings.Contains(body, "120 groups, page 1 of 3") || strings.Count(body, `<td class="lag"`) != 50 {
		t.Fatalf("page 1: %d, %d rows: %.1500s", status, strings.Count(body, `<td class="lag"`), body[strings.Index(body, "<main>"):])
	}
	status, body = get(t, n.url+"/groups?page=3&search=group-")
	if status != 200 || strings.Count(body, `<td class="lag"`) != 20 || !strings.Contains(body, "group-119") {
		t.Fatalf("page 3: %d, %d rows", status, strings.Count(body, `<td class="lag"`))
	}
	lags, err := admin.Lag(ctx, "group-118", "group-119")
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"group-118", "group-119"} {
		want := fmt.Sprintf(`data-group="%s">%d<`, group, lags[group].Lag.Total())
		if !strings.Contains(body, want) {
			t.Errorf("page 3 lacks %s", want)
		}
	}
	status, body = get(t, n.url+"/groups?search=group-11")
	if status != 200 || !strings.Contains(body, "10 groups, page 1 of 1") {
		t.Fatalf("search: %d", status)
	}
}

// TestConsoleConsumerProtocolGroup: a KIP-848 group (franz-go with the
// server-side balancer) shows its member and assignment, and an offset
// reset is refused while it has members, as kafka-consumer-groups.sh
// refuses it.
func TestConsoleConsumerProtocolGroup(t *testing.T) {
	n := startConsoleNode(t)
	client := newClient(t, n.seed)
	admin := kadm.NewClient(client)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := admin.CreateTopic(ctx, 2, 1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}
	produce(t, client, &kgo.Record{Topic: "clicks", Value: []byte("a")}, &kgo.Record{Topic: "clicks", Value: []byte("b")})
	consumer := newClient(t, n.seed, kgo.ConsumerGroup("nextgen"), kgo.ConsumeTopics("clicks"),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < 2; {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatal(err)
		}
		got += fetches.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var body string
	for {
		var status int
		status, body = get(t, n.url+"/groups/nextgen")
		if status == 200 && strings.Contains(body, "KIP-848") && strings.Contains(body, "clicks-0") && strings.Contains(body, "clicks-1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group page: %d %.2000s", status, body[strings.Index(body, "<main>"):])
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.PostForm(n.url+"/groups/nextgen/reset", url.Values{"to": {"earliest"}, "action": {"apply"}})
	if err != nil {
		t.Fatal(err)
	}
	refused, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 409 || !strings.Contains(string(refused), "only be reset while the group is inactive") {
		t.Fatalf("reset of an active group: %d %.600s", resp.StatusCode, refused)
	}
	_, groups := get(t, n.url+"/groups?search=nextgen")
	if !strings.Contains(groups, "<td>consumer</td>") {
		t.Fatalf("groups list: %.1500s", groups[strings.Index(groups, "<main>"):])
	}
}

// TestConsoleRemoteSize: with tiered storage on a file:// bucket, the
// topics pages show the bytes copied to remote storage.
func TestConsoleRemoteSize(t *testing.T) {
	n := startConsoleNode(t, "remote.log.storage.system.enable=true", "rsm.config.bucket.url=file://"+t.TempDir(),
		"remote.log.manager.task.interval.ms=100")
	client := newClient(t, n.seed, kgo.DefaultProduceTopic("tiered"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	segmentBytes, remote := "1048576", "true"
	if _, err := kadm.NewClient(client).CreateTopic(ctx, 1, 1, map[string]*string{"remote.storage.enable": &remote, "segment.bytes": &segmentBytes}, "tiered"); err != nil {
		t.Fatal(err)
	}
	var records []*kgo.Record
	for range 1200 {
		records = append(records, &kgo.Record{Value: bytes.Repeat([]byte("v"), 3000)})
	}
	produce(t, client, records...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := get(t, n.url+"/topics/tiered")
		if i := strings.Index(body, `id="remote-size">`); i >= 0 && strings.Contains(body[i:i+40], "MiB") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no remote size on the topic page: %.3000s", body[strings.Index(body, "<main>"):])
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, body := get(t, n.url+"/topics")
	row := body[strings.Index(body, `>tiered</a>`):]
	if i := strings.Index(row, `<td class="remote">`); i < 0 || !strings.Contains(row[i:i+40], "MiB") {
		t.Fatalf("topics page lacks the remote size")
	}
}
