package network

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Request frames of the API keys in Config.ReuseBodyAPIKeys are read into
// buffers from size-classed pools instead of fresh allocations: under produce
// load, zeroing a new frame buffer per request was 14% of broker CPU and
// 99.7% of the bytes allocated. A frame gets the smallest class that holds
// it; the classes are the powers of two from 1 KiB and the sizes halfway
// between (1 KiB, 1.5 KiB, 2 KiB, 3 KiB, 4 KiB, ...), so a buffer is at most
// a third larger than its frame (with powers of two alone, ten producers'
// 12 MB requests held 16 MiB each). Frames above frameBufferPooledBytesMax
// are allocated and left to the garbage collector, so a pool never holds a
// buffer larger than that.
//
// Buffers of frameBufferMappedBytesMin and more are anonymous memory
// mappings, outside the Go heap (frame_buffers_linux.go; elsewhere they are
// heap allocations like the smaller ones). On the heap, the buffers in use
// and free counted as live memory, and the garbage collector let the heap
// grow to twice that before collecting (GOGC=100): under produce load the
// process's peak RSS was about twice the frame memory it needed. Mapped
// buffers also let a free buffer give its pages back to the OS while the
// pool keeps it: its memory is then resident again only as the next frame
// is read into it, in huge pages for buffers of 2 MiB and more
// (frame_buffers_linux.go), and a frame takes a resident free buffer of a
// slightly larger class before a released one of its own
// (frameBufferClassesUp).
//
// The free buffers are kept in bounded lists, not a sync.Pool: a sync.Pool
// is emptied by every two garbage collections, and under produce load, where
// the frames are most of what is allocated, that was every few requests, so
// half the frames missed the pool (1.7 GB allocated in 10 s of 430 MB/s);
// and at 800 MB/s a single producer's requests outgrew the largest class.
// A class keeps at most frameBuffersFreePerClassMax resident free buffers,
// and all classes frameBuffersFreeBytesMax bytes of them; a free buffer
// that has not been reused for frameBuffersIdleMax is trimmed, as is one
// released beyond those limits: a mapped buffer gives its pages back and
// waits, at most frameBuffersReleasedPerClassMax a class, for its class's
// next frame; beyond that it is unmapped, and a heap buffer goes to the
// garbage collector. Trimming runs on a timer, not in the request path.
const (
	frameBufferClassMinShift = 10 // 1 KiB
	frameBufferClassMaxShift = 24 // 16 MiB: a producer's request of 12 partitions at 1 MB (batch.size) each fits
	// frameBufferPooledBytesMax is the largest frame read into a pooled buffer.
	frameBufferPooledBytesMax = 1 << frameBufferClassMaxShift
	frameBufferClasses        = 2*(frameBufferClassMaxShift-frameBufferClassMinShift) + 1

	// frameBufferMappedBytesMin is the smallest class whose buffers are
	// mapped: a mapping is a system call and whole pages, not worth it for
	// the frames of small requests.
	frameBufferMappedBytesMin = 64 << 10

	frameBuffersFreePerClassMax = 16
	// frameBufferClassesUp is how many classes above its own a frame may
	// take a resident free buffer from (at most twice its class's size)
	// before it takes a released one of its own class, whose pages fault
	// in again as the frame is read. A producer's requests vary in size:
	// under workload a of the bench tool they spread over the 6, 8 and
	// 12 MiB classes, and with each class served only by its own free
	// buffers 60-90% of those frames found none resident, so the broker
	// faulted in (and the kernel zeroed) 73% of the pages it read
	// requests into.
	frameBufferClassesUp = 2
	// frameBuffersFreeBytesMax holds one free frame of a producer at full
	// speed (12 MiB class): under workload g of the bench tool, 32 MiB
	// measured 157-158 MB of peak RSS and 16 MiB 131-142, with no change
	// in throughput or CPU beyond the noise.
	frameBuffersFreeBytesMax        = 16 << 20
	frameBuffersIdleMax             = time.Second
	frameBuffersReleasedPerClassMax = 64
)

// frameBuffer is a pooled frame buffer; pools hold pointers so that Put does
// not allocate.
type frameBuffer struct {
	bytes []byte
	class int
	// readAhead is the share of the read-ahead budget the frame holds
	// (read_ahead.go), given back when the buffer is.
	readAhead int64
	// mapped is set when bytes is a memory mapping (frame_buffers_linux.go).
	// A mapped buffer never reachable again without having been put back
	// (a request never answered, a handler bug) is recycled by cleanup.
	mapped  bool
	cleanup runtime.Cleanup
	// freedAt is when the buffer was last put back, in nanoseconds since
	// frameBuffersEpoch; guarded by its class's pool lock while free.
	freedAt int64
}

