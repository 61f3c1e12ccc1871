package console_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

// chromiumPath finds Debian's chromium, or skips the test (fails it with
// SAMSA_REQUIRE_CHROMIUM=1).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("SAMSA_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is not installed and SAMSA_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); skipping the console's browser tests")
	return ""
}

type consoleNode struct {
	node     *server.Node
	url      string
	seed     string
	registry string
}

func startConsoleNode(t testing.TB, overrides ...string) *consoleNode {
	t.Helper()
	over := append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + t.TempDir(),
		"group.initial.rebalance.delay.ms=0",
		"console.listener=http://127.0.0.1:0",
		"schema.registry.listeners=http://127.0.0.1:0",
		"console.metrics.sample.interval.ms=200",
		"metrics.listener=127.0.0.1:0",
	}, overrides...)
	cfg, _, err := config.Load("", over, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Shutdown(ctx)
	})
	return &consoleNode{node: n, url: "http://" + n.ConsoleAddrs()[0].String(), seed: n.Addrs()[0].String(),
		registry: "http://" + n.RegistryAddrs()[0].String()}
}

// browser is one headless Chromium tab that records every console error.
type browser struct {
	t      *testing.T
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	shots  string
}

func newBrowser(t *testing.T) *browser {
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000))
	allocator, cancelAllocator := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAllocator)
	ctx, cancel := chromedp.NewContext(allocator)
	t.Cleanup(cancel)
	b := &browser{t: t, ctx: ctx, shots: filepath.Join("screenshots", t.Name())}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int]("1")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, m.String())
				b.mu.Unlock()
			}
		}
	}()
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return b
}

// do runs steps with a deadline, failing the test on error.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *browser, expression string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds or 20 s pass; a
// navigation in between is waited out.
func (b *browser) waitFor(expression string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){ try { return !!(`+expression+`); } catch (e) { return false; } })()`))
		cancel()
		if err == nil && ok {
			return
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 600) : ""`))
	b.t.Fatalf("waiting for %s: %v (page: %s)", expression, lastErr, page)
}

// open loads a page, checks it rendered with no console error, and saves a
// screenshot named name.
func (b *browser) open(url, name string) {
	b.t.Helper()
	b.do(chromedp.Navigate(url))
	b.waitFor(`document.readyState === "complete" && document.querySelector("main h1") !== null`)
	b.checkNoErrors(url)
	b.screenshot(name)
}

func (b *browser) checkNoErrors(where string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		b.t.Fatalf("%s: console errors: %q", where, b.errors)
	}
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func newClient(t *testing.T, seed string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	client, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seed)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}

