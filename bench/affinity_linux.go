package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinProcess sets the CPU affinity of every thread of process pid to cpu
// and returns a function that sets every thread back to the mask the
// process had. Threads started later inherit the mask of the thread that
// starts them, so once all are pinned the process stays on cpu; two passes
// catch a thread started during the first.
func pinProcess(pid, cpu int) (restore func() error, err error) {
	var original unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &original); err != nil {
		return nil, fmt.Errorf("affinity of %d: %w", pid, err)
	}
	var one unix.CPUSet
	one.Set(cpu)
	for range 2 {
		if err := setProcessAffinity(pid, &one); err != nil {
			_ = setProcessAffinity(pid, &original)
			return nil, err
		}
	}
	return func() error { return setProcessAffinity(pid, &original) }, nil
}

func setProcessAffinity(pid int, set *unix.CPUSet) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("affinity of thread %d: %w", tid, err)
		}
	}
	return nil
}

// twoCPUs returns two CPUs this process may run on, or ok false.
func twoCPUs() (a, b int, ok bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, 0, false
	}
	var found []int
	for cpu := 0; cpu < len(set)*64 && len(found) < 2; cpu++ {
		if set.IsSet(cpu) {
			found = append(found, cpu)
		}
	}
	if len(found) < 2 {
		return 0, 0, false
	}
	return found[0], found[1], true
}
