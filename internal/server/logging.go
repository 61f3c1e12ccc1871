package server

import (
	"context"
	"io"
	"log/slog"

	"github.com/samsa-streaming/samsa/internal/config"
)

// logging is the node's loggers, built from log.format, log.level and
// log.level.<component>. Every component logs through one handler; each
// component's logger filters by its own level before that handler sees a
// record, so turning one component to debug costs the others nothing.
type logging struct {
	// root logs what belongs to no component (start-up, shutdown).
	root    *slog.Logger
	handler slog.Handler
	// levels holds the level of each of config.LogComponents.
	levels    map[string]slog.Level
	rootLevel slog.Level
}

// newLogging builds the loggers. With base nil it writes log.format lines to
// out; with a base logger (tests, embedding) it filters into base's handler,
// which keeps its own level and format.
func newLogging(cfg *config.Broker, base *slog.Logger, out io.Writer) *logging {
	l := &logging{rootLevel: parseLevel(cfg.LogLevel), levels: make(map[string]slog.Level, len(config.LogComponents))}
	lowest := l.rootLevel
	for _, component := range config.LogComponents {
		level := l.rootLevel
		if value, ok := cfg.Get("log.level." + component); ok {
			level = parseLevel(value)
		} else if component == "request" && cfg.LogRequestSampleRate > 0 {
			// Sampling asks for the request log; it is written at debug.
			level = slog.LevelDebug
		}
		l.levels[component] = level
		lowest = min(lowest, level)
	}
	if base != nil {
		l.handler = base.Handler()
	} else {
		options := &slog.HandlerOptions{Level: lowest}
		if cfg.LogFormat == "json" {
			l.handler = slog.NewJSONHandler(out, options)
		} else {
			l.handler = slog.NewTextHandler(out, options)
		}
	}
	l.root = slog.New(&levelHandler{level: l.rootLevel, inner: l.handler})
	return l
}

// component returns the logger of one of config.LogComponents: its lines
// carry component=<name> and pass log.level.<name>.
func (l *logging) component(name string) *slog.Logger {
	return l.leveled(name).With("component", name)
}

// leveled is component without the attribute, for packages that name
// themselves (the group coordinator logs component=group-coordinator).
func (l *logging) leveled(name string) *slog.Logger {
	level, ok := l.levels[name]
	if !ok {
		level = l.rootLevel
	}
	return slog.New(&levelHandler{level: level, inner: l.handler})
}

// parseLevel maps a validated log.level value to slog's level.
func parseLevel(value string) slog.Level {
	switch value {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// levelHandler drops records below level before inner sees them.
type levelHandler struct {
	level slog.Level
	inner slog.Handler
}

func (h *levelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.level && h.inner.Enabled(ctx, level)
}

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

func (h *levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &levelHandler{level: h.level, inner: h.inner.WithAttrs(attrs)}
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	return &levelHandler{level: h.level, inner: h.inner.WithGroup(name)}
}
