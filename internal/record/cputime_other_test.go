//go:build !linux

package record

import (
	"testing"
	"time"
)

// threadCPUTime falls back to wall time outside Linux.
func threadCPUTime(b *testing.B, fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}
