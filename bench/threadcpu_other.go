//go:build !linux

package main

import (
	"errors"
	"time"
)

func threadCPU() (time.Duration, error) {
	return 0, errors.New("a thread's CPU time needs Linux")
}
