package server

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/samsa-streaming/samsa/internal/config"
)

// logging is the node's loggers, built from log.format, log.level and
// log.level.<component>. Every component logs through one handler; each
// component's logger filters by its own level before that handler sees a
// record, so turning one component to debug costs the others nothing. The
// levels can change while the node runs (BROKER_LOGGER configs,
// logging_runtime.go); a component without a level of its own follows the
// root's.
type logging struct {
	// root logs what belongs to no component (start-up, shutdown).
	root    *slog.Logger
	handler slog.Handler
	// floor is the handler's own level, the lowest of all the levels, so
	// the handler never drops what a component's level lets through.
	floor slog.LevelVar

	mu struct {
		sync.Mutex
		// names holds each logger's level name (Kafka's, "INFO"); a
		// component missing from explicit has the root's.
		// Invariant: levels[c].Level() == kafkaLogLevels[names[c]] for
		// every logger c.
		names    map[string]string
		explicit map[string]bool
	}
	// levels holds the level of "root" and each of config.LogComponents.
	// The map is fixed once newLogging returns (read without mu); the
	// levels in it change.
	levels map[string]*slog.LevelVar
}

// rootLogger is the root logger's name, as Kafka's BROKER_LOGGER calls it.
const rootLogger = "root"

// newLogging builds the loggers. With base nil it writes log.format lines to
// out; with a base logger (tests, embedding) it filters into base's handler,
// which keeps its own level and format.
func newLogging(cfg *config.Broker, base *slog.Logger, out io.Writer) *logging {
	l := &logging{levels: make(map[string]*slog.LevelVar, len(config.LogComponents)+1)}
	l.mu.names = map[string]string{}
	l.mu.explicit = map[string]bool{}
	rootName := kafkaLevelName(cfg.LogLevel)
	l.setLocked(rootLogger, rootName, true)
	for _, component := range config.LogComponents {
		if value, ok := cfg.Get("log.level." + component); ok {
			l.setLocked(component, kafkaLevelName(value), true)
		} else if component == "request" && cfg.LogRequestSampleRate > 0 {
			// Sampling asks for the request log; it is written at debug.
			l.setLocked(component, "DEBUG", true)
		} else {
			l.setLocked(component, rootName, false)
		}
	}
	l.updateFloorLocked()
	if base != nil {
		l.handler = base.Handler()
	} else {
		options := &slog.HandlerOptions{Level: &l.floor}
		if cfg.LogFormat == "json" {
			l.handler = slog.NewJSONHandler(out, options)
		} else {
			l.handler = slog.NewTextHandler(out, options)
		}
	}
	l.root = slog.New(&levelHandler{level: l.levels[rootLogger], inner: l.handler})
	return l
}

// component returns the logger of one of config.LogComponents: its lines
// carry component=<name> and pass log.level.<name>.
func (l *logging) component(name string) *slog.Logger {
	return l.leveled(name).With("component", name)
}

// leveled is component without the attribute, for packages that name
// themselves (the group coordinator logs component=group-coordinator). A
// name that is not a component follows the root's level.
func (l *logging) leveled(name string) *slog.Logger {
	level, ok := l.levels[name]
	if !ok {
		level = l.levels[rootLogger]
	}
	return slog.New(&levelHandler{level: level, inner: l.handler})
}

// levelHandler drops records below level before inner sees them.
type levelHandler struct {
	level *slog.LevelVar
	inner slog.Handler
}

func (h *levelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.level.Level() && h.inner.Enabled(ctx, level)
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
