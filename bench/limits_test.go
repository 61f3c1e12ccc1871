package main

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestStoreThroughput: the store probe moves bytes, charges its reader
// thread some CPU for them, and leaves no file behind.
func TestStoreThroughput(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a thread's CPU time needs Linux")
	}
	dir := t.TempDir()
	mbps, cpuPerGB, err := storeThroughput(dir, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if mbps <= 0 || cpuPerGB <= 0 {
		t.Fatalf("%.1f MB/s at %.3f CPU s/GB: want both above 0", mbps, cpuPerGB)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Fatalf("left %v behind (%v)", left, err)
	}
}