// frameBufferPool holds the free buffers of one class.
type frameBufferPool struct {
	mu struct {
		sync.Mutex
		// resident are free buffers whose memory is resident, oldest first
		// (freedAt does not decrease along it): the newest is reused first,
		// the oldest trimmed first.
		// Invariant: len(resident) <= frameBuffersFreePerClassMax.
		resident []*frameBuffer
		// released are free mapped buffers whose pages went back to the OS.
		// Invariant: len(released) <= frameBuffersReleasedPerClassMax.
		released []*frameBuffer
	}
}

var frameBufferPools [frameBufferClasses]frameBufferPool

// frameBuffersFreeBytes is the size of every resident free buffer, or one
// being put there. It passes frameBuffersFreeBytesMax only for a moment,
// between a putFrameBuffer's reservation and its undoing.
var frameBuffersFreeBytes atomic.Int64

// frameBuffersEpoch makes freedAt monotonic.
var frameBuffersEpoch = time.Now()

// frameBuffersReleased counts putFrameBuffer calls under the invariants tag,
// for tests.
var frameBuffersReleased atomic.Uint64

// frameBufferClass is the index of the smallest class holding size bytes;
// size must be at most frameBufferPooledBytesMax.
func frameBufferClass(size int) int {
	if size <= 1<<frameBufferClassMinShift {
		return 0
	}
	// 2^(b-1) < size <= 2^b: the class of 2^b, or the one of 1.5 * 2^(b-1)
	// just below it.
	b := bits.Len(uint(size - 1))
	class := 2 * (b - frameBufferClassMinShift)
	if size <= 3<<(b-2) {
		class--
	}
	return class
}

// frameBufferClassBytes is the buffer size of class.
func frameBufferClassBytes(class int) int {
	if class%2 == 0 {
		return 1 << (frameBufferClassMinShift + class/2)
	}
	return 3 << (frameBufferClassMinShift + class/2 - 1)
}

// getFrameBuffer returns a buffer of at least size bytes whose contents are
// whatever its last user left, or zeros (the caller overwrites them), or nil
// when size is above frameBufferPooledBytesMax.
func getFrameBuffer(size int) *frameBuffer {
	if size > frameBufferPooledBytesMax {
		return nil
	}
	class := frameBufferClass(size)
	for larger := class; larger <= min(class+frameBufferClassesUp, frameBufferClasses-1); larger++ {
		if buffer := takeResidentFrameBuffer(larger); buffer != nil {
			return buffer
		}
	}
	pool := &frameBufferPools[class]
	pool.mu.Lock()
	if n := len(pool.mu.released); n > 0 {
		buffer := pool.mu.released[n-1]
		pool.mu.released[n-1] = nil
		pool.mu.released = pool.mu.released[:n-1]
		pool.mu.Unlock()
		return buffer
	}
	pool.mu.Unlock()
	return newFrameBuffer(class)
}

// takeResidentFrameBuffer takes the newest resident free buffer of class,
// or returns nil.
func takeResidentFrameBuffer(class int) *frameBuffer {
	pool := &frameBufferPools[class]
	pool.mu.Lock()
	n := len(pool.mu.resident)
	if n == 0 {
		pool.mu.Unlock()
		return nil
	}
	buffer := pool.mu.resident[n-1]
	pool.mu.resident[n-1] = nil
	pool.mu.resident = pool.mu.resident[:n-1]
	pool.mu.Unlock()
	frameBuffersFreeBytes.Add(-int64(len(buffer.bytes)))
	return buffer
}

// newFrameBuffer allocates a buffer of class: mapped when the class is
// large enough and the mapping succeeds, on the heap otherwise.
func newFrameBuffer(class int) *frameBuffer {
	size := frameBufferClassBytes(class)
	if size >= frameBufferMappedBytesMin {
		if mapping, err := mapFrameBuffer(size); err == nil {
			return newMappedFrameBuffer(mapping, class)
		}
	}
	return &frameBuffer{bytes: make([]byte, size), class: class}
}

func newMappedFrameBuffer(mapping []byte, class int) *frameBuffer {
	buffer := &frameBuffer{bytes: mapping, class: class, mapped: true}
	buffer.cleanup = runtime.AddCleanup(buffer, recycleLostMapping, lostMapping{mapping, class})
	return buffer
}

// lostMapping is the mapping of a buffer that became unreachable while
// handed out.
type lostMapping struct {
	bytes []byte
	class int
}

// recycleLostMapping gives a lost buffer's pages back and keeps its mapping
// for its class. Something may still alias the mapping (the buffer was lost
// by a bug, not put back), so it is not unmapped while there is room.
func recycleLostMapping(lost lostMapping) {
	releaseFrameBufferPages(lost.bytes)
	keepReleased(newMappedFrameBuffer(lost.bytes, lost.class))
}