func produce(t *testing.T, client *kgo.Client, records ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleBrowser drives every page of the console in headless Chromium
// against a real node, checking what it shows against franz-go and kadm.
func TestConsoleBrowser(t *testing.T) {
	b := newBrowser(t)
	n := startConsoleNode(t)
	client := newClient(t, n.seed)
	admin := kadm.NewClient(client)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	// A topic created in the UI is visible to franz-go.
	b.open(n.url+"/topics", "topics-empty")
	b.do(chromedp.SetValue(chromedp.CSS("#topic-name"), "orders"), chromedp.SetValue(chromedp.CSS("#topic-partitions"), "2"),
		chromedp.Click(chromedp.CSS("#create-topic-submit")))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("created topic orders")`)
	b.checkNoErrors("create topic")
	topics, err := admin.ListTopics(ctx, "orders")
	if err != nil || topics["orders"].Err != nil || len(topics["orders"].Partitions) != 2 {
		t.Fatalf("franz-go does not see the topic the UI created: %v %+v", err, topics)
	}
	b.screenshot("topic")

	// Records produced with franz-go appear in the browser; a filter
	// narrows them.
	var records []*kgo.Record
	for i := range 20 {
		kind := "odd"
		if i%2 == 0 {
			kind = "even"
		}
		records = append(records, &kgo.Record{Topic: "orders", Partition: int32(i % 2), Key: []byte("k" + strconv.Itoa(i)),
			Value: fmt.Appendf(nil, `{"n":%d,"kind":%q}`, i, kind), Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("test")}}})
	}
	manual := newClient(t, n.seed, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, manual, records...)
	b.open(n.url+"/topics/orders/records?limit=100", "records")
	if got := eval[int](b, `document.querySelectorAll("tr.record").length`); got != 20 {
		t.Fatalf("records page shows %d records, want 20", got)
	}
	if got := eval[string](b, `document.querySelector("#scan-status").innerText`); !strings.Contains(got, "reached the end") {
		t.Fatalf("scan status %q", got)
	}
	b.do(chromedp.SetValue(chromedp.CSS("#filter"), `json.kind == "even" && value.contains("n")`), chromedp.Click(chromedp.CSS("#scan")))
	b.waitFor(`location.search.includes("filter")`)
	b.waitFor(`document.readyState === "complete"`)
	if got := eval[int](b, `document.querySelectorAll("tr.record").length`); got != 10 {
		t.Fatalf("filtered records page shows %d records, want 10", got)
	}
	b.checkNoErrors("filter")
	b.screenshot("records-filtered")

	// The live tail shows records produced after it started.
	b.open(n.url+"/topics/orders/records?start=latest&limit=5", "records-latest")
	b.do(chromedp.Click(chromedp.CSS("#tail-toggle")))
	b.waitFor(`document.querySelector("#tail-status").innerText.startsWith("tailing")`)
	produce(t, client, &kgo.Record{Topic: "orders", Value: []byte(`{"live":1}`)}, &kgo.Record{Topic: "orders", Value: []byte(`{"live":2}`)})
	b.waitFor(`document.querySelectorAll("tr.live").length === 2 && document.querySelector("#tail-rows").innerText.includes('"live": 2')`)
	b.checkNoErrors("tail")
	// How long records took from the producer to the browser's table.
	delay := eval[float64](b, `Math.max(...Array.from(document.querySelectorAll("tr.live")).map(r => Number(r.dataset.receivedMs) - Number(r.dataset.timestampMs)))`)
	t.Logf("live tail: produced to shown in the browser in at most %.0f ms", delay)
	b.screenshot("records-tail")

	// A group's lag equals kadm's; a reset in the UI is seen by the group.
	consumer := newClient(t, n.seed, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"), kgo.DisableAutoCommit())
	consumed := 0
	for consumed < 10 {
		fetches := consumer.PollRecords(ctx, 10-consumed)
		if err := fetches.Err(); err != nil {
			t.Fatal(err)
		}
		consumed += fetches.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	consumer.Close()
	lags, err := admin.Lag(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	want := lags["billing"].Lag.Total()
	b.open(n.url+"/groups", "groups")
	if got := eval[string](b, `document.querySelector('td.lag[data-group="billing"]').innerText`); got != strconv.FormatInt(want, 10) {
		t.Fatalf("groups page lag %s, kadm %d", got, want)
	}
	// The lag-over-time plot is fed from the node's own lag metric, which
	// counts the committed partitions.
	var committedLag int64
	for _, l := range lags["billing"].Lag.Sorted() {
		if l.Commit.At >= 0 {
			committedLag += l.Lag
		}
	}
	wantSample := fmt.Sprintf(`"lag":%d}]}`, committedLag)
	lagDeadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get(t, n.url+"/api/groups/billing/lag")
		if strings.HasSuffix(strings.TrimSpace(body), wantSample) {
			break
		}
		if time.Now().After(lagDeadline) {
			t.Fatalf("the lag plot's last sample is not %s: %.300s", wantSample, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.open(n.url+"/groups/billing", "group")
	if got := eval[string](b, `document.querySelector("#total-lag").innerText`); got != strconv.FormatInt(want, 10) {
		t.Fatalf("group page lag %s, kadm %d", got, want)
	}
	for _, l := range lags["billing"].Lag.Sorted() {
		got := eval[string](b, fmt.Sprintf(`document.querySelector('tr.lag-row[data-topic="%s"][data-partition="%d"] td.lag').innerText`, l.Topic, l.Partition))
		if got != strconv.FormatInt(l.Lag, 10) {
			t.Fatalf("%s-%d lag %s, kadm %d", l.Topic, l.Partition, got, l.Lag)
		}
	}
	before, err := admin.FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.SetValue(chromedp.CSS("#reset-to"), "earliest"), chromedp.Click(chromedp.CSS("#reset-preview")))
	b.waitFor(`document.querySelector("#preview") !== null`)
	b.checkNoErrors("reset preview")
	b.screenshot("group-reset-preview")
	after, err := admin.FetchOffsets(ctx, "billing")
	if err != nil || fmt.Sprint(after.Offsets()) != fmt.Sprint(before.Offsets()) {
		t.Fatalf("the dry run changed the offsets: %v -> %v (%v)", before.Offsets(), after.Offsets(), err)
	}
	b.do(chromedp.Click(chromedp.CSS("#reset-apply")))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("reset 2 partitions")`)
	b.checkNoErrors("reset apply")
	again := newClient(t, n.seed, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"), kgo.DisableAutoCommit())
	first := map[int32]int64{}
	for len(first) < 2 {
		fetches := again.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatal(err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if _, seen := first[r.Partition]; !seen {
				first[r.Partition] = r.Offset
			}
		})
	}
	if first[0] != 0 || first[1] != 0 {
		t.Fatalf("after the UI reset to earliest the group starts at %v, want offset 0 of each partition", first)
	}
	again.Close()

	// A schema registered with a client shows its versions, and records
	// framed for the registry are decoded.
	registry, err := sr.NewClient(sr.URLs(n.registry))
	if err != nil {
		t.Fatal(err)
	}
	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"qty","type":"int","default":1}]}`
	var schemaID int
	for _, text := range []string{v1, v2} {
		created, err := registry.CreateSchema(ctx, "orders-value", sr.Schema{Schema: text, Type: sr.TypeAvro})
		if err != nil {
			t.Fatal(err)
		}
		schemaID = created.ID
	}
	schema := avro.MustParse(v2)
	payload, err := avro.Marshal(schema, map[string]any{"id": "order-7", "qty": 3})
	if err != nil {
		t.Fatal(err)
	}
	framed := append([]byte{0, 0, 0, 0, 0}, payload...)
	binary.BigEndian.PutUint32(framed[1:5], uint32(schemaID))
	produce(t, manual, &kgo.Record{Topic: "orders", Partition: 0, Value: framed})
	b.open(n.url+"/schemas", "schemas")
	b.open(n.url+"/schemas/orders-value", "subject")
	if got := eval[int](b, `document.querySelectorAll("tr.version").length`); got != 2 {
		t.Fatalf("subject page shows %d versions, want 2", got)
	}
	b.open(n.url+"/schemas/orders-value?version=2&diff=1", "subject-diff")
	if got := eval[string](b, `Array.from(document.querySelectorAll("#diff .added")).map(e => e.innerText).join("\n")`); !strings.Contains(got, "qty") {
		t.Fatalf("diff shows %q", got)
	}
	b.open(n.url+"/topics/orders/records?start=latest&limit=1&partition=0", "records-avro")
	if got := eval[string](b, `document.querySelector("tr.record pre.value").innerText`); !strings.Contains(got, `"order-7"`) {
		t.Fatalf("the registry-framed record shows %q, want it decoded", got)
	}

	// An open transaction and its producer show on the transactions page.
	transactional := newClient(t, n.seed, kgo.TransactionalID("checkout-1"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := transactional.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, transactional, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte(`{"txn":1}`)})
	b.open(n.url+"/transactions?topic=orders", "transactions")
	if got := eval[string](b, `document.querySelector("#transactions").innerText`); !strings.Contains(got, "checkout-1") || !strings.Contains(got, "Ongoing") {
		t.Fatalf("transactions page: %q", got)
	}
	if got := eval[int](b, `document.querySelectorAll("#producers tr").length`); got < 2 {
		t.Fatalf("producers table has %d rows", got)
	}
	if err := transactional.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	// Configs, partitions and deletion from the topic page.
	b.open(n.url+"/topics/orders", "topic-detail")
	b.do(chromedp.SetValue(chromedp.CSS(`#alter-config input[name="key"]`), "retention.ms"),
		chromedp.SetValue(chromedp.CSS(`#alter-config input[name="value"]`), "3600000"), chromedp.Click(chromedp.CSS(`#alter-config button`)))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("updated retention.ms")`)
	configs, err := admin.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if value, _ := configs.On("orders", nil); configValueOf(value, "retention.ms") != "3600000" {
		t.Fatalf("retention.ms after the UI change: %q", configValueOf(value, "retention.ms"))
	}
	b.do(chromedp.SetValue(chromedp.CSS(`#add-partitions input[name="count"]`), "1"), chromedp.Click(chromedp.CSS(`#add-partitions button`)))
	b.waitFor(`document.querySelector("#partition-count") !== null && document.querySelector("#partition-count").innerText === "3"`)
	b.checkNoErrors("topic changes")

	// A SCRAM user set in the UI is seen by kadm.
	b.open(n.url+"/security", "security")
	b.do(chromedp.SetValue(chromedp.CSS(`#upsert-user input[name="user"]`), "carol"),
		chromedp.SetValue(chromedp.CSS(`#upsert-user input[name="password"]`), "carol-secret"), chromedp.Click(chromedp.CSS(`#upsert-user button`)))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("carol")`)
	users, err := admin.DescribeUserSCRAMs(ctx, "carol")
	if err != nil || users["carol"].Err != nil || len(users["carol"].CredInfos) != 1 {
		t.Fatalf("carol after the UI: %v %+v", err, users)
	}
	b.waitFor(`document.querySelector("#users").innerText.includes("carol")`)
	b.screenshot("security-user")

	// Deleting the group and the topic in the UI.
	b.open(n.url+"/groups/billing", "group-before-delete")
	b.do(chromedp.Click(chromedp.CSS(`#delete-group button`)))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("deleted group billing")`)
	if listed, err := admin.ListGroups(ctx); err != nil || listed.Groups() != nil && containsGroup(listed.Groups(), "billing") {
		t.Fatalf("billing after the UI deleted it: %v %v", err, listed.Groups())
	}

	// The other pages load without errors.
	b.open(n.url+"/", "overview")
	b.waitFor(`document.querySelector("#brokers") !== null && document.querySelector("#quorum-leader") !== null`)
	b.open(n.url+"/topics", "topics")
	b.open(n.url+"/groups?page=1&search=bill", "groups-search")

	// A malformed filter shows an error, and the console keeps serving.
	b.do(chromedp.Navigate(n.url + "/topics/orders/records?filter=" + "value.contains(%22x%22"))
	b.waitFor(`document.querySelector("#error") !== null`)
	if got := eval[string](b, `document.querySelector("#error").innerText`); !strings.Contains(got, "filter") {
		t.Fatalf("malformed filter: %q", got)
	}
	b.screenshot("records-bad-filter")
	b.mu.Lock()
	b.errors = nil // the bad filter's 400 is expected
	b.mu.Unlock()

	b.open(n.url+"/topics/orders", "topic-before-delete")
	b.do(chromedp.SetValue(chromedp.CSS(`#delete-topic input[name="confirm"]`), "orders"), chromedp.Click(chromedp.CSS(`#delete-topic button`)))
	b.waitFor(`document.querySelector("#notice") !== null && document.querySelector("#notice").innerText.includes("deleted topic orders")`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		topics, err := admin.ListTopics(ctx)
		if err == nil && !topics.Has("orders") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("franz-go still sees the topic the UI deleted: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func configValueOf(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

func containsGroup(groups []string, name string) bool {
	for _, g := range groups {
		if g == name {
			return true
		}
	}
	return false
}
