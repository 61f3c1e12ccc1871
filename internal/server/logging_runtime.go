package server

// Runtime log levels: the BROKER_LOGGER config resource (KIP-412) names the
// node's loggers ("root" and each of config.LogComponents) and sets their
// levels while the node runs, in Kafka's level names. The changes live in
// memory only: a restart brings back log.level and log.level.<component>,
// as Kafka's log4j levels do.

import (
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/samsa-streaming/samsa/internal/api"
)

// kafkaLogLevels are the level names BROKER_LOGGER accepts (Kafka's
// LogLevelConfig.VALID_LOG_LEVELS), each with the slog level it filters at.
// TRACE lets through everything debug does and below; FATAL drops all but
// records above error, which Samsa does not write.
var kafkaLogLevels = map[string]slog.Level{
	"TRACE": slog.LevelDebug - 4,
	"DEBUG": slog.LevelDebug,
	"INFO":  slog.LevelInfo,
	"WARN":  slog.LevelWarn,
	"ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4,
}

// kafkaLevelName maps a validated log.level value ("debug") to its Kafka
// name ("DEBUG").
func kafkaLevelName(value string) string {
	name := strings.ToUpper(value)
	if _, ok := kafkaLogLevels[name]; !ok {
		return "INFO"
	}
	return name
}

// setLocked gives logger name the level levelName; explicit says whether it
// is the logger's own or follows the root's. Setting the root moves every
// logger that follows it. Called with l.mu held (or before l is shared).
func (l *logging) setLocked(name, levelName string, explicit bool) {
	level := l.levels[name]
	if level == nil {
		level = new(slog.LevelVar)
		l.levels[name] = level
	}
	level.Set(kafkaLogLevels[levelName])
	l.mu.names[name] = levelName
	l.mu.explicit[name] = explicit
	if name != rootLogger {
		return
	}
	for other, own := range l.mu.explicit {
		if !own && other != rootLogger {
			l.levels[other].Set(kafkaLogLevels[levelName])
			l.mu.names[other] = levelName
		}
	}
}

// updateFloorLocked lowers or raises the handler's level to the lowest
// logger level.
func (l *logging) updateFloorLocked() {
	floor := l.levels[rootLogger].Level()
	for _, level := range l.levels {
		floor = min(floor, level.Level())
	}
	l.floor.Set(floor)
}

// LoggerLevels implements api.RuntimeLoggers: the root first, then the
// components by name.
func (l *logging) LoggerLevels() []api.LoggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []api.LoggerLevel{{Name: rootLogger, Level: l.mu.names[rootLogger]}}
	for _, name := range slices.Sorted(maps.Keys(l.mu.names)) {
		if name != rootLogger {
			out = append(out, api.LoggerLevel{Name: name, Level: l.mu.names[name]})
		}
	}
	return out
}

// LoggerExists implements api.RuntimeLoggers.
func (l *logging) LoggerExists(name string) bool {
	_, ok := l.levels[name] // the set of loggers is fixed at start
	return ok
}

// ValidLevel implements api.RuntimeLoggers.
func (l *logging) ValidLevel(levelName string) bool {
	_, ok := kafkaLogLevels[levelName]
	return ok
}

// ValidLevelNames implements api.RuntimeLoggers: sorted, as Kafka lists
// them in its error message.
func (l *logging) ValidLevelNames() []string {
	return slices.Sorted(maps.Keys(kafkaLogLevels))
}

// SetLoggerLevel implements api.RuntimeLoggers; name and level are valid.
func (l *logging) SetLoggerLevel(name, levelName string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setLocked(name, levelName, true)
	l.updateFloorLocked()
}

// UnsetLoggerLevel implements api.RuntimeLoggers: the logger follows the
// root's level again. The root itself cannot be unset.
func (l *logging) UnsetLoggerLevel(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if name == rootLogger {
		return
	}
	l.setLocked(name, l.mu.names[rootLogger], false)
	l.updateFloorLocked()
}
