package record

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPUTime runs fn on one locked OS thread and returns the CPU time
// that thread spent (RUSAGE_THREAD): on a shared machine a benchmark's wall
// time counts the time other processes held the cores, its CPU time does not.
func threadCPUTime(b *testing.B, fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after syscall.Rusage
	const rusageThread = 1
	if err := syscall.Getrusage(rusageThread, &before); err != nil {
		b.Fatal(err)
	}
	fn()
	if err := syscall.Getrusage(rusageThread, &after); err != nil {
		b.Fatal(err)
	}
	return time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
}