// putFrameBuffer returns a buffer to its pool. Nothing may read or write it
// afterwards; under the invariants tag it is poisoned so that a reader that
// broke that rule sees garbage (and tests that check contents fail).
func putFrameBuffer(buffer *frameBuffer) {
	if buffer.readAhead > 0 {
		releaseReadAhead(buffer.readAhead)
		buffer.readAhead = 0
	}
	if invariantsEnabled {
		// The poisoning writes also let the race detector report a handler
		// that reads a body after its release.
		poisonFrameBuffer(buffer.bytes)
		frameBuffersReleased.Add(1)
	}
	now := int64(time.Since(frameBuffersEpoch))
	size := int64(len(buffer.bytes))
	pool := &frameBufferPools[buffer.class]
	kept := false
	if frameBuffersFreeBytes.Add(size) <= frameBuffersFreeBytesMax {
		pool.mu.Lock()
		if len(pool.mu.resident) < frameBuffersFreePerClassMax {
			buffer.freedAt = now
			pool.mu.resident = append(pool.mu.resident, buffer)
			kept = true
		}
		pool.mu.Unlock()
	}
	if !kept {
		frameBuffersFreeBytes.Add(-size)
		trimFrameBuffer(buffer)
		return
	}
	if frameBuffersTrimArmed.CompareAndSwap(false, true) {
		time.AfterFunc(frameBuffersIdleMax, trimIdleFrameBuffersLater)
	}
}

// frameBuffersTrimArmed is set while a trim of idle free buffers is
// scheduled: one at a time, armed by a put and rearmed while resident free
// buffers remain, so a broker gone idle gives its free buffers' memory back
// too, and no request waits for the system calls.
var frameBuffersTrimArmed atomic.Bool

func trimIdleFrameBuffersLater() {
	remaining := trimIdleFrameBuffers(int64(time.Since(frameBuffersEpoch)))
	frameBuffersTrimArmed.Store(false)
	if remaining > 0 && frameBuffersTrimArmed.CompareAndSwap(false, true) {
		time.AfterFunc(frameBuffersIdleMax, trimIdleFrameBuffersLater)
	}
}

// trimIdleFrameBuffers trims the free buffers not reused for
// frameBuffersIdleMax before now (nanoseconds since frameBuffersEpoch),
// and returns how many resident free buffers remain.
func trimIdleFrameBuffers(now int64) (remaining int) {
	var idle []*frameBuffer
	for class := range frameBufferPools {
		pool := &frameBufferPools[class]
		pool.mu.Lock()
		n := 0
		for n < len(pool.mu.resident) && now-pool.mu.resident[n].freedAt > int64(frameBuffersIdleMax) {
			n++
		}
		if n > 0 {
			idle = append(idle, pool.mu.resident[:n]...)
			kept := copy(pool.mu.resident, pool.mu.resident[n:])
			clear(pool.mu.resident[kept:])
			pool.mu.resident = pool.mu.resident[:kept]
		}
		remaining += len(pool.mu.resident)
		pool.mu.Unlock()
	}
	for _, buffer := range idle {
		frameBuffersFreeBytes.Add(-int64(len(buffer.bytes)))
		trimFrameBuffer(buffer)
	}
	return remaining
}

// trimFrameBuffer gives the memory of a free buffer back: a mapped one's
// pages, keeping the mapping for its class while there is room, else the
// whole buffer.
func trimFrameBuffer(buffer *frameBuffer) {
	if !buffer.mapped {
		return // to the garbage collector
	}
	releaseFrameBufferPages(buffer.bytes)
	keepReleased(buffer)
}

// keepReleased keeps a mapped buffer whose pages were given back on its
// class's released list, or unmaps it when the list is full.
func keepReleased(buffer *frameBuffer) {
	pool := &frameBufferPools[buffer.class]
	pool.mu.Lock()
	kept := len(pool.mu.released) < frameBuffersReleasedPerClassMax
	if kept {
		pool.mu.released = append(pool.mu.released, buffer)
	}
	pool.mu.Unlock()
	if !kept {
		discardFrameBuffer(buffer)
	}
}

// discardFrameBuffer unmaps a free mapped buffer nothing refers to.
func discardFrameBuffer(buffer *frameBuffer) {
	buffer.cleanup.Stop()
	unmapFrameBuffer(buffer.bytes)
	buffer.bytes = nil
}

// frameBufferPoison fills released buffers under the invariants tag.
const frameBufferPoison = 0xDB

func poisonFrameBuffer(b []byte) {
	for i := range b {
		b[i] = frameBufferPoison
	}
}
