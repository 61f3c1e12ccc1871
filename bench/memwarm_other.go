//go:build !linux

package main

import "time"

// warmFreeMemory does nothing off Linux: there is no /proc/meminfo to size it.
func warmFreeMemory() (int64, time.Duration, error) { return 0, 0, nil }
