package quorum

import (
	"fmt"
	"log/slog"
)

// raftLogger sends etcd raft's log lines to slog. Raft narrates every
// election step at Info; those go to Debug, and the driver logs leader
// changes itself. Fatal and Panic panic, as raft expects; the raft loop
// recovers and stops the quorum.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)                 { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Debugf(format string, v ...any) { r.l.Debug(fmt.Sprintf(format, v...)) }
func (r raftLogger) Info(v ...any)                  { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Infof(format string, v ...any)  { r.l.Debug(fmt.Sprintf(format, v...)) }
func (r raftLogger) Warning(v ...any)               { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Warn(fmt.Sprintf(format, v...))
}
func (r raftLogger) Error(v ...any)                 { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(format string, v ...any) { r.l.Error(fmt.Sprintf(format, v...)) }
func (r raftLogger) Fatal(v ...any)                 { r.Panic(v...) }
func (r raftLogger) Fatalf(format string, v ...any) { r.Panicf(format, v...) }
func (r raftLogger) Panic(v ...any) {
	msg := fmt.Sprint(v...)
	r.l.Error("raft: " + msg)
	panic(msg)
}
func (r raftLogger) Panicf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	r.l.Error("raft: " + msg)
	panic(msg)
}
