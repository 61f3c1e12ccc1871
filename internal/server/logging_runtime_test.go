package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestLoggingRuntimeLevels: BROKER_LOGGER changes move one logger's level
// at once; a logger without its own level follows the root's, and DELETE
// makes it follow the root again. The handler lets through what the lowest
// level asks for.
func TestLoggingRuntimeLevels(t *testing.T) {
	var out bytes.Buffer
	l := newLogging(loadConfig(t, "log.level=info", "log.level.network=warn"), nil, &out)
	ctx := context.Background()
	api, network, group := l.component("api"), l.component("network"), l.leveled("group")
	levels := func() map[string]string {
		m := map[string]string{}
		for _, e := range l.LoggerLevels() {
			m[e.Name] = e.Level
		}
		return m
	}
	if got := l.LoggerLevels()[0]; got.Name != "root" || got.Level != "INFO" {
		t.Fatalf("first logger %+v, want root INFO", got)
	}
	if got := levels(); got["network"] != "WARN" || got["api"] != "INFO" {
		t.Fatalf("levels at start %v", got)
	}
	if !l.LoggerExists("api") || l.LoggerExists("kafka.server.KafkaApis") {
		t.Fatal("LoggerExists")
	}
	if !l.ValidLevel("TRACE") || l.ValidLevel("debug") || l.ValidLevel("LOUD") {
		t.Fatal("ValidLevel")
	}
	if got := strings.Join(l.ValidLevelNames(), ", "); got != "DEBUG, ERROR, FATAL, INFO, TRACE, WARN" {
		t.Fatalf("ValidLevelNames = %s", got)
	}

	l.SetLoggerLevel("api", "DEBUG")
	if !api.Enabled(ctx, slog.LevelDebug) || network.Enabled(ctx, slog.LevelInfo) {
		t.Fatal("api at DEBUG, network at WARN")
	}
	api.Debug("api debug line")
	if !strings.Contains(out.String(), "api debug line") {
		t.Fatalf("the handler dropped a debug line the api logger lets through: %q", out.String())
	}

	l.SetLoggerLevel("root", "ERROR")
	if group.Enabled(ctx, slog.LevelWarn) || !api.Enabled(ctx, slog.LevelDebug) || !network.Enabled(ctx, slog.LevelWarn) {
		t.Fatal("root to ERROR moves only the loggers without their own level")
	}
	if got := levels(); got["group"] != "ERROR" || got["api"] != "DEBUG" || got["network"] != "WARN" {
		t.Fatalf("levels after root ERROR %v", got)
	}

	l.UnsetLoggerLevel("api")
	if api.Enabled(ctx, slog.LevelWarn) || levels()["api"] != "ERROR" {
		t.Fatal("an unset logger follows the root")
	}
	l.UnsetLoggerLevel("root")
	if levels()["root"] != "ERROR" {
		t.Fatal("the root cannot be unset")
	}
	l.SetLoggerLevel("root", "INFO")
	if !api.Enabled(ctx, slog.LevelInfo) || api.Enabled(ctx, slog.LevelDebug) {
		t.Fatal("an unset logger follows later root changes")
	}
}
