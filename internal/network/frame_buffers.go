package network

import (
	"math/bits"
	"sync/atomic"
)

// Request frames of the API keys in Config.ReuseBodyAPIKeys are read into
// buffers from size-classed pools instead of fresh allocations: under produce
// load, zeroing a new frame buffer per request was 14% of broker CPU and
// 99.7% of the bytes allocated. A frame gets the smallest class that holds
// it; the classes are the powers of two from 1 KiB and the sizes halfway
// between (1 KiB, 1.5 KiB, 2 KiB, 3 KiB, 4 KiB, ...), so a buffer is at most
// a third larger than its frame (with powers of two alone, ten producers'
// 12 MB requests held 16 MiB each). Frames above frameBufferPooledBytesMax
// are allocated and
// left to the garbage collector, so a pool never holds a buffer larger than
// that.
//
// The free buffers are kept in bounded lists, not a sync.Pool: a sync.Pool
// is emptied by every two garbage collections, and under produce load, where
// the frames are most of what is allocated, that was every few requests, so
// half the frames missed the pool (1.7 GB allocated in 10 s of 430 MB/s);
// and at 800 MB/s a single producer's requests outgrew the largest class.
// At most frameBuffersFreePerClassMax buffers per class and
// frameBuffersFreeBytesMax bytes in all stay free; a buffer released beyond
// that goes to the garbage collector.
const (
	frameBufferClassMinShift = 10 // 1 KiB
	frameBufferClassMaxShift = 24 // 16 MiB: a producer's request of 12 partitions at 1 MB (batch.size) each fits
	// frameBufferPooledBytesMax is the largest frame read into a pooled buffer.
	frameBufferPooledBytesMax = 1 << frameBufferClassMaxShift
	frameBufferClasses        = 2*(frameBufferClassMaxShift-frameBufferClassMinShift) + 1

	frameBuffersFreePerClassMax = 16
	frameBuffersFreeBytesMax    = 64 << 20
)

// frameBuffer is a pooled frame buffer; pools hold pointers so that Put does
// not allocate.
type frameBuffer struct {
	bytes []byte
	class int
	// readAhead is the share of the read-ahead budget the frame holds
	// (read_ahead.go), given back when the buffer is.
	readAhead int64
}

// frameBuffersFree are the free buffers of each class.
var frameBuffersFree = func() (free [frameBufferClasses]chan *frameBuffer) {
	for class := range free {
		free[class] = make(chan *frameBuffer, frameBuffersFreePerClassMax)
	}
	return free
}()

// frameBuffersFreeBytes is the size of every buffer in frameBuffersFree, or
// being put there. It passes frameBuffersFreeBytesMax only for a moment,
// between a putFrameBuffer's reservation and its undoing.
var frameBuffersFreeBytes atomic.Int64

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
// whatever its last user left (the caller overwrites them), or nil when size
// is above frameBufferPooledBytesMax.
func getFrameBuffer(size int) *frameBuffer {
	if size > frameBufferPooledBytesMax {
		return nil
	}
	class := frameBufferClass(size)
	select {
	case pooled := <-frameBuffersFree[class]:
		frameBuffersFreeBytes.Add(-int64(len(pooled.bytes)))
		return pooled
	default:
	}
	return &frameBuffer{bytes: make([]byte, frameBufferClassBytes(class)), class: class}
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
	size := int64(len(buffer.bytes))
	if frameBuffersFreeBytes.Add(size) > frameBuffersFreeBytesMax {
		frameBuffersFreeBytes.Add(-size)
		return // to the garbage collector
	}
	select {
	case frameBuffersFree[buffer.class] <- buffer:
	default:
		frameBuffersFreeBytes.Add(-size)
	}
}

// frameBufferPoison fills released buffers under the invariants tag.
const frameBufferPoison = 0xDB

func poisonFrameBuffer(b []byte) {
	for i := range b {
		b[i] = frameBufferPoison
	}
}
