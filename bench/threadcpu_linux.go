package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the user and system CPU time of the calling OS thread; the
// goroutine must be locked to it (runtime.LockOSThread).
func threadCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
