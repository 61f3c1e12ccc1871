package cli

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

// startTestBroker starts a real Samsa node for one test, on a free loopback
// port with its own data dir, and returns its bootstrap address. It is the
// only place the CLI tests choose their broker.
func startTestBroker(t *testing.T) (bootstrap string) {
	t.Helper()
	bootstrap, _ = startTestBrokerWithDir(t)
	return bootstrap
}

// startTestBrokerWithDir is startTestBroker that also returns the node's
// log dir.
func startTestBrokerWithDir(t *testing.T, overrides ...string) (bootstrap, logDir string) {
	t.Helper()
	logDir = t.TempDir()
	cfg, _, err := config.Load("", append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + logDir,
		"metrics.listener=",
		"group.initial.rebalance.delay.ms=0",
	}, overrides...), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	node, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start samsa node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		node.Shutdown(ctx)
	})
	return node.Addrs()[0].String(), logDir
}
