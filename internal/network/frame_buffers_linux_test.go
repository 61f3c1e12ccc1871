package network

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the pages of mapping in memory (mincore).
func residentPages(t *testing.T, mapping []byte) int {
	t.Helper()
	pageBytes := unix.Getpagesize()
	vector := make([]byte, (len(mapping)+pageBytes-1)/pageBytes)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(mapping))),
		uintptr(len(mapping)), uintptr(unsafe.Pointer(unsafe.SliceData(vector))))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	resident := 0
	for _, v := range vector {
		resident += int(v & 1)
	}
	return resident
}

// TestIdleFrameBufferGivesPagesBack: a large buffer is a mapping whose pages
// are resident once written; left free for longer than frameBuffersIdleMax,
// a trim gives its pages back while the pool keeps the mapping, and the
// class's next frame reuses it, reading zeros until written.
func TestIdleFrameBufferGivesPagesBack(t *testing.T) {
	drainFreeFrameBuffers()
	t.Cleanup(drainFreeFrameBuffers)
	const size = 1 << 20
	buffer := getFrameBuffer(size)
	if !buffer.mapped {
		t.Fatal("a 1 MiB frame buffer is not mapped")
	}
	for i := range buffer.bytes {
		buffer.bytes[i] = 0x5A
	}
	pages := len(buffer.bytes) / unix.Getpagesize()
	if got := residentPages(t, buffer.bytes); got != pages {
		t.Fatalf("%d of %d pages resident after writing them all", got, pages)
	}
	putFrameBuffer(buffer)
	trimIdleFrameBuffers(int64(time.Since(frameBuffersEpoch)) + int64(frameBuffersIdleMax)/2)
	if resident, released := freeFrameBuffers(buffer.class); resident != 1 || released != 0 {
		t.Fatalf("a buffer free for less than the idle limit was trimmed: %d resident, %d released", resident, released)
	}
	trimIdleFrameBuffers(int64(time.Since(frameBuffersEpoch)) + 2*int64(frameBuffersIdleMax))
	if resident, released := freeFrameBuffers(buffer.class); resident != 0 || released != 1 {
		t.Fatalf("after the idle limit: %d resident, %d released free buffers, want 0 and 1", resident, released)
	}
	if got := residentPages(t, buffer.bytes); got != 0 {
		t.Fatalf("%d pages still resident after the trim", got)
	}
	if frameBuffersFreeBytes.Load() != 0 {
		t.Fatalf("%d bytes counted as resident and free", frameBuffersFreeBytes.Load())
	}
	again := getFrameBuffer(size)
	if again != buffer {
		t.Fatal("the trimmed buffer was not reused")
	}
	for i, b := range again.bytes {
		if b != 0 {
			t.Fatalf("byte %d of a reused trimmed buffer is %#x, want 0", i, b)
		}
	}
	putFrameBuffer(again)
}

// TestLostFrameBufferRecycled: a mapped buffer that becomes unreachable
// while handed out (a request never answered) is not leaked: its mapping
// returns to its class with its pages given back.
func TestLostFrameBufferRecycled(t *testing.T) {
	drainFreeFrameBuffers()
	t.Cleanup(drainFreeFrameBuffers)
	buffer := getFrameBuffer(256 << 10)
	class := buffer.class
	address := uintptr(unsafe.Pointer(unsafe.SliceData(buffer.bytes)))
	buffer.bytes[0] = 1
	buffer = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		pool := &frameBufferPools[class]
		pool.mu.Lock()
		found := false
		for _, b := range pool.mu.released {
			found = found || uintptr(unsafe.Pointer(unsafe.SliceData(b.bytes))) == address
		}
		pool.mu.Unlock()
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a lost mapped buffer was not recycled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	recycled := getFrameBuffer(256 << 10)
	if recycled.bytes[0] != 0 {
		t.Fatal("a recycled buffer kept its pages")
	}
	putFrameBuffer(recycled)
}

// TestIdleFrameBufferTrimmedByTimer: with no further frames, a free buffer
// still gives its pages back once idle, by the trim a put schedules.
func TestIdleFrameBufferTrimmedByTimer(t *testing.T) {
	drainFreeFrameBuffers()
	t.Cleanup(drainFreeFrameBuffers)
	buffer := getFrameBuffer(1 << 20)
	for i := range buffer.bytes {
		buffer.bytes[i] = 1
	}
	putFrameBuffer(buffer)
	deadline := time.Now().Add(10 * frameBuffersIdleMax)
	for {
		if resident, released := freeFrameBuffers(buffer.class); resident == 0 && released == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle free buffer kept its pages")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := residentPages(t, buffer.bytes); got != 0 {
		t.Fatalf("%d pages resident after the timer's trim", got)
	}
}

// TestLargeFrameBufferUsesHugePages: a buffer of a huge page or more starts
// on a huge-page boundary and, where transparent huge pages are enabled for
// mappings that ask (always or madvise), its first write makes a whole huge
// page resident, not one 4 KiB page.
func TestLargeFrameBufferUsesHugePages(t *testing.T) {
	mapping, err := mapFrameBuffer(3 * hugePageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFrameBuffer(mapping)
	if addr := uintptr(unsafe.Pointer(unsafe.SliceData(mapping))); addr%hugePageBytes != 0 {
		t.Fatalf("mapping at %#x is not huge-page aligned", addr)
	}
	if len(mapping) != 3*hugePageBytes {
		t.Fatalf("mapping of %d bytes, want %d", len(mapping), 3*hugePageBytes)
	}
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(enabled), "[never]") {
		t.Skipf("transparent huge pages are off here (%q, %v)", enabled, err)
	}
	fallbacks := thpFaultFallbacks(t)
	mapping[hugePageBytes] = 1
	pages := hugePageBytes / unix.Getpagesize()
	if got := residentPages(t, mapping[hugePageBytes:2*hugePageBytes]); got != pages {
		// The kernel falls back to small pages when it has no free huge
		// page, and counts that; other processes' faults may be counted
		// too, so a fallback seen skips rather than passes.
		if thpFaultFallbacks(t) > fallbacks {
			t.Skipf("one write made %d of %d pages resident: the kernel had no huge page", got, pages)
		}
		t.Fatalf("one write made %d of %d pages resident, with no huge-page fallback counted: the mapping did not ask for huge pages", got, pages)
	}
	if got := residentPages(t, mapping[:hugePageBytes]); got != 0 {
		t.Fatalf("%d pages of the untouched first huge page are resident", got)
	}
}

// thpFaultFallbacks is the kernel's count of huge-page faults that fell
// back to small pages (thp_fault_fallback in /proc/vmstat).
func thpFaultFallbacks(t *testing.T) int64 {
	t.Helper()
	vmstat, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		t.Skipf("no /proc/vmstat: %v", err)
	}
	for _, line := range strings.Split(string(vmstat), "\n") {
		if rest, ok := strings.CutPrefix(line, "thp_fault_fallback "); ok {
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("/proc/vmstat has no thp_fault_fallback")
	return 0
}
