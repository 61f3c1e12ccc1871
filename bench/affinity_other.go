//go:build !linux

package main

import "errors"

func pinProcess(pid, cpu int) (func() error, error) {
	return nil, errors.New("pinning to a CPU needs Linux")
}

func twoCPUs() (a, b int, ok bool) { return 0, 0, false }
