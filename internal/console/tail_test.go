package console

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// TestTailStopsWhenTheBrowserGoesAway opens a live tail, reads a record
// through it, then drops the connection and waits for the stream to end on
// the server. The cluster is franz-go's kfake: the console only needs a
// Kafka endpoint.
func TestTailStopsWhenTheBrowserGoesAway(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	c, err := New(Config{SeedBrokers: cluster.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The HTTP layer's timeouts are far shorter than the tail runs here:
	// the tail must outlive them.
	served, err := httpserve.Serve(httpserve.Config{Name: "console", Listeners: []httpserve.Listener{{Scheme: "http", Address: "127.0.0.1:0"}},
		ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond}, c.Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer served.Shutdown(context.Background())
	baseURL := "http://" + served.Addrs()[0].String()

	ctx, cancel := context.WithCancel(context.Background())
	request, _ := http.NewRequestWithContext(ctx, "GET", baseURL+"/topics/t/tail?filter="+`value.startsWith("keep")`, nil)
	resp, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tail: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func(prefix string) string {
		t.Helper()
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), prefix) {
				return lines.Text()
			}
		}
		t.Fatalf("stream ended before %q: %v", prefix, lines.Err())
		return ""
	}
	next("event: ready")
	// Outlive the timeouts: the stream's keep-alives keep coming.
	for start := time.Now(); time.Since(start) < time.Second; {
		next(": keep-alive")
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("drop me")}, &kgo.Record{Topic: "t", Value: []byte("keep me")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	next("event: record")
	if data := next("data: "); !strings.Contains(data, "keep me") || strings.Contains(data, "drop me") {
		t.Fatalf("tail sent %s", data)
	}
	if c.tails.Load() != 1 {
		t.Fatalf("%d tails running, want 1", c.tails.Load())
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.tails.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the tail kept running after the browser went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTailEndsOnDrain: a node shutting down ends open tails with a reason,
// so the HTTP server's graceful shutdown is not held by them.
func TestTailEndsOnDrain(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	c, err := New(Config{SeedBrokers: cluster.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	served, err := httpserve.Serve(httpserve.Config{Name: "console", Listeners: []httpserve.Listener{{Scheme: "http", Address: "127.0.0.1:0"}}}, c.Handler())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + served.Addrs()[0].String() + "/topics/t/tail")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "event: ready") {
	}
	c.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := served.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown held by the tail: %v", err)
	}
	ended := false
	for lines.Scan() {
		if strings.Contains(lines.Text(), "shutting down") {
			ended = true
		}
	}
	if !ended {
		t.Fatal("the tail ended without saying why")
	}
}
