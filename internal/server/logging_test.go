package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/config"
)

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func loadConfig(t *testing.T, overrides ...string) *config.Broker {
	t.Helper()
	cfg, _, err := config.Load("", overrides, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestLoggingLevelsPerComponent(t *testing.T) {
	var out bytes.Buffer
	l := newLogging(loadConfig(t, "log.level=warn", "log.level.network=debug", "log.level.group=error"), nil, &out)
	ctx := context.Background()
	checks := []struct {
		logger *slog.Logger
		name   string
		level  slog.Level
		want   bool
	}{
		{l.root, "root", slog.LevelInfo, false},
		{l.root, "root", slog.LevelWarn, true},
		{l.component("network"), "network", slog.LevelDebug, true},
		{l.component("api"), "api", slog.LevelInfo, false},
		{l.component("api"), "api", slog.LevelWarn, true},
		{l.leveled("group"), "group", slog.LevelWarn, false},
		{l.leveled("group"), "group", slog.LevelError, true},
		{l.component("request"), "request", slog.LevelDebug, false},
	}
	for _, c := range checks {
		if got := c.logger.Enabled(ctx, c.level); got != c.want {
			t.Errorf("%s logger enabled at %v = %v, want %v", c.name, c.level, got, c.want)
		}
	}
	l.component("network").Debug("hello", "n", 1)
	if got := out.String(); !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "component=network") || !strings.Contains(got, "msg=hello") {
		t.Errorf("text line = %q", got)
	}
}

func TestLoggingJSONFormat(t *testing.T) {
	var out bytes.Buffer
	l := newLogging(loadConfig(t, "log.format=json"), nil, &out)
	l.component("log").Info("segment rolled", "partition", "orders-0")
	l.component("log").Debug("not written")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("want one JSON object, got %q: %v", out.String(), err)
	}
	if line["msg"] != "segment rolled" || line["component"] != "log" || line["level"] != "INFO" || line["partition"] != "orders-0" {
		t.Errorf("JSON line = %v", line)
	}
}

func TestLoggingRejectsUnknownLevel(t *testing.T) {
	_, _, err := config.Load("", []string{"log.level.network=verbose"}, nil)
	if err == nil || !strings.Contains(err.Error(), "log.level.network") {
		t.Fatalf("err = %v, want one naming log.level.network", err)
	}
}

// TestRequestLogSampling drives a node with a real client and checks that
// sampling writes request lines with what an operator needs to find a slow
// client: the API, version, client id and latency.
func TestRequestLogSampling(t *testing.T) {
	var out syncBuffer
	tn := &testNode{t: t, dir: t.TempDir()}
	cfg := loadConfig(t, "listeners=PLAINTEXT://127.0.0.1:0", "log.dirs="+tn.dir, "metrics.listener=",
		"log.request.sample.rate=1", "log.format=json")
	n, err := Start(cfg, Options{Logger: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	tn.node = n
	t.Cleanup(tn.stop)

	mustCreateTopic(t, tn.admin(), "sampled", 1, nil)
	produceKeyed(t, tn.client(), "sampled", 10)

	// A request is logged once its response is written, which may be just
	// after the client has read it.
	var apis map[string]bool
	deadline := time.Now().Add(10 * time.Second)
	for !apis["Produce"] && time.Now().Before(deadline) {
		apis = requestLines(t, out.String())
		time.Sleep(10 * time.Millisecond)
	}
	for _, api := range []string{"ApiVersions", "Metadata", "CreateTopics", "Produce"} {
		if !apis[api] {
			t.Errorf("no request line for %s; logged %v", api, apis)
		}
	}
}

// requestLines checks each request log line in out and returns the APIs
// logged.
func requestLines(t *testing.T, out string) map[string]bool {
	t.Helper()
	apis := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) != nil || entry["msg"] != "request" {
			continue
		}
		if entry["component"] != "request" || entry["level"] != "DEBUG" || entry["client_id"] != "kgo" || entry["total"] == nil || entry["version"] == nil {
			t.Errorf("request line lacks fields: %s", line)
		}
		api, _ := entry["api"].(string)
		apis[api] = true
	}
	return apis
}
